#include "run/profile_evidence.h"

#include <algorithm>

#include "inputs/search_inputs.h"
#include "nsys/analysis_json.h"
#include "nsys/analyze.h"
#include "predict/search_points.h"
#include "util/json_text.h"

namespace ppsearch::run {

int TpSpanNodes(const plan::LayoutPlan& plan) {
  size_t span = 0;
  for (const auto& g : plan.tp_groups) span = std::max(span, g.nodes.size());
  return static_cast<int>(span);
}

evidence::PredictedBreakdown PredictedBreakdownOf(const SampleContext& context,
                                                  const inputs::SearchInputs& inputs,
                                                  const cost::Calibration& calibration) {
  predict::PointRequest request;
  request.concurrency = context.id.concurrency;
  request.seed = context.workload_seed;
  const predict::PointPrediction p =
      predict::PredictSearchPoint(inputs, *context.plan, calibration, request);
  evidence::PredictedBreakdown b;
  b.layout = context.plan->layout.Label();
  b.concurrency = context.id.concurrency;
  b.exposed_comm_share = p.exposed_comm_share;
  b.bubble_share = p.bubble_share;
  b.allreduce_per_forward = p.allreduce_per_forward;
  for (const auto& s : p.stage_shares)
    b.stages.push_back({s.compute, s.exposed_comm, s.transfer, s.overhead, s.idle});
  b.compute_classes = predict::MeanClassShares(p.stage_shares);
  return b;
}

Result<nlohmann::json> AnalyseExportFile(const spec::ProfileSpec& profile,
                                         const plan::LayoutPlan& plan) {
  PPS_ASSIGN_OR_RETURN(nsys::WindowChoice window,
                       nsys::ParseWindowChoice(profile.window, profile.gap_us));
  PPS_ASSIGN_OR_RETURN(nsys::ProfileAnalysis a, nsys::AnalyzeProfiles({profile.file}, window));
  nsys::ProfileContext c;
  c.pp = plan.layout.pp;
  c.tp = plan.layout.tp;
  c.ep = plan.layout.ep;
  c.tp_span_nodes = TpSpanNodes(plan);
  // Round-trip through text: nlohmann's ordered and plain JSON are distinct
  // types (and the export's names are bytes, not always UTF-8).
  return nlohmann::json::parse(JsonText(nsys::AnalysisJson(a, c)));
}

}  // namespace ppsearch::run
