// ppsearch simulate SPEC: predict every point (layout x concurrency) of a
// search with the calibrated performance model, print the result table, the
// per-layout time breakdown, memory, and what pp-max-micro-batch-size = 1
// would cost; each predicted value with its interval over the calibration's
// uncertainty, the parameters behind it, and the measurement that would
// narrow the choice most.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <thread>

#include "analysis/prediction.h"
#include "cli/command.h"
#include "cli/command_inputs.h"
#include "cli/simulate_disaggregated.h"
#include "cost/calibration.h"
#include "evidence/calibration_file.h"
#include "inputs/search_inputs.h"
#include "plan/disaggregation.h"
#include "predict/search_points.h"
#include "report/simulated_prediction.h"
#include "report/simulation_page.h"
#include "sim/trace.h"
#include "stats/point_figures.h"
#include "uncertainty/model_error_file.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::cli {
namespace {

struct SimulateOptions {
  SpecOptions spec;
  PointSelection selection;
  std::string calibration_path;
  std::string trace_path;
  std::string html_path;
  bool json = false;
  bool skip_cap_check = false;
  bool skip_partition_check = false;
  uncertainty::EnsembleOptions ensemble;  // members 0: no intervals
};

// The layouts of the plan the calibration says it was fitted to.
std::vector<spec::LayoutSpec> MeasuredLayouts(const cost::Calibration& calibration,
                                              const plan::Plan& plan) {
  std::vector<spec::LayoutSpec> out;
  for (const std::string& label : calibration.fitted_layouts)
    for (const auto& lp : plan.layouts)
      if (label == lp.layout.Label()) out.push_back(lp.layout);
  return out;
}

// --html: the prediction as a self-contained page; nothing without the flag.
Status WritePage(const SimulateOptions& opts, const SearchInputs& in,
                 const cost::Calibration& calibration,
                 const predict::SearchPrediction& prediction) {
  if (opts.html_path.empty()) return Status::Ok();
  const auto& w = in.spec.workload;
  report::SimulationPage page;
  page.spec_path = opts.spec.spec_path;
  page.calibration_source = calibration.source;
  page.setup = fmt::format("{} on {} x {} {}; {} requests x {} input / {} output tokens per sample",
                           in.model.name, in.spec.cluster.hosts.size(),
                           in.spec.cluster.gpus_per_node, in.hardware.gpu_name, w.requests,
                           FormatThousands(w.input_tokens), w.output_tokens);
  page.gpu_total_mib = in.hardware.memory_mib;
  page.prediction.points = analysis::PredictedPoints(prediction);
  page.prediction.interval_members = prediction.intervals.empty() ? 0 : opts.ensemble.members;
  page.prediction.note = "Predicted by the simulator (calibration: " + calibration.source + ")";
  page.uncertainty = prediction.summary;
  page.calibration = &calibration;
  page.interval_seed = opts.ensemble.seed;
  PPS_RETURN_IF_ERROR(WriteFileAtomic(opts.html_path, report::RenderSimulationHtml(in.spec, page)));
  std::cerr << "page written to " << opts.html_path << " (open it in a browser)\n";
  return Status::Ok();
}

// --trace: the simulated timelines for Perfetto; nothing without the flag.
Status WriteTrace(const std::string& path, const SearchInputs& in,
                  const predict::SearchPrediction& prediction) {
  if (path.empty()) return Status::Ok();
  std::vector<sim::TracePoint> tps;
  for (const auto& sp : prediction.points) {
    sim::TracePoint tp{
        sp.prediction.layout.Label() + " C=" + std::to_string(sp.prediction.concurrency),
        {},
        &sp.prediction.sim};
    for (const auto& st : sp.plan->stages) {
      std::string nodes;
      for (int n : st.nodes) nodes += (nodes.empty() ? "" : " ") + in.plan.cluster.hosts[n];
      tp.stage_names.push_back("stage " + std::to_string(st.pp_rank) + " (" + nodes + ")");
    }
    tps.push_back(std::move(tp));
  }
  PPS_RETURN_IF_ERROR(WriteFileAtomic(path, sim::TraceToJson(tps).dump() + "\n"));
  std::cerr << "trace written to " << path << " (open in ui.perfetto.dev)\n";
  return Status::Ok();
}

Result<ExitCode> RunSimulate(const SimulateOptions& opts) {
  const NamedPath spec{"the spec", opts.spec.spec_path};
  const NamedPath calibration_file{"the calibration", opts.calibration_path};
  PPS_RETURN_IF_ERROR(CheckOutputPath(
      "--html", opts.html_path, {spec, calibration_file, {"the --trace file", opts.trace_path}}));
  PPS_RETURN_IF_ERROR(CheckOutputPath("--trace", opts.trace_path, {spec, calibration_file}));
  PPS_ASSIGN_OR_RETURN(std::optional<inputs::DisaggregatedInputs> disaggregated,
                       inputs::LoadDisaggregatedInputs(opts.spec.spec_path, opts.spec.overrides));
  if (disaggregated && !opts.selection.layouts.empty())
    return MakeError(
        "--layout picks among [sweep]'s layouts; this spec's are its [sweep.prefill] and "
        "[sweep.decode] pools");
  if (disaggregated && (!opts.html_path.empty() || !opts.trace_path.empty()))
    return MakeError(
        "--html and --trace are not built for a disaggregated deployment yet; its tables and "
        "--json are");
  cost::Calibration calibration;
  if (!opts.calibration_path.empty()) {
    Result<cost::Calibration> loaded = evidence::LoadCalibration(opts.calibration_path);
    if (!loaded.ok()) return loaded.error();
    calibration = *loaded;
  }
  if (disaggregated)
    return SimulateDisaggregated(*disaggregated, calibration, opts.selection.concurrency,
                                 opts.ensemble.members > 0, opts.json);
  Result<SearchInputs> in = LoadSearchInputs(opts.spec, opts.selection);
  if (!in.ok()) return in.error();
  // The valid layouts are still predicted and printed; the invalid ones make
  // the outcome an error, reported after them.
  std::vector<std::string> errors;
  bool invalid = false;
  size_t predictable = 0;
  for (const auto& lp : in->plan.layouts) {
    if (lp.valid) {
      if (auto why = predict::NotModelled(lp)) {
        errors.push_back(*why);
        invalid = true;
      } else {
        ++predictable;
      }
      continue;
    }
    for (const auto& e : lp.errors) errors.push_back(e.message);
    invalid = true;
  }
  // With none left to predict, tables (or a JSON document) without rows
  // would only precede the errors.
  if (predictable == 0 && !errors.empty()) return ErrorLines(errors);
  predict::SearchOptions so;
  so.cap_check = !opts.skip_cap_check;
  so.partition_check = !opts.skip_partition_check;
  so.keep_trace = !opts.trace_path.empty();
  so.ensemble = opts.ensemble;
  so.measured = MeasuredLayouts(calibration, in->plan);
  so.threads = static_cast<int>(std::min(2u, std::max(1u, std::thread::hardware_concurrency())));
  if (so.ensemble.members > 0) {
    Result<cost::ModelFormScales> model_form = uncertainty::ModelFormFor(calibration);
    if (!model_form.ok()) return model_form.error();
    so.model_form = *model_form;
  }
  const predict::SearchPrediction prediction = predict::PredictSearch(*in, calibration, so);
  report::SimulatedPage shown;
  shown.spec_path = opts.spec.spec_path;
  shown.inputs = &*in;
  shown.calibration = &calibration;
  shown.prediction = &prediction;
  shown.ensemble = opts.ensemble;
  for (size_t i = 0; i < prediction.points.size(); ++i)
    shown.points.push_back(
        {&prediction.points[i], prediction.IntervalOf(i),
         i < prediction.extrapolation.size() ? &prediction.extrapolation[i] : nullptr,
         std::nullopt});
  if (in->hardware.TensorBurstRatio() > 1)
    for (auto& sp : shown.points) {
      predict::PointRequest request;
      request.concurrency = sp.point->prediction.concurrency;
      sp.burst_share = predict::TensorBurstShare(
          *in, *sp.point->plan, calibration, request,
          stats::FiguresOf(sp.point->prediction.metrics, sp.point->plan->layout.gpus()));
    }
  if (opts.json)
    std::cout << report::SimulatedPredictionJson(shown).dump(2) << "\n";
  else
    std::cout << report::RenderSimulatedPrediction(shown);
  Status written = WritePage(opts, *in, calibration, prediction);
  if (written.ok()) written = WriteTrace(opts.trace_path, *in, prediction);
  if (!written.ok()) {
    errors.push_back(written.error().message);
    return ErrorLines(errors, ErrorKind::kIo);
  }
  if (invalid) return ErrorLines(errors);
  return kExitOk;
}

}  // namespace

