#include "report/prediction.h"

#include <fmt/format.h>

#include <filesystem>

#include "cost/calibration.h"
#include "evidence/evidence.h"
#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "plan/spec_hardware.h"
#include "uncertainty/ensemble.h"
#include "uncertainty/overlap.h"
#include "uncertainty/summary.h"

namespace ppsearch::report {

const PredictedPoint* RunPrediction::Find(const spec::LayoutSpec& layout, int concurrency) const {
  for (const PredictedPoint& p : points)
    if (p.layout == layout && p.concurrency == concurrency) return &p;
  return nullptr;
}

PredictedPoint FromPointPrediction(const predict::PointPrediction& p) {
  PredictedPoint out;
  out.layout = p.layout;
  out.concurrency = p.concurrency;
  out.input_tps = p.metrics.input_tps;
  out.ttft_p50_s = p.metrics.ttft_s.p50;
  out.ttft_p95_s = p.metrics.ttft_s.p95;
  out.stages = p.stage_shares;
  for (const auto& s : p.memory.stages) out.stage_peak_mib.push_back(s.peak_mib);
  return out;
}

void AttachIntervals(const std::vector<uncertainty::PointUncertainty>& spread,
                     std::vector<PredictedPoint>& points) {
  for (PredictedPoint& p : points)
    for (const uncertainty::PointUncertainty& u : spread)
      if (u.layout == p.layout && u.concurrency == p.concurrency && !u.members.empty()) {
        p.input_tps_interval = u.input_tps;
        p.ttft_p50_interval = u.ttft_p50_s;
        p.ttft_p95_interval = u.ttft_p95_s;
        p.peak_gpu_mib_interval = u.peak_gpu_mib;
      }
}

std::optional<std::string> OverlapNote(const RunPrediction& prediction,
                                       const spec::LayoutSpec& primary,
                                       const spec::LayoutSpec& runner_up, bool ttft) {
  auto levels = [&](const spec::LayoutSpec& layout) {
    std::vector<uncertainty::LevelInterval> out;
    for (const PredictedPoint& p : prediction.points) {
      const auto& i = ttft ? p.ttft_p50_interval : p.input_tps_interval;
      if (p.layout == layout && i) out.push_back({p.concurrency, *i});
    }
    return out;
  };
  const auto a = levels(primary), b = levels(runner_up);
  if (a.empty() || b.empty()) return std::nullopt;
  return uncertainty::OverlapNote(primary, a, runner_up, b, uncertainty::ObjectiveName(ttft));
}

RunPrediction PredictRun(const analysis::RunAnalysis& a) {
  RunPrediction out;
  const std::string cal_path = evidence::RunPaths{a.evidence.run_dir}.metadata("calibration.json");
  const bool calibrated = std::filesystem::exists(cal_path);
  if (!a.evidence.simulated && !calibrated) {
    out.note =
        "No prediction: this run was measured and holds no calibration in metadata/; `ppsearch "
        "simulate SPEC --calibration FILE --html FILE` shows the simulator's view of it";
    return out;
  }
  if (!a.plan) {
    out.note = "No prediction: the model config or hardware profile did not load";
    return out;
  }
  cost::Calibration calibration;
  if (calibrated) {
    Result<cost::Calibration> loaded = cost::LoadCalibration(cal_path);
    if (!loaded.ok()) {
      out.note = "No prediction: " + loaded.error().message;
      return out;
    }
    calibration = *loaded;
  }
  const spec::Spec& spec = a.spec();
  Result<model::ModelDesc> model = model::LoadModel(spec.engine.model_config);
  Result<hardware::HardwareProfile> hw = plan::LoadSpecHardware(spec);
  if (!model.ok() || !hw.ok()) {
    out.note = "No prediction: " + (model.ok() ? hw.error().message : model.error().message);
    return out;
  }
  std::vector<uncertainty::PointJob> jobs;
  for (const plan::LayoutPlan& lp : a.plan->layouts) {
    if (!lp.valid) continue;
    for (int c : spec.sweep.concurrency) {
      predict::PointOptions po;
      po.concurrency = c;
      po.seed = spec.workload.seed;
      const predict::PointPrediction p =
          predict::PredictPoint(lp, spec, *model, *hw, calibration, po);
      out.points.push_back(FromPointPrediction(p));
      jobs.push_back({&lp, po, uncertainty::ValuesOf(p)});
    }
  }
  const uncertainty::EnsembleOptions eo;
  AttachIntervals(uncertainty::Propagate(jobs, {&spec, &*model, &*hw},
                                         uncertainty::DrawEnsemble(calibration, *hw, eo)),
                  out.points);
  out.interval_members = eo.members;
  out.note = std::string("Predicted by the simulator from this run's spec") +
             (calibrated ? " and calibration (`metadata/calibration.json`)"
                         : " with the hardware profile as shipped (no calibration)") +
             (a.evidence.simulated
                  ? ", without repeat noise: the central value the repeats scatter around"
                  : ": what the calibrated model expects, to set against the measured medians") +
             fmt::format(
                 "; in brackets, the 10th\u201390th percentile over {} draws of the parameters "
                 "the calibration left uncertain (not measurement noise)",
                 eo.members);
  return out;
}

}  // namespace ppsearch::report
