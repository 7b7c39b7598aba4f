// ppsearch run SPEC [--engine sim] [--resume RUN_DIR] [--dry-run]: run every
// sample of a search, leave the evidence directory, then analyse it, write
// the report and print the decision.

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/search_inputs.h"
#include "cost/calibration.h"
#include "report/build_report.h"
#include "run/commands.h"
#include "run/runner.h"
#include "run/sim_sample.h"
#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch::cli {
namespace {

std::atomic<bool> g_run_stop{false};

void OnRunStopSignal(int) { g_run_stop = true; }

struct RunCliOptions {
  SpecOptions spec;
  std::string engine = "sim";
  std::string resume;
  std::string calibration;
  bool dry_run = false;
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

// The spec of a run being resumed: the copy in its metadata, resolved as the
// original was (same path, same --set overrides), so a resumed run cannot
// silently change what it measures.
Result<spec::Spec> LoadRunSpec(const std::string& run_dir, std::string* spec_path,
                               std::vector<std::string>* overrides) {
  evidence::RunPaths paths{run_dir};
  PPS_ASSIGN_OR_RETURN(std::string run_text, ReadFile(paths.metadata("run.json")));
  nlohmann::json run = nlohmann::json::parse(run_text, nullptr, false);
  if (run.is_discarded() || !run.contains("spec_path"))
    return MakeError(paths.metadata("run.json") + ": not a valid run description (no 'spec_path')");
  *spec_path = run["spec_path"].get<std::string>();
  for (const auto& o : run.value("overrides", nlohmann::json::array()))
    overrides->push_back(o.get<std::string>());
  PPS_ASSIGN_OR_RETURN(std::string spec_text, ReadFile(paths.metadata("spec.toml")));
  return spec::ParseSpec(spec_text, *spec_path, *overrides);
}

void PrintDryRun(const spec::Spec& spec, const plan::Plan& plan) {
  auto samples = run::ExpandSamples(spec, plan);
  std::cout << fmt::format(
      "# dry run: {} samples ({} layouts x {} concurrency x {} repeats); nothing is started\n",
      samples.size(),
      samples.size() / std::max<size_t>(1, spec.sweep.concurrency.size() * spec.sweep.repeats),
      spec.sweep.concurrency.size(), spec.sweep.repeats);
  for (const auto& s : samples) {
    std::cout << "\n" << s.str() << "\n";
    for (const auto& c : run::SampleCommands(spec, s, run::SampleSeed(spec, s)))
      std::cout << "  " << c << "\n";
  }
}

void RunRun(RunCliOptions& opts, int& exit_code) {
  auto fail = [&exit_code](const std::string& message, int code = kExitConfigError) {
    std::cerr << "error: " << message << "\n";
    exit_code = code;
  };
  run::RunOptions ro;
  ro.command_line = opts.command_line;
  ro.pace_ms = opts.pace_ms;
  ro.spec_path = opts.spec.spec_path;
  ro.overrides = opts.spec.overrides;
  std::optional<SearchInputs> in;
  if (!opts.resume.empty()) {
    std::string recorded_path;
    std::vector<std::string> overrides;
    Result<spec::Spec> spec = LoadRunSpec(opts.resume, &recorded_path, &overrides);
    if (!spec.ok()) return fail(spec.error().message);
    SpecOptions so{recorded_path, overrides};
    in = LoadSearchInputs(so, {}, exit_code);  // loads model and hardware for the recorded spec
    if (!in) return;
    in->spec = *spec;
    in->plan = plan::PlanSearch(in->spec, in->model, in->hardware);
    ro.resume_dir = opts.resume;
    ro.spec_path = recorded_path;
    if (std::filesystem::exists(evidence::RunPaths{opts.resume}.metadata("calibration.json")))
      opts.calibration = evidence::RunPaths{opts.resume}.metadata("calibration.json");
  } else {
    in = LoadSearchInputs(opts.spec, {}, exit_code);
    if (!in) return;
  }
  for (const auto& w : in->plan.warnings) std::cerr << "warning: " << w.message << "\n";
  bool invalid = false;
  for (const auto& lp : in->plan.layouts)
    for (const auto& e : lp.errors) {
      std::cerr << "error: " << e.message << "\n";
      invalid = true;
    }
  if (invalid) return fail("the spec has invalid layouts; fix them or remove them from [sweep]");
  if (opts.dry_run) return PrintDryRun(in->spec, in->plan);

  cost::Calibration calibration;
  if (!opts.calibration.empty()) {
    Result<cost::Calibration> c = cost::LoadCalibration(opts.calibration);
    if (!c.ok()) return fail(c.error().message);
    calibration = *c;
    Result<std::string> text = ReadFile(opts.calibration);
    if (text.ok()) ro.calibration_json = *text;
  }
  run::SimSampleEngine engine(in->spec, in->model, in->hardware, calibration);
  std::signal(SIGINT, OnRunStopSignal);
  std::signal(SIGTERM, OnRunStopSignal);
  ro.stop = &g_run_stop;
  Result<run::RunOutcome> out = run::RunSamples(ro, in->spec, in->plan, engine, ShowProgress);
  if (::isatty(STDERR_FILENO)) std::cerr << "\n";
  if (!out.ok()) return fail(out.error().message, kExitFailure);
  std::cerr << fmt::format("run directory: {} ({} samples run, {} already complete, {} total)\n",
                           out->run_dir, out->completed, out->skipped, out->total);
  if (out->interrupted) {
    std::cerr << fmt::format("interrupted; resume with: ppsearch run {} --resume {}\n",
                             ro.spec_path, out->run_dir);
    exit_code = kExitIncomplete;
    return;
  }
  Result<report::ReportOutcome> report = report::BuildReport(out->run_dir);
  if (!report.ok()) return fail(report.error().message, kExitFailure);
  for (const auto& w : report->warnings) std::cerr << "warning: " << w << "\n";
  std::cout << report->markdown;
  exit_code = report->exit_code;
}

}  // namespace

void AddRunCommand(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<RunCliOptions>();
  CLI::App* sub = app.add_subcommand("run",
                                     "Run every sample of a search, write results/<RUN_ID>/ with "
                                     "all evidence, the report and the decision");
  AddSpecOptions(sub, opts->spec);
  sub->add_option("--engine", opts->engine,
                  "Engine that runs each sample: sim (the calibrated simulator, the default)")
      ->check(CLI::IsMember({"sim"}))
      ->capture_default_str();
  sub->add_option("--resume", opts->resume,
                  "Continue an interrupted run: runs only samples not completed");
  sub->add_option("--calibration", opts->calibration, "Calibration file for the simulated engine");
  sub->add_flag("--dry-run", opts->dry_run, "Print every sample and its commands; run nothing");
  sub->add_option("--pace-ms", opts->pace_ms, "Pause after each sample (demos, interruption tests)")
      ->check(CLI::NonNegativeNumber);
  sub->callback([opts, sub, &exit_code] {
    opts->command_line = "ppsearch run " + opts->spec.spec_path;
    for (const auto& o : opts->spec.overrides) opts->command_line += " --set '" + o + "'";
    if (!opts->calibration.empty()) opts->command_line += " --calibration " + opts->calibration;
    (void)sub;
    RunRun(*opts, exit_code);
  });
}

}  // namespace ppsearch::cli
