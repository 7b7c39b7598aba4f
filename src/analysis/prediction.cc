#include "analysis/prediction.h"

#include <fmt/format.h>

#include "cost/calibration.h"
#include "evidence/calibration_file.h"
#include "inputs/search_inputs.h"
#include "predict/disaggregated.h"
#include "uncertainty/model_error_file.h"
#include "uncertainty/overlap.h"
#include "uncertainty/summary.h"

namespace ppsearch::analysis {

const PredictedPoint* RunPrediction::Find(const spec::LayoutSpec& layout, int concurrency) const {
  for (const PredictedPoint& p : points)
    if (p.layout == layout && p.concurrency == concurrency) return &p;
  return nullptr;
}

namespace {

// A disaggregated spec's deployment at each of its sweep's load points, as
// `simulate` predicts it (predict::PredictDisaggregated), with the
// model-form intervals of input TPS and TTFT p50; the sentence the note
// adds about them, "" for an aggregated spec.
std::string AddDeploymentPoints(const inputs::SearchInputs& in,
                                const cost::Calibration& calibration,
                                const cost::ModelFormScales& scales, RunPrediction& out) {
  if (!in.deployment) return "";
  const plan::DisaggregatedPlan& d = *in.deployment;
  if (!d.valid()) return "; the disaggregated deployment is invalid and was not predicted";
  if (std::optional<std::string> why = predict::DisaggregatedNotModelled(d))
    return "; the disaggregated deployment was not predicted: " + *why;
  const spec::LayoutSpec& layout = in.spec.sweep.layouts.front();
  for (int c : in.spec.sweep.concurrency) {
    predict::PointOptions options;
    options.concurrency = c;
    options.seed = in.spec.workload.seed;
    options.token_times = false;  // no figure here reads the inter-token gaps
    const predict::DisaggregatedPrediction p =
        predict::PredictDisaggregated(d, in.spec, in.model, in.hardware, calibration, options);
    const predict::DisaggregatedIntervals iv =
        predict::ModelFormIntervals(p, d, in.spec, in.hardware, calibration, scales);
    PredictedPoint pp;
    static_cast<stats::Figures&>(pp) = stats::FiguresOf(p.metrics, layout.gpus());
    pp.layout = layout;
    pp.concurrency = c;
    pp.peak_gpu_mib = std::max(p.prefill.memory.peak_mib_max, p.decode.memory.peak_mib_max);
    pp.input_tps_interval = iv.input_tps;
    pp.ttft_p50_interval = iv.ttft_p50_s;
    out.points.push_back(std::move(pp));
  }
  return "; in brackets for the disaggregated deployment, the 10th\u201390th percentile of the "
         "model's own form error alone (each pool's distance from the calibration, and the "
         "transfer, preallocation and router that no measurement has calibrated), as `ppsearch "
         "simulate` gives them";
}

}  // namespace

std::vector<PredictedPoint> PredictedPoints(const predict::SearchPrediction& prediction) {
  std::vector<PredictedPoint> out;
  for (size_t i = 0; i < prediction.points.size(); ++i) {
    const predict::PointPrediction& p = prediction.points[i].prediction;
    PredictedPoint pp;
    static_cast<stats::Figures&>(pp) = stats::FiguresOf(p.metrics, p.layout.gpus());
    pp.layout = p.layout;
    pp.concurrency = p.concurrency;
    pp.stages = p.stage_shares;
    for (const auto& s : p.memory.stages) pp.stage_peak_mib.push_back(s.peak_mib);
    pp.peak_gpu_mib = p.memory.peak_mib_max;
    pp.peak_spread_mib = p.memory.peak_spread_mib;
    pp.pp_max_micro_batch_size = p.sim.pp_max_micro_batch_size;
    pp.cap1_input_tps = prediction.points[i].cap1_input_tps;
    pp.roomier_partition = prediction.points[i].roomier_partition;
    pp.roomier_input_tps = prediction.points[i].roomier_input_tps;
    pp.roomier_peak_mib = prediction.points[i].roomier_peak_mib;
    if (const uncertainty::PointUncertainty* u = prediction.IntervalOf(i);
        u != nullptr && !u->members.empty()) {
      pp.input_tps_interval = u->input_tps;
      pp.ttft_p50_interval = u->ttft_p50_s;
      pp.ttft_p95_interval = u->ttft_p95_s;
      pp.peak_gpu_mib_interval = u->peak_gpu_mib;
    }
    out.push_back(std::move(pp));
  }
  return out;
}

std::optional<std::string> OverlapNote(const RunPrediction& prediction,
                                       const spec::LayoutSpec& primary,
                                       const spec::LayoutSpec& runner_up,
                                       const decide::Objective& objective) {
  auto levels = [&](const spec::LayoutSpec& layout) {
    std::vector<uncertainty::LevelInterval> out;
    for (const PredictedPoint& p : prediction.points) {
      const std::optional<uncertainty::Interval> i =
          objective.Of(decide::ObjectiveFields<std::optional<uncertainty::Interval>>{
              p.input_tps_interval, p.ttft_p50_interval, std::nullopt, std::nullopt, std::nullopt});
      if (p.layout == layout && i) out.push_back({p.concurrency, *i});
    }
    return out;
  };
  const auto a = levels(primary), b = levels(runner_up);
  if (a.empty() || b.empty()) return std::nullopt;
  return uncertainty::OverlapNote(primary, a, runner_up, b, objective.label());
}

RunPrediction PredictRun(const inputs::SearchInputs* inputs, bool simulated,
                         const std::string& calibration_path) {
  RunPrediction out;
  const bool calibrated = !calibration_path.empty();
  if (!simulated && !calibrated) {
    out.note =
        "No prediction: this run was measured and holds no calibration in metadata/; `ppsearch "
        "simulate SPEC --calibration FILE --html FILE` shows the simulator's view of it";
    return out;
  }
  if (inputs == nullptr) {
    out.note = "No prediction: the model config or hardware profile did not load";
    return out;
  }
  cost::Calibration calibration;
  if (calibrated) {
    Result<cost::Calibration> loaded = evidence::LoadCalibration(calibration_path);
    if (!loaded.ok()) {
      out.note = "No prediction: " + loaded.error().message;
      return out;
    }
    calibration = *loaded;
  }
  predict::SearchOptions options;  // the default draws
  Result<cost::ModelFormScales> model_form = uncertainty::ModelFormFor(calibration);
  if (!model_form.ok()) {
    out.note = "No prediction: " + model_form.error().message;
    return out;
  }
  options.model_form = *model_form;
  out.points = PredictedPoints(predict::PredictSearch(*inputs, calibration, options));
  const std::string deployment = AddDeploymentPoints(*inputs, calibration, *model_form, out);
  const std::string source =
      std::string("Predicted by the simulator from this run's spec") +
      (calibrated ? " and calibration (`metadata/calibration.json`)"
                  : " with the hardware profile as shipped (no calibration)") +
      (simulated ? ", without repeat noise: the central value the repeats scatter around"
                 : ": what the calibrated model expects, to set against the measured medians");
  if (inputs->plan.layouts.empty()) {  // a disaggregated deployment alone
    out.note = source + deployment;
    return out;
  }
  out.interval_members = options.ensemble.members;
  out.note = source +
             fmt::format(
                 "; in brackets, the 10th\u201390th percentile over {} draws of the parameters "
                 "the calibration left uncertain, widened by the model's own form error (fitted to "
                 "the backtest's misses; not measurement noise)",
                 options.ensemble.members) +
             deployment;
  return out;
}

}  // namespace ppsearch::analysis
