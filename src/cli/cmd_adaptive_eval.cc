// ppsearch adaptive-eval SPEC [--scenarios N] [--seed S] [--hidden H]
// [--spread S] [--calibration FILE] [--work-dir DIR] [--json]: the adaptive
// policy scored on seeded sweeps whose truth differs from the model by
// hidden per-layout factors, each replayed in full and adaptively.

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "adaptive/preconditions.h"
#include "adaptive_eval/scenarios.h"
#include "analysis/points.h"
#include "cli/command.h"
#include "cli/command_inputs.h"
#include "cost/calibration.h"
#include "decide/sla.h"
#include "evidence/calibration_file.h"
#include "table/table.h"

namespace ppsearch::cli {
namespace {

struct EvalCliOptions {
  SpecOptions spec;
  std::string calibration_path;
  adaptive_eval::ScenarioOptions eval;
  bool json = false;
};

std::string Decision(const std::string& primary, const std::string& fallback) {
  return (primary.empty() ? "none" : primary) + " / " + (fallback.empty() ? "none" : fallback);
}

nlohmann::json EvaluationJson(const adaptive_eval::Evaluation& ev,
                              const adaptive_eval::ScenarioOptions& o) {
  nlohmann::json out = {{"scenarios", o.scenarios},
                        {"seed", o.seed},
                        {"hidden", o.hidden},
                        {"spread", o.spread},
                        {"agree", ev.agree},
                        {"median_fraction", ev.median_fraction},
                        {"worst_fraction", ev.worst_fraction},
                        {"results", nlohmann::json::array()}};
  for (const adaptive_eval::ScenarioResult& s : ev.results) {
    nlohmann::json hidden = nlohmann::json::object();
    for (const auto& [label, f] : s.hidden) hidden[label] = f;
    out["results"].push_back({{"scenario", s.index},
                              {"hidden", hidden},
                              {"full",
                               {{"primary", s.full_primary},
                                {"fallback", s.full_fallback},
                                {"gpu_hours", s.full_gpu_hours},
                                {"samples", s.full_samples}}},
                              {"adaptive",
                               {{"primary", s.adaptive_primary},
                                {"fallback", s.adaptive_fallback},
                                {"gpu_hours", s.adaptive_gpu_hours},
                                {"samples", s.adaptive_samples},
                                {"stop", s.stop_reason}}},
                              {"agrees", s.agrees},
                              {"fraction", s.fraction()}});
  }
  return out;
}

std::string EvaluationText(const adaptive_eval::Evaluation& ev,
                           const adaptive_eval::ScenarioOptions& o) {
  table::Table t{{"scenario", "full sweep: primary / fallback", "adaptive: primary / fallback",
                  "same", "samples", "GPU-hours", "share", "stop"},
                 {},
                 {false, true, true, true, false, false, false, true}};
  for (const adaptive_eval::ScenarioResult& s : ev.results)
    t.rows.push_back({std::to_string(s.index), Decision(s.full_primary, s.full_fallback),
                      Decision(s.adaptive_primary, s.adaptive_fallback), s.agrees ? "yes" : "NO",
                      fmt::format("{} of {}", s.adaptive_samples, s.full_samples),
                      fmt::format("{:.1f} of {:.1f}", s.adaptive_gpu_hours, s.full_gpu_hours),
                      fmt::format("{:.0f}%", s.fraction() * 100), s.stop_reason});
  std::string out = fmt::format(
      "# ppsearch adaptive-eval: {} scenarios (seed {}), each layout's throughput x U(1 - {:g}, "
      "1 + {:g}) hidden from the model, repeats spread {:g}\n\n",
      o.scenarios, o.seed, o.hidden, o.hidden, o.spread);
  out += table::RenderTextTable(t);
  out += fmt::format(
      "\nthe adaptive run reached the full sweep's primary and fallback in {} of {} scenarios, "
      "spending a median {:.0f}% (worst {:.0f}%) of the full sweep's GPU-hours\n",
      ev.agree, ev.results.size(), ev.median_fraction * 100, ev.worst_fraction * 100);
  return out;
}

Result<ExitCode> RunEval(EvalCliOptions opts) {
  PPS_ASSIGN_OR_RETURN(const SearchInputs in, LoadSearchInputs(opts.spec, {}));
  for (const auto& lp : in.plan.layouts)
    if (!lp.valid) return MakeError(lp.layout.Label() + " is not valid: " + lp.errors[0].message);
  // What would refuse every scenario's adaptive run, before any full sweep
  // is replayed.
  if (const std::vector<std::string> problems = adaptive::AdaptiveRunProblems(
          in, "set one with --set decision.objective=input_tps to score the adaptive run");
      !problems.empty())
    return ErrorLines(problems);
  // Each scenario's truth is a CSV of medians, replayed: its samples hold
  // input TPS and TTFT p50/p95 alone, so an SLA limit would exclude every
  // layout in both runs, and their agreement would mean nothing.
  if (std::vector<std::string> lines =
          analysis::DecisionFiguresNotHeld(in.spec, {"input_tps", "ttft_p50_s", "ttft_p95_s"},
                                           "adaptive-eval's truths (CSVs of medians)");
      !lines.empty()) {
    lines.push_back("score the adaptive run without SLA limits");
    return ErrorLines(lines);
  }
  cost::Calibration calibration;
  if (!opts.calibration_path.empty()) {
    PPS_ASSIGN_OR_RETURN(calibration, evidence::LoadCalibration(opts.calibration_path));
  }
  adaptive_eval::ScenarioOptions& o = opts.eval;
  o.spec_path = opts.spec.spec_path;
  o.overrides = opts.spec.overrides;
  namespace fs = std::filesystem;
  const bool temporary = o.work_dir.empty();
  if (temporary)
    o.work_dir =
        (fs::temp_directory_path() / ("ppsearch-adaptive-eval-" + std::to_string(::getpid())))
            .string();
  else if (fs::exists(o.work_dir) && !fs::is_empty(o.work_dir))
    return MakeError("--work-dir " + o.work_dir + " is not empty; give a new or empty directory");
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  if (ec) return IoError("cannot create " + o.work_dir + ": " + ec.message());
  Result<adaptive_eval::Evaluation> ev = adaptive_eval::Evaluate(in, calibration, o);
  if (temporary) fs::remove_all(o.work_dir, ec);
  if (!ev.ok()) return ev.error();
  std::cout << (opts.json ? EvaluationJson(*ev, o).dump(2) + "\n" : EvaluationText(*ev, o));
  if (!temporary) std::cerr << "run directories kept under " << o.work_dir << "\n";
  return kExitOk;
}

}  // namespace

Runner AddAdaptiveEvalCommand(CLI::App& app) {
  auto opts = std::make_shared<EvalCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "adaptive-eval",
      "Score run --adaptive on seeded sweeps whose truth differs from the model by hidden "
      "per-layout factors: each replayed in full and adaptively, decisions and GPU-hours "
      "compared");
  AddSpecOptions(sub, opts->spec);
  adaptive_eval::ScenarioOptions& o = opts->eval;
  sub->add_option("--scenarios", o.scenarios, "Scenarios to run")
      ->default_val(o.scenarios)
      ->check(CLI::Range(1, 10000));
  sub->add_option("--seed", o.seed, "Seed of the hidden factors")->default_val(o.seed);
  sub->add_option("--hidden", o.hidden,
                  "Largest hidden factor on a layout's throughput, as a fraction (0.2: +-20%)")
      ->default_val(o.hidden)
      ->check(CLI::Range(0.0, 0.9));
  sub->add_option("--spread", o.spread, "Repeat spread ((max - min) / median) of the replays")
      ->default_val(o.spread)
      ->check(CLI::Range(0.0, 0.5));
  sub->add_option("--calibration", opts->calibration_path,
                  "Calibration the truth is made from and the adaptive runs start with");
  sub->add_option("--work-dir", o.work_dir,
                  "Keep the replay files and run directories here (default: a temporary "
                  "directory, removed)");
  sub->add_flag("--json", opts->json, "Print the evaluation as JSON");
  return [opts] { return RunEval(*opts); };
}

}  // namespace ppsearch::cli
