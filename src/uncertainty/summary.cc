#include "uncertainty/summary.h"

namespace ppsearch::uncertainty {

std::vector<LevelInterval> ObjectiveIntervals(const std::vector<PointUncertainty>& points,
                                              const spec::LayoutSpec& layout, bool ttft) {
  std::vector<LevelInterval> out;
  for (const PointUncertainty& p : points)
    if (p.layout == layout) out.push_back({p.concurrency, ttft ? p.ttft_p50_s : p.input_tps});
  return out;
}

std::string ObjectiveName(bool ttft) { return ttft ? "TTFT p50" : "input TPS"; }

UncertaintySummary Summarize(const std::vector<PointUncertainty>& points, const Ensemble& ensemble,
                             const SummaryInputs& in) {
  UncertaintySummary s;
  s.sensitivity = ParameterSensitivity(points, ensemble);
  s.ranking = RankLayouts(points, in.candidates, in.levels, in.ttft);
  s.next = BestNextMeasurement(points, s.ranking, in.levels, in.ttft, in.measured);
  if (s.ranking.size() >= 2) {
    const spec::LayoutSpec& a = s.ranking[0].layout;
    const spec::LayoutSpec& b = s.ranking[1].layout;
    const std::vector<LevelInterval> ia = ObjectiveIntervals(points, a, in.ttft);
    const std::vector<LevelInterval> ib = ObjectiveIntervals(points, b, in.ttft);
    s.overlap = !OverlappingLevels(ia, ib).empty();
    s.overlap_note = OverlapNote(a, ia, b, ib, ObjectiveName(in.ttft));
  }
  return s;
}

}  // namespace ppsearch::uncertainty
