#include "analysis/repeat_spread.h"

#include "evidence/point_columns.h"

namespace ppsearch::analysis {
namespace {

// Known where the point has two repeats or more and holds both the spread
// and the figure's median (a replayed sample that does not reproduce the
// figure leaves its spread a synthesis's).
std::optional<double> Known(const evidence::PointSummary& p, double evidence::PointSummary::*spread,
                            double stats::Figures::*median) {
  if (p.repeats < 2 || !evidence::ValueOf(*evidence::ColumnOf(median), p)) return std::nullopt;
  return evidence::ValueOf(*evidence::ColumnOf(spread), p);
}

}  // namespace

const char* const kOpenLoopSpreadWhy =
    "each repeat of an open loop draws its own Poisson arrivals, which set how much its figures "
    "vary";

bool RepeatSpreadJudged(const spec::Spec& spec) { return !(spec.workload.request_rate > 0); }

std::optional<double> KnownInputTpsSpread(const evidence::PointSummary& p) {
  return Known(p, &evidence::PointSummary::input_tps_spread, &stats::Figures::input_tps);
}

std::optional<double> KnownTtftP50Spread(const evidence::PointSummary& p) {
  return Known(p, &evidence::PointSummary::ttft_p50_s_spread, &stats::Figures::ttft_p50_s);
}

std::optional<double> JudgedRepeatSpread(const spec::Spec& spec, const evidence::PointSummary& p) {
  if (!RepeatSpreadJudged(spec)) return std::nullopt;
  return KnownInputTpsSpread(p);
}

}  // namespace ppsearch::analysis