Runner AddSimulateCommand(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand(
      "simulate", "Predict every layout x concurrency point with the calibrated performance model");
  AddSpecOptions(sub, opts->spec);
  AddPointSelection(sub, opts->selection);
  sub->add_option("--calibration", opts->calibration_path,
                  "Calibration file written by 'ppsearch calibrate'");
  sub->add_option("--trace", opts->trace_path,
                  "Write a Chrome/Perfetto trace JSON of the simulated timelines");
  sub->add_option("--html", opts->html_path,
                  "Write a self-contained HTML page of the prediction (tables and charts)");
  sub->add_flag("--json", opts->json, "Print points[] as JSON");
  sub->add_flag("--no-cap-check", opts->skip_cap_check,
                "Skip the extra run with pp-max-micro-batch-size = 1 for PP > 1 layouts");
  sub->add_flag("--no-partition-check", opts->skip_partition_check,
                "Skip the extra run of PP > 1 layouts with the SGLANG_PP_LAYER_PARTITION that "
                "leaves their tightest stage more memory");
  sub->add_option("--samples", opts->ensemble.members,
                  "Draws of the calibration's uncertain parameters behind each interval (0: no "
                  "intervals)")
      ->default_val(opts->ensemble.members)
      ->check(CLI::Range(0, 4096));
  sub->add_option("--interval-seed", opts->ensemble.seed,
                  "Seed of the draws (the same seed gives the same intervals)")
      ->default_val(opts->ensemble.seed);
  return [opts] { return RunSimulate(*opts); };
}

}  // namespace ppsearch::cli
