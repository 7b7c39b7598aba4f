#include "predict/search_points.h"

#include <map>

#include "decide/rules.h"
#include "inputs/search_inputs.h"
#include "plan/partition.h"

namespace ppsearch::predict {
namespace {

// The layouts the decision may pick, by the headroom rule on the predicted peak.
std::vector<spec::LayoutSpec> HeadroomCandidates(const inputs::SearchInputs& in,
                                                 const std::vector<SearchPoint>& points) {
  std::vector<spec::LayoutSpec> out;
  for (const plan::LayoutPlan& lp : in.plan.layouts)
    for (const SearchPoint& sp : points)
      if (sp.plan == &lp) {
        const double headroom =
            decide::HeadroomMib(in.hardware.memory_mib, sp.prediction.memory.peak_mib_max);
        if (decide::MeetsHeadroom(headroom, in.spec.decision.min_headroom_mib))
          out.push_back(lp.layout);
        break;
      }
  return out;
}

// A point request as the simulator's options: the spec's seed unless the
// request names one.
PointOptions OptionsOf(const inputs::SearchInputs& in, const PointRequest& request) {
  PointOptions po;
  po.concurrency = request.concurrency;
  po.seed = request.seed.value_or(in.spec.workload.seed);
  po.keep_trace = request.keep_trace;
  po.pp_max_micro_batch_size = request.pp_max_micro_batch_size;
  po.token_times = request.token_times;
  return po;
}

// A layout planned with the split that leaves it more room, and the spec
// that sets it.
struct RoomierLayout {
  std::vector<int> partition;
  spec::Spec spec;
  plan::LayoutPlan plan;
};

std::optional<RoomierLayout> RoomierLayoutOf(const inputs::SearchInputs& in,
                                             const plan::LayoutPlan& lp) {
  const std::optional<plan::RoomierSplit> split =
      plan::RoomierPartition(lp.layout, in.spec, in.model, in.hardware);
  if (!split) return std::nullopt;
  RoomierLayout out{split->partition, plan::WithPartition(in.spec, split->partition), {}};
  out.plan = plan::PlanLayout(lp.layout, out.spec, in.model, in.hardware);
  if (!out.plan.valid) return std::nullopt;
  return out;
}

}  // namespace

uncertainty::MemberValues ValuesOf(const PointPrediction& p) {
  uncertainty::MemberValues v;
  static_cast<stats::Figures&>(v) = stats::FiguresOf(p.metrics, p.layout.gpus());
  v.peak_gpu_mib = p.memory.peak_mib_max;
  return v;
}

PointPrediction PredictSearchPoint(const inputs::SearchInputs& in, const plan::LayoutPlan& layout,
                                   const cost::Calibration& calibration,
                                   const PointRequest& request) {
  return PredictPoint(layout, in.spec, in.model, in.hardware, calibration, OptionsOf(in, request));
}

double TensorBurstShare(const inputs::SearchInputs& in, const plan::LayoutPlan& layout,
                        const cost::Calibration& calibration, const PointRequest& request,
                        const stats::Figures& with) {
  const bool open = in.spec.workload.request_rate > 0;
  if (in.hardware.TensorBurstRatio() <= 1 || (open ? with.ttft_p50_s : with.input_tps) <= 0)
    return 0;
  hardware::HardwareProfile sustained = in.hardware;
  sustained.burst_window_ms = 0;
  sustained.burst_bf16_tflops = 0;
  const stats::Figures without = stats::FiguresOf(
      PredictPoint(layout, in.spec, in.model, sustained, calibration, OptionsOf(in, request))
          .metrics,
      layout.layout.gpus());
  if (open) return without.ttft_p50_s > 0 ? 1 - with.ttft_p50_s / without.ttft_p50_s : 0;
  return 1 - without.input_tps / with.input_tps;
}

const char* TensorBurstFigure(bool open_loop) { return open_loop ? "ttft_p50_s" : "input_tps"; }

std::vector<PointPrediction> PredictSearchPointEachInstance(const inputs::SearchInputs& in,
                                                            const plan::LayoutPlan& layout,
                                                            const cost::Calibration& calibration,
                                                            const PointRequest& request) {
  return PredictEachInstance(layout, in.spec, in.model, in.hardware, calibration,
                             OptionsOf(in, request));
}

std::vector<PlannedPoint> SearchPointsOf(const inputs::SearchInputs& in) {
  std::vector<PlannedPoint> out;
  for (const plan::LayoutPlan& lp : in.plan.layouts) {
    if (!lp.valid || NotModelled(lp)) continue;
    for (int c : in.spec.sweep.concurrency) out.push_back({&lp, c});
  }
  return out;
}

SearchPrediction PredictSearch(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                               const SearchOptions& options) {
  SearchPrediction out;
  out.ensemble = options.ensemble;
  std::map<const plan::LayoutPlan*, std::optional<RoomierLayout>> roomier;  // once per layout
  for (const PlannedPoint& pp : SearchPointsOf(in)) {
    const plan::LayoutPlan& lp = *pp.plan;
    PointRequest request;
    request.concurrency = pp.concurrency;
    request.keep_trace = options.keep_trace;
    request.token_times = options.token_times;
    SearchPoint sp;
    sp.prediction = PredictSearchPoint(in, lp, calibration, request);
    sp.plan = &lp;
    if (options.cap_check && lp.layout.pp > 1) {
      request.keep_trace = false;
      request.pp_max_micro_batch_size = 1;
      sp.cap1_input_tps = PredictSearchPoint(in, lp, calibration, request).metrics.input_tps;
    }
    if (options.partition_check && lp.layout.pp > 1) {
      auto it = roomier.find(&lp);
      if (it == roomier.end()) it = roomier.emplace(&lp, RoomierLayoutOf(in, lp)).first;
      if (const std::optional<RoomierLayout>& r = it->second) {
        PointRequest plain;
        plain.concurrency = pp.concurrency;
        const PointPrediction with = PredictPoint(r->plan, r->spec, in.model, in.hardware,
                                                  calibration, OptionsOf(in, plain));
        sp.roomier_partition = r->partition;
        sp.roomier_input_tps = with.metrics.input_tps;
        sp.roomier_peak_mib = with.memory.peak_mib_max;
      }
    }
    out.points.push_back(std::move(sp));
  }
  if (options.ensemble.members <= 0) return out;
  std::optional<uncertainty::Ensemble> own;
  const uncertainty::Ensemble& ensemble =
      options.drawn != nullptr
          ? *options.drawn
          : own.emplace(uncertainty::DrawEnsemble(calibration, in.hardware, options.ensemble));
  if (ensemble.members.empty()) return out;
  std::vector<uncertainty::PointJob> jobs;
  for (const SearchPoint& sp : out.points)
    jobs.push_back({sp.plan->layout, sp.prediction.concurrency, ValuesOf(sp.prediction)});
  const auto evaluate = [&](size_t job, const cost::Calibration& member) {
    const SearchPoint& sp = out.points[job];
    PointRequest request;
    request.concurrency = sp.prediction.concurrency;
    request.token_times = options.token_times;
    return ValuesOf(PredictSearchPoint(in, *sp.plan, member, request));
  };
  out.intervals = uncertainty::Propagate(jobs, ensemble, evaluate, options.threads);
  out.model_form = options.model_form;
  if (options.model_form) {
    for (uncertainty::PointUncertainty& u : out.intervals) {
      const uncertainty::Site site{u.layout,         in.spec.cluster.gpus_per_node,
                                   in.hardware.name, in.spec.workload.input_tokens,
                                   u.concurrency,    in.spec.workload.output_tokens};
      const uncertainty::Extrapolation d =
          uncertainty::FromCalibration(site, calibration, *options.model_form);
      uncertainty::ApplyModelForm(
          u, uncertainty::ModelFormSigma(*options.model_form, d),
          uncertainty::ModelFormSigma(*options.model_form, uncertainty::Compared(d)));
      out.extrapolation.push_back(d);
    }
  }
  uncertainty::SummaryInputs si;
  si.levels = in.spec.sweep.concurrency;
  si.objective = in.spec.decision.objective.Drawn();
  si.candidates = HeadroomCandidates(in, out.points);
  si.measured = options.measured;
  out.summary = uncertainty::Summarize(out.intervals, ensemble, si);
  return out;
}

}  // namespace ppsearch::predict
