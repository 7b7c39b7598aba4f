// ppsearch probe SPEC [-o FILE]: microbenchmarks on the spec's nodes, through
// its launcher, container and sudo rules, with the PyTorch an SGLang node
// has: the model's own GEMMs, DRAM, the tensor burst after idle, the CUDA
// graph launch floor, node-local collectives and the link between nodes.
// Prints each node's figures beside the profile's; -o writes them as a
// hardware profile overlay (base = the spec's profile) that every command
// takes as cluster.hardware.

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/spec_options.h"
#include "cost/gemm.h"
#include "inputs/search_inputs.h"
#include "launch/launcher.h"
#include "ppsearch_version.h"
#include "probe/figures.h"
#include "probe/overlay.h"
#include "probe/probe.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::cli {
namespace {

// SIGINT or SIGTERM while the nodes run: the probe stops them and exits as
// interrupted (3), rather than die and leave their scripts running.
std::atomic<bool> g_probe_interrupted{false};
std::atomic<int> g_probe_signal{0};

void OnProbeSignal(int sig) {
  g_probe_signal = sig;
  g_probe_interrupted = true;
}

// The handlers while the nodes run, the defaults again after.
class ProbeSignals {
 public:
  ProbeSignals() {
    std::signal(SIGINT, OnProbeSignal);
    std::signal(SIGTERM, OnProbeSignal);
  }
  ~ProbeSignals() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  ProbeSignals(const ProbeSignals&) = delete;
  ProbeSignals& operator=(const ProbeSignals&) = delete;
};

struct ProbeCliOptions {
  SpecOptions spec;
  std::string output;
  probe::ProbeOptions probe;
  int64_t tokens = 0;
  int shapes = 8;
  double seconds = 0.5;
  int64_t largest_message = int64_t{256} << 20;
  bool quick = false;
  bool cpu = false;
  bool no_cross = false;
};

std::string NowUtc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string Opt(const std::optional<double>& v, const char* format = "{:.1f}") {
  return v ? fmt::format(fmt::runtime(format), *v) : "-";
}

// The tensor budget (cost/tensor_burst.h) the median node's series show.
std::string BudgetLine(const probe::BurstFigure& b) {
  std::string line = "tensor budget (median node): ";
  if (b.burst_tflops <= 0) {
    line += fmt::format("no burst in {:.0f} ms of calls", b.series_ms);
  } else {
    line += fmt::format("{:.1f} TFLOPS for {:.2f} ms, ", b.burst_tflops, b.window_ms);
    line += b.payback_tflops > 0 ? fmt::format("then {:.1f} for {:.2f} ms (payback), ",
                                               b.payback_tflops, b.payback_ms)
                                 : "no payback, ";
    line += fmt::format("{:.1f} sustained", b.sustained_tflops);
    if (b.refill_ratio)
      line += fmt::format("; refilled {}{:.3g} ms per ms idle", b.refill_at_least ? ">= " : "",
                          *b.refill_ratio);
  }
  return line + fmt::format("; {} series after gaps up to {:.1f} ms", b.gaps, b.longest_gap_ms);
}

void PrintFigures(const probe::ProbeFigures& f, const std::vector<probe::NodeResult>& nodes,
                  const hardware::HardwareProfile& base, const probe::ProbeRun& run) {
  const probe::NodeResult& first = nodes.front();
  std::cout << fmt::format("# device {}{}, torch {}{}\n", first.device_name,
                           first.on_gpu() ? fmt::format(" x {}", first.device_count) : "",
                           first.torch, first.cuda.empty() ? "" : ", CUDA " + first.cuda);
  if (!first.on_gpu())
    std::cout << "# measured on the CPU: a test of the probe, not a GPU's figures\n";
  std::cout << fmt::format("{:<12} {:>12} {:>11} {:>14} {:>10} {:>9} {:>11}\n", "node",
                           "bf16 TFLOPS", "copy GB/s", "burst TFLOPS", "window ms", "launch us",
                           "p2p GB/s");
  auto row = [](const std::string& name, std::optional<double> bf16, std::optional<double> copy,
                const std::optional<probe::BurstFigure>& burst, std::optional<double> launch,
                std::optional<double> p2p) {
    std::cout << fmt::format(
        "{:<12} {:>12} {:>11} {:>14} {:>10} {:>9} {:>11}\n", name, Opt(bf16), Opt(copy),
        burst && burst->burst_tflops > 0 ? fmt::format("{:.1f}", burst->burst_tflops) : "none",
        burst && burst->burst_tflops > 0 ? fmt::format("{:.2f}", burst->window_ms) : "-",
        Opt(launch, "{:.2f}"), Opt(p2p));
  };
  for (const probe::NodeFigures& n : f.nodes)
    row(n.node, n.bf16_tflops, n.copy_gbps, n.burst, n.launch_us, n.p2p_gbps);
  if (f.nodes.size() > 1)
    row("median", f.bf16_tflops, f.copy_gbps, f.burst, f.launch_us, f.p2p_gbps);
  std::cout << fmt::format(
      "{:<12} {:>12.1f} {:>11} {:>14} {:>10} {:>9} {:>11.1f}\n", "profile " + base.name,
      cost::ModelBf16Tflops(base), fmt::format("{:.0f}*", base.memory_bw_gbps),
      base.TensorBurstRatio() > 1 ? fmt::format("{:.1f}", base.burst_bf16_tflops) : "none",
      base.TensorBurstRatio() > 1 ? fmt::format("{:.2f}", base.burst_window_ms) : "-", "-",
      base.p2p_gbps);
  std::cout << "  (* the profile's DRAM figure is the datasheet rate; a copy reaches less)\n";
  if (f.burst) std::cout << BudgetLine(*f.burst) << "\n";
  if (f.bf16_spread > 0.05)
    std::cout << fmt::format(
        "warning: the nodes' bf16 rates differ by {}: a slow node paces "
        "every collective\n",
        FormatPercent(f.bf16_spread, 1));

  std::cout << "\nGEMM shapes (" << f.nodes.front().node
            << "): measured, the GEMM model's efficiency, the rate it implies\n";
  std::cout << fmt::format("{:>7} {:>7} {:>7} {:>10} {:>6} {:>9}  {}\n", "m", "n", "k", "TFLOPS",
                           "eff", "implied", "where");
  for (const probe::ShapeRate& s : f.nodes.front().shapes)
    std::cout << fmt::format("{:>7} {:>7} {:>7} {:>10.1f} {:>6.2f} {:>9}  {}\n", s.shape.m,
                             s.shape.n, s.shape.k, s.measured_tflops, s.efficiency,
                             s.memory_bound ? "(memory)" : fmt::format("{:.1f}", s.implied_tflops),
                             s.shape.what);
  if (!f.collectives.empty()) {
    std::cout << "\nnode-local collectives (median over nodes; nccl-tests bus bandwidth)\n";
    std::cout << fmt::format("{:<15} {:>6} {:>12} {:>11} {:>16}\n", "op", "ranks", "busbw GB/s",
                             "latency us", "profile GB/s, us");
    for (const probe::CollectiveFigure& c : f.collectives) {
      std::string profile = "-";
      if (c.op == "all_reduce" || c.op == "all_to_all") {
        const hardware::IntraCollective& p = c.op == "all_reduce"
                                                 ? base.IntraFor(c.group_size)
                                                 : base.IntraAllToAllFor(c.group_size);
        profile = fmt::format("{:.0f}, {:.1f}", p.busbw_gbps, p.latency_us);
      }
      std::cout << fmt::format("{:<15} {:>6} {:>12.1f} {:>11.1f} {:>16}\n", c.op, c.group_size,
                               c.busbw_gbps, c.latency_us, profile);
    }
  }
  if (f.nic_gbps)
    std::cout << fmt::format(
        "\nbetween nodes: {:.1f} GB/s one way, {:.1f} us (profile {:.1f} GB/s per GPU, {:.1f} "
        "us)\n",
        *f.nic_gbps, *f.inter_latency_us, base.nic_gbps_per_gpu, base.inter_latency_us);
  if (!run.cross_failure.empty())
    std::cout << "\nbetween nodes: not measured: " << run.cross_failure << "\n";
  for (const probe::NodeResult& n : nodes)
    for (const probe::Skipped& s : n.skipped)
      std::cout << fmt::format("skipped on {}: {}: {}\n", n.node, s.what, s.why);
}

// The command as given, every option with its words (long names, in the
// order they are declared), for the overlay's header: run again, it
// measures the same. A flag given twice is written once.
std::vector<std::string> GivenArguments(const CLI::App& sub) {
  std::vector<std::string> argv = {"ppsearch", "probe"};
  for (const CLI::Option* o : sub.get_options()) {
    if (o->count() == 0) continue;
    if (o->get_positional()) {
      for (const std::string& word : o->results()) argv.push_back(word);
    } else if (o->get_expected_max() == 0) {
      argv.push_back(o->get_name());
    } else {
      for (const std::string& word : o->results()) argv.insert(argv.end(), {o->get_name(), word});
    }
  }
  return argv;
}

Result<ExitCode> RunProbeCommand(const ProbeCliOptions& opts, const std::string& command_line) {
  PPS_ASSIGN_OR_RETURN(const spec::Spec spec, LoadSpec(opts.spec));
  PPS_ASSIGN_OR_RETURN(inputs::SearchInputs in, inputs::LoadSearchInputs(spec));
  if (!opts.output.empty()) {
    PPS_RETURN_IF_ERROR(CheckOutputPath(
        "-o", opts.output,
        {{"the spec", opts.spec.spec_path}, {"the hardware profile", in.hardware.source_path}}));
    if (std::filesystem::path(opts.output).extension() != ".toml")
      return MakeError("-o " + opts.output + ": expected a .toml file (a hardware profile)");
  }
  int64_t tokens = opts.tokens;
  if (tokens <= 0)
    tokens = in.plan.layouts.empty() ? 8192 : in.plan.layouts.front().engine.PrefillBatchTokens();
  std::vector<spec::LayoutSpec> layouts;
  for (const plan::LayoutPlan& l : in.plan.layouts) layouts.push_back(l.layout);

  probe::ProbeRequest request;
  request.gemm_shapes =
      probe::ModelGemmShapes(in.model, layouts, tokens, static_cast<size_t>(opts.shapes));
  request.seconds = opts.seconds;
  request.cpu = opts.cpu;
  request.group_sizes = probe::GroupSizes(in.hardware.gpus_per_node);
  request.collective_bytes = probe::MessageSizes(4096, opts.largest_message);
  if (opts.quick) {
    // A check that the probe runs end to end, in seconds: small buffers,
    // short timings, one group of two.
    request.idle_s = 0.2;
    request.burst_s = 0.1;
    request.refill_gaps_s = {0.002};
    request.refill_s = 0.05;
    request.copy_bytes = int64_t{4} << 20;
    request.collective_seconds = 0.02;
    request.group_sizes = {2};
    request.collective_bytes = {4096, int64_t{1} << 20};
    request.max_iterations = 200;
  }

  const std::string control_dir = spec.cluster.launcher == "ssh" ? launch::SshControlDir() : "";
  PPS_ASSIGN_OR_RETURN(std::unique_ptr<launch::Launcher> launcher,
                       launch::MakeLauncher(spec, control_dir, spec.lifecycle.host_timeout_s));
  if (!control_dir.empty() && ::mkdir(control_dir.c_str(), 0700) != 0 && errno != EEXIST)
    return MakeError("cannot create " + control_dir + " for ssh's control sockets");
  if (spec.cluster.launcher == "slurm" && !launch::SlurmAllocationProblem().empty())
    return MakeError(launch::SlurmAllocationProblem());
  PPS_RETURN_IF_ERROR(launch::CheckSudo(*launcher, spec, spec.lifecycle.host_timeout_s));
  probe::ProbeOptions options = opts.probe;
  if (options.port == 0) options.port = spec.cluster.dist_init_port;
  options.cross = !opts.no_cross;
  std::cout << fmt::format(
      "# ppsearch probe {}: {} node{} ({} launcher), {}'s GEMMs at {} tokens\n",
      opts.spec.spec_path, spec.cluster.hosts.size(), spec.cluster.hosts.size() == 1 ? "" : "s",
      spec.cluster.launcher, in.model.name, FormatThousands(tokens));
  options.interrupted = &g_probe_interrupted;
  Result<probe::ProbeRun> run = [&] {
    const ProbeSignals signals;
    return probe::RunProbe(spec, *launcher, request, options, std::cerr);
  }();
  launcher->Close();
  launch::RemoveSshControlDir(control_dir);
  if (!run.ok() && g_probe_interrupted)
    return MakeError(fmt::format("probe interrupted by {} ({}): the nodes' probes were stopped; "
                                 "nothing was written{}",
                                 launch::SignalName(g_probe_signal), run.error().message,
                                 opts.output.empty() ? "" : " (-o " + opts.output + ")"),
                     ErrorKind::kIncomplete);
  if (!run.ok()) return run.error();
  const probe::ProbeFigures figures = probe::Summarize(run->nodes, run->cross, in.hardware);
  PrintFigures(figures, run->nodes, in.hardware, *run);
  if (!opts.output.empty()) {
    probe::Provenance p;
    p.command = command_line;
    p.date_utc = NowUtc();
    p.version = fmt::format("ppsearch {} {}", PPSEARCH_VERSION, PPSEARCH_GIT_SHA);
    p.model_name = in.model.name;
    p.tokens = tokens;
    const std::string name = std::filesystem::path(opts.output).stem().string();
    // A shipped profile by its name (what the spec wrote), a profile file by
    // its absolute path.
    const std::string base_ref =
        spec.cluster.hardware == in.hardware.name
            ? in.hardware.name
            : std::filesystem::absolute(in.hardware.source_path).lexically_normal().string();
    PPS_RETURN_IF_ERROR(WriteFileAtomic(
        opts.output, probe::OverlayToml(name, base_ref, in.hardware, figures, run->nodes, p)));
    std::cout << fmt::format(
        "\nwrote {}: a hardware profile on {}; use it with --set "
        "cluster.hardware={}\n",
        opts.output, in.hardware.name, opts.output);
  }
  // The nodes' figures are kept and written; the missing link is still a failure.
  return run->cross_failure.empty() ? kExitOk : kExitFailure;
}

}  // namespace

