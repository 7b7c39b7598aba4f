// ppsearch run SPEC [--engine sim|sglang|replay:PATH] [--adaptive] [--run-id ID]
// [--resume RUN_DIR] [--dry-run] [--slurm-submit]: run every sample of a
// search (or, adaptive, only those the decision needs), leave the evidence
// directory, then analyse it, write the report and print the decision.

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "adaptive/session.h"
#include "analysis/baseline.h"
#include "cli/command.h"
#include "cli/command_inputs.h"
#include "cli/slurm_submit.h"
#include "compare/confounders.h"
#include "compare/load.h"
#include "cost/calibration.h"
#include "evidence/calibration_file.h"
#include "evidence/run_metadata.h"
#include "launch/launcher.h"
#include "launch/process.h"
#include "report/build_report.h"
#include "run/prepare.h"
#include "run/profile_evidence.h"
#include "run/redact.h"
#include "run/replay_sample.h"
#include "run/runner.h"
#include "run/sim_sample.h"
#include "sglang/commands.h"
#include "sglang/host_check.h"
#include "sglang/sglang_engine.h"
#include "spec/engine_env.h"
#include "spec/spec_parser.h"
#include "util/excerpt.h"
#include "util/files.h"

namespace ppsearch::cli {
namespace {

// SIGINT or SIGTERM: the sample running ends within a fraction of a
// second (its waits watch this flag), its servers are stopped, and the run
// exits as interrupted (3). A batch scheduler's SIGKILL after its grace
// period would otherwise leave the servers on their nodes. A second signal
// kills the servers still stopping rather than wait out their grace.
std::atomic<bool> g_run_stop{false};
std::atomic<bool> g_run_kill{false};
// The run starts real servers (--engine sglang); the simulated and replaying
// engines start none, and stop after the current sample.
std::atomic<bool> g_run_servers{false};

static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

void OnRunStopSignal(int) {
  // Each of the first two signals says what the wait that follows is;
  // write(2) is safe here, and errno is the interrupted code's.
  const int saved_errno = errno;
  static constexpr char kStop[] =
      "\ninterrupted: stopping the current sample and any servers it started (again to kill "
      "them now)\n";
  static constexpr char kStopNoServers[] = "\ninterrupted: stopping after the current sample\n";
  static constexpr char kKill[] = "\ninterrupted again: killing the servers still stopping\n";
  if (!g_run_stop.exchange(true)) {
    const bool servers = g_run_servers.load();
    [[maybe_unused]] const ssize_t n =
        servers ? ::write(STDERR_FILENO, kStop, sizeof(kStop) - 1)
                : ::write(STDERR_FILENO, kStopNoServers, sizeof(kStopNoServers) - 1);
  } else if (g_run_servers.load() && !g_run_kill.exchange(true)) {
    [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kKill, sizeof(kKill) - 1);
  }
  errno = saved_errno;
}

struct RunCliOptions {
  SpecOptions spec;
  std::string engine;  // "" = from the spec
  std::string resume;
  std::string run_id;
  std::string calibration;
  bool dry_run = false;
  bool adaptive = false;
  bool slurm_submit = false;
  int pace_ms = 0;
  std::string command_line;
};

std::string Clock(double s) {
  if (s < 0) return "--:--";
  int total = static_cast<int>(s + 0.5);
  return fmt::format("{}:{:02d}", total / 60, total % 60);
}

// One updating line on a terminal, plain lines otherwise.
void ShowProgress(const run::RunProgress& p) {
  static const bool tty = ::isatty(STDERR_FILENO) != 0;
  std::string line = fmt::format("[{}/{}] {}  elapsed {}  eta {}", p.done + 1, p.total, p.sample,
                                 Clock(p.elapsed_s), Clock(p.eta_s));
  if (tty) {
    std::cerr << "\r\033[K" << line << std::flush;
  } else {
    std::cerr << line << "\n";
  }
}

void PrintDryRun(const SearchInputs& in, const launch::Launcher* launcher,
                 const std::string& engine, bool adaptive) {
  const spec::Spec& spec = in.spec;
  const spec::Spec shown = spec::WithoutSecrets(spec);
  auto samples = run::ExpandSamples(spec, in.plan, in.deployment ? &*in.deployment : nullptr);
  std::cout << fmt::format(
      "# dry run: {} samples ({} layouts x {} concurrency x {} repeats), engine {}, launcher {}; "
      "nothing is started\n",
      samples.size(),
      samples.size() / std::max<size_t>(1, spec.sweep.concurrency.size() * spec.sweep.repeats),
      spec.sweep.concurrency.size(), spec.sweep.repeats, engine, spec.cluster.launcher);
  if (adaptive)
    std::cout << "# adaptive: these are the candidates; the run measures them one point at a time "
                 "and stops when the choice is settled (docs/adaptive.md), so some never run\n";
  for (const auto& s : samples) {
    std::cout << "\n" << s.str() << "\n";
    for (const auto& c : sglang::SampleCommands(shown, s, run::SampleSeed(spec, s), launcher))
      std::cout << "  " << c << "\n";
  }
}

// Before any sample: the confounder check the report makes against the
// baseline the spec imports, so a search whose baseline it cannot be compared
// with is known before it spends GPU hours. A new run copies an imported CSV
// into its evidence, so one that cannot be read (missing, not a regular file,
// too large, malformed) fails here, before a run directory exists; a resumed
// run has its copy, and an import that cannot be read is the report's to name.
Status CheckBaseline(const spec::Spec& spec, const std::string& engine_kind, bool simulated,
                     bool resuming) {
  const spec::BaselineSpec& b = spec.baseline;
  if (b.import_csv.empty() && b.import_run.empty()) return Status::Ok();
  Result<std::vector<analysis::PointSummary>> rows = ReadImportedCsv(spec);
  if (!rows.ok()) return resuming ? Status::Ok() : Status(rows.error());
  const std::string source = b.import_csv.empty() ? b.import_run : b.import_csv;
  evidence::RunMetadata run;  // what this run will record of itself
  run.engine = engine_kind;
  run.simulated = simulated;
  const compare::RunDescription ours = compare::DescribeRun(spec, run, {}, "this run");
  const compare::ConfounderReport r =
      compare::FindConfounders(ours, compare::DescribeImport(b, *rows, source));
  if (!r.comparable) std::cerr << "warning: baseline " << source << ": " << r.verdict << "\n";
  return Status::Ok();
}

// Once, before the run directory exists, what would fail every sample, each
// after its own timeouts: one line per problem and a last that says so;
// empty when the cluster is ready. A resume checks reach and nvidia-smi
// only: its own leftover servers hold the ports and GPUs until it stops
// them (each sample's preflight checks them again).
std::vector<std::string> ClusterNotReady(launch::Launcher& launcher, const spec::Spec& spec,
                                         bool resuming) {
  std::vector<std::string> lines;
  for (const sglang::HostProblem& p :
       sglang::CheckCluster(launcher, spec, spec.lifecycle.check_timeout_s,
                            /*check_busy=*/!resuming))
    lines.push_back(p.Describe());
  if (!lines.empty())
    lines.push_back(
        fmt::format("the cluster is not ready, so no sample ran (every host checked with a {:g} s "
                    "timeout, lifecycle.check_timeout_s)",
                    spec.lifecycle.check_timeout_s));
  return lines;
}

// After the samples: what ran, then the report and the decision (or how to
// resume an interrupted run). The exit code says whether the sweep is
// complete and a layout qualifies.
// `signalled`: SIGINT/SIGTERM came during the run.
Result<ExitCode> Conclude(const run::RunOutcome& out, bool signalled) {
  std::cerr << fmt::format(
      "run directory: {} ({} samples run, {} not ok, {} already complete, {} total)\n", out.run_dir,
      out.completed, out.not_ok, out.skipped, out.total);
  if (out.interrupted) {
    std::cerr << "interrupted; resume with: "
              << launch::ShellJoin({"ppsearch", "run", "--resume", out.run_dir}) << "\n";
    return kExitIncomplete;
  }
  // The handler announced a stop; say why the run ends as usual instead.
  if (signalled)
    std::cerr << "the interrupt came after the last sample: the run is complete, so its report "
                 "follows\n";
  PPS_ASSIGN_OR_RETURN(const report::ReportOutcome report, report::BuildReport(out.run_dir));
  for (const auto& w : report.warnings) std::cerr << "warning: " << w << "\n";
  std::cout << report.markdown;
  return static_cast<ExitCode>(report.exit_code);
}

// The request a command line makes of run::PrepareRun.
run::RunRequest RequestOf(const RunCliOptions& opts) {
  run::RunRequest r;
  r.spec_path = opts.spec.spec_path;
  r.overrides = opts.spec.overrides;
  r.engine = opts.engine;
  r.resume_dir = opts.resume;
  r.run_id = opts.run_id;
  if (const char* env = std::getenv("RUN_ID"); env != nullptr) r.run_id_env = env;
  r.calibration = opts.calibration;
  r.adaptive = opts.adaptive;
  return r;
}

// The variables SGLang reads that the model follows, set in this process's
// environment but not by the spec: the local and Slurm launchers hand this
// environment to every server (srun exports it by default), so the servers
// would run with what the plan and the predictions do not.
void WarnInheritedEngineEnv(const spec::Spec& spec) {
  if (spec.cluster.launcher == "ssh") return;
  for (const char* name : spec::ModelledEnvNames()) {
    const char* value = std::getenv(name);
    if (value == nullptr || spec::FindEnv(spec.engine, name) != nullptr) continue;
    std::cerr << "warning: " << name << "='" << Excerpt(value)
              << "' is set in ppsearch's environment and the " << spec.cluster.launcher
              << " launcher passes it to every server, but the spec does not set it, so the plan "
                 "and the predictions do not follow it; set it in [engine.env] or unset it\n";
  }
}

Result<ExitCode> RunRun(const RunCliOptions& opts) {
  PPS_ASSIGN_OR_RETURN(run::PreparedRun prepared, run::PrepareRun(RequestOf(opts)));
  if (!prepared.resume_dir.empty())
    std::cerr << "resuming " << prepared.resume_dir << " with its recorded spec ("
              << prepared.spec_path << ")\n";
  const SearchInputs& in = prepared.inputs;
  for (const auto& w : in.plan.warnings) std::cerr << "warning: " << w.message << "\n";
  if (prepared.engine_kind == "sglang") WarnInheritedEngineEnv(in.spec);
  if (!prepared.refusals.empty()) return ErrorLines(prepared.refusals);
  const std::string& engine_kind = prepared.engine_kind;
  run::RunOptions ro;
  ro.command_line = opts.command_line;
  ro.pace_ms = opts.pace_ms;
  ro.spec_path = prepared.spec_path;
  ro.overrides = prepared.overrides;
  ro.run_id = prepared.run_id;
  ro.resume_dir = prepared.resume_dir;
  ro.inputs = prepared.input_records;
  if (in.deployment) ro.deployment = &*in.deployment;
  // A replay checks every sample of the sweep against its source before anything else.
  std::unique_ptr<run::SampleEngine> engine;
  if (std::optional<std::string> path = run::ReplayPath(engine_kind)) {
    if (opts.slurm_submit)
      return MakeError("--slurm-submit runs servers in an allocation; --engine " + engine_kind +
                       " runs none");
    PPS_ASSIGN_OR_RETURN(engine, run::MakeReplayEngine(in.spec, in.plan, *path));
  }
  PPS_RETURN_IF_ERROR(CheckBaseline(in.spec, engine ? engine->kind() : engine_kind,
                                    engine ? engine->simulated() : engine_kind == "sim",
                                    !prepared.resume_dir.empty()));

  const std::string control_dir = in.spec.cluster.launcher == "ssh" ? launch::SshControlDir() : "";
  Result<std::unique_ptr<launch::Launcher>> launcher =
      launch::MakeLauncher(in.spec, control_dir, in.spec.lifecycle.host_timeout_s);
  if (!launcher.ok()) return launcher.error();
  if (opts.dry_run) {
    PrintDryRun(in, launcher->get(), engine_kind, prepared.adaptive);
    return kExitOk;
  }
  if (!control_dir.empty() && ::mkdir(control_dir.c_str(), 0700) != 0 && errno != EEXIST)
    return IoError("cannot create " + control_dir + " for ssh's control sockets");
  if (engine_kind == "sglang" && in.spec.cluster.launcher == "slurm" && !opts.slurm_submit &&
      !launch::SlurmAllocationProblem().empty())
    return MakeError(launch::SlurmAllocationProblem());
  if (opts.slurm_submit) {
    Result<std::string> submitted = SubmitSlurmJob(in.spec, ro, engine_kind);
    if (!submitted.ok()) return submitted.error();
    std::cout << *submitted;
    return kExitOk;
  }

  cost::Calibration calibration;
  if (!prepared.calibration.empty()) {
    PPS_ASSIGN_OR_RETURN(calibration, evidence::LoadCalibration(prepared.calibration));
    // The run keeps the file's own text beside its evidence.
    if (Result<std::string> text = ReadFile(prepared.calibration); text.ok())
      ro.calibration_json = *text;
  }
  if (engine_kind == "sglang") {
    if (std::vector<std::string> lines =
            ClusterNotReady(**launcher, in.spec, !prepared.resume_dir.empty());
        !lines.empty()) {
      (*launcher)->Close();
      return ErrorLines(lines);
    }
  }
  if (engine_kind == "sglang") {
    engine = std::make_unique<sglang::SglangSampleEngine>(in.spec, **launcher);
    ro.launcher = launcher->get();
  } else if (engine_kind == "sim") {  // else the replay, made above
    engine = std::make_unique<run::SimSampleEngine>(in, calibration);
  }
  // commands.txt is written from the spec without its secrets.
  ro.sample_commands = [shown = spec::WithoutSecrets(in.spec),
                        launcher = ro.launcher](const evidence::SampleId& s) {
    return sglang::SampleCommands(shown, s, run::SampleSeed(shown, s), launcher);
  };
  // The adaptive session predicts from the run's calibration (the defaults
  // when none) and refits it on every point it measures.
  std::optional<adaptive::Session> session;
  if (prepared.adaptive) {
    session.emplace(in, calibration);
    ro.next_samples = [&session](const evidence::RunPaths& paths) { return session->Next(paths); };
  }
  if (in.spec.profile.enabled())
    ro.predicted_breakdown = [&in, calibration](const run::SampleContext& ctx) {
      return run::PredictedBreakdownOf(ctx, in, calibration);
    };
  ro.notice = [](const std::string& line) { std::cerr << line << "\n"; };
  g_run_servers = engine_kind == "sglang";
  std::signal(SIGINT, OnRunStopSignal);
  std::signal(SIGTERM, OnRunStopSignal);
  std::signal(SIGPIPE, SIG_IGN);
  ro.stop = &g_run_stop;
  ro.kill_now = &g_run_kill;
  // A wrong sudo password is one error before any sample, not a failed sample.
  const Status sudo = engine_kind == "sglang"
                          ? launch::CheckSudo(**launcher, in.spec, in.spec.lifecycle.host_timeout_s)
                          : Status::Ok();
  Result<run::RunOutcome> out = sudo.ok()
                                    ? run::RunSamples(ro, in.spec, in.plan, *engine, ShowProgress)
                                    : Result<run::RunOutcome>(sudo.error());
  engine.reset();
  (*launcher)->Close();
  launch::RemoveSshControlDir(control_dir);
  if (::isatty(STDERR_FILENO)) std::cerr << "\n";
  if (!out.ok()) return out.error();
  return Conclude(*out, g_run_stop.load());
}

}  // namespace

Runner AddRunCommand(CLI::App& app) {
  auto opts = std::make_shared<RunCliOptions>();
  CLI::App* sub = app.add_subcommand("run",
                                     "Run every sample of a search, write results/<RUN_ID>/ with "
                                     "all evidence, the report and the decision");
  AddSpecOptions(sub, opts->spec, /*spec_required=*/false);
  sub->add_option("--engine", opts->engine,
                  "sglang (real servers through the spec's launcher; the default when the spec "
                  "names cluster.launcher), sim (the calibrated simulator; the default "
                  "otherwise) or replay:PATH (every sample answered from a run directory or a "
                  "CSV of medians already measured)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            if (value == "sim" || value == "sglang") return "";
            std::optional<std::string> path = run::ReplayPath(value);
            if (path && !path->empty()) return "";
            return "expected sim, sglang or replay:PATH (a run directory or a CSV of medians), "
                   "got '" +
                   Excerpt(value) + "'";
          },
          "ENGINE"));
  sub->add_option("--run-id", opts->run_id,
                  "Name of the run directory under results_dir (default: $RUN_ID, else "
                  "<name>-<UTC time>)");
  sub->add_option("--resume", opts->resume,
                  "Continue an interrupted run: stops what it left running, then runs only the "
                  "samples not completed");
  sub->add_option("--calibration", opts->calibration, "Calibration file for the simulated engine");
  sub->add_flag("--adaptive", opts->adaptive,
                "Measure one point at a time, the one expected to settle the choice most per "
                "GPU-hour, and stop once the primary and fallback are measured and no other "
                "layout is likely to beat them (docs/adaptive.md)");
  sub->add_flag("--dry-run", opts->dry_run,
                "Print every sample and each node's exact command; run nothing");
  sub->add_flag("--slurm-submit", opts->slurm_submit,
                "Write a job script that runs this search inside a Slurm allocation and sbatch it");
  sub->add_option("--pace-ms", opts->pace_ms, "Pause after each sample (demos, interruption tests)")
      ->check(CLI::NonNegativeNumber);
  return [opts] {
    // The command that measures the same thing again, as the report's "How
    // to reproduce" gives it: without --run-id (a second run under this
    // run's id is refused) nor --resume, quoted for a shell whatever the
    // paths and values hold.
    std::vector<std::string> argv = {"ppsearch", "run"};
    if (!opts->spec.spec_path.empty()) argv.push_back(opts->spec.spec_path);
    for (const auto& o : opts->spec.overrides) argv.insert(argv.end(), {"--set", o});
    if (!opts->engine.empty()) argv.insert(argv.end(), {"--engine", opts->engine});
    if (opts->adaptive) argv.push_back("--adaptive");
    if (!opts->calibration.empty()) argv.insert(argv.end(), {"--calibration", opts->calibration});
    opts->command_line = launch::ShellJoin(argv);
    return RunRun(*opts);
  };
}

}  // namespace ppsearch::cli
