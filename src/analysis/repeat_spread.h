#pragma once
// Where `decision.max_repeat_spread` is judged, and on what.
//
// In a closed loop it judges the input TPS's spread over the repeats: the
// layout alone sets that figure, so repeats that disagree mean a server
// that does not reproduce. In an open loop (workload.request_rate > 0) each
// repeat draws its own Poisson arrivals (the sample's seed moves with the
// repeat), and they set every figure's spread: the sends of N arrivals last
// a time that varies by about 1 / sqrt(N), so the input TPS of a layout
// that keeps up spreads with them, and its TTFT with the queues they form
// (on the Kimi K3 example at 0.15 requests/s, 40 requests, three repeats:
// input TPS by 4-8% and TTFT p50 by 11-29%, on every layout). Judging
// either would exclude layouts for the arrivals, so there the spreads are
// shown, not judged.

#include <optional>

#include "evidence/run_summary.h"
#include "spec/spec.h"

namespace ppsearch::analysis {

// Whether max_repeat_spread is judged under `spec` (a closed loop).
bool RepeatSpreadJudged(const spec::Spec& spec);
// Why it is not, for the report.
extern const char* const kOpenLoopSpreadWhy;

// The point's known spreads over repeats: unset over fewer than two repeats
// with figures, or where a file's row (or a replayed sample) does not hold
// the figure.
std::optional<double> KnownInputTpsSpread(const evidence::PointSummary& p);
std::optional<double> KnownTtftP50Spread(const evidence::PointSummary& p);

// The spread the rule judges at `p` (input TPS's), unset where it is not
// judged or not known.
std::optional<double> JudgedRepeatSpread(const spec::Spec& spec, const evidence::PointSummary& p);

}  // namespace ppsearch::analysis