Runner AddProbeCommand(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "probe",
      "Measure the spec's nodes with PyTorch (GEMMs at the model's shapes, DRAM, the burst after "
      "idle, launch floor, collectives, the link between nodes) and write a hardware profile");
  auto opts = std::make_shared<ProbeCliOptions>();
  AddSpecOptions(sub, opts->spec);
  sub->add_option("-o,--output", opts->output,
                  "Write the figures as a hardware profile overlay (.toml, base = the spec's "
                  "profile)");
  sub->add_option("--python", opts->probe.python,
                  "Python with PyTorch on the nodes (inside the spec's container image)")
      ->default_val("python3");
  sub->add_option("--tokens", opts->tokens,
                  "GEMM rows (tokens per forward); default: the layout's prefill chunk")
      ->check(CLI::PositiveNumber);
  sub->add_option("--shapes", opts->shapes, "How many of the model's largest GEMMs to time")
      ->default_val(8)
      ->check(CLI::Range(1, 64));
  sub->add_option("--seconds", opts->seconds, "Timed seconds per GEMM shape and for the copy")
      ->default_val(0.5)
      ->check(CLI::Range(0.01, 60.0));
  sub->add_option("--largest-message", opts->largest_message,
                  "Largest collective buffer, bytes (from 4 KiB, x16 apart)")
      ->default_val(int64_t{256} << 20)
      ->check(CLI::Range(int64_t{4096}, int64_t{1} << 34));
  sub->add_option("--timeout", opts->probe.node_timeout_s, "Seconds one node's probe may take")
      ->default_val(1200)
      ->check(CLI::Range(1.0, 86400.0));
  sub->add_option(
         "--port", opts->probe.port,
         "Port on the first node for the cross-node phase; default: cluster.dist_init_port")
      ->check(CLI::Range(1, 65535));
  sub->add_flag("--no-cross", opts->no_cross, "Skip the phase between nodes");
  sub->add_flag("--cpu", opts->cpu, "Measure on the CPU even where CUDA is present (a test)");
  sub->add_flag("--quick", opts->quick,
                "A short check that the probe runs: small buffers, short timings, one pair");
  return [opts, sub]() -> Result<ExitCode> {
    return RunProbeCommand(*opts, launch::ShellJoin(GivenArguments(*sub)));
  };
}

}  // namespace ppsearch::cli
