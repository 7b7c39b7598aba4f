#include "uncertainty/summary.h"

namespace ppsearch::uncertainty {

std::vector<LevelInterval> ObjectiveIntervals(const std::vector<PointUncertainty>& points,
                                              const spec::LayoutSpec& layout,
                                              const decide::Objective& objective) {
  std::vector<LevelInterval> out;
  for (const PointUncertainty& p : points)
    if (p.layout == layout)
      out.push_back({p.concurrency, objective.Of(decide::ObjectiveFields<Interval>{
                                        p.input_tps, p.ttft_p50_s, p.output_tps, {}, {}})});
  return out;
}

UncertaintySummary Summarize(const std::vector<PointUncertainty>& points, const Ensemble& ensemble,
                             const SummaryInputs& in) {
  UncertaintySummary s;
  s.sensitivity = ParameterSensitivity(points, ensemble);
  s.ranking = RankLayouts(points, in.candidates, in.levels, in.objective);
  s.next = BestNextMeasurement(points, s.ranking, in.levels, in.objective, in.measured);
  if (s.ranking.size() >= 2) {
    const spec::LayoutSpec& a = s.ranking[0].layout;
    const spec::LayoutSpec& b = s.ranking[1].layout;
    const std::vector<LevelInterval> ia = ObjectiveIntervals(points, a, in.objective);
    const std::vector<LevelInterval> ib = ObjectiveIntervals(points, b, in.objective);
    s.overlap = !OverlappingLevels(ia, ib).empty();
    s.overlap_note = OverlapNote(a, ia, b, ib, in.objective.label());
  }
  return s;
}

}  // namespace ppsearch::uncertainty
