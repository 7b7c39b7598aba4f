#pragma once
// The decision under a spec's [decision] policy: which layouts qualify, the
// primary and the fallback with their reasons, or why none qualifies.
//
// A layout qualifies when
//   - every sample of it in the sweep (layouts x concurrency x repeats)
//     completed, with all of its requests ok and no missing evidence;
//   - no server log of its samples holds a finding (failure_policy
//     "exclude"; under "warn" findings are listed but do not exclude);
//   - its repeat spread ((max - min) / median) is at most
//     max_repeat_spread at every concurrency level (input TPS's, in a
//     closed loop only: analysis/repeat_spread.h);
//   - its worst-rank headroom (min over samples and GPUs of total - used) is
//     at least min_headroom_mib;
//   - in an open loop, it kept up with the offered rate at every level
//     (FellBehind);
//   - it meets every SLA limit (decide::CheckSla) at every concurrency
//     level, on the point's figures (SlaFigures: the median over repeats of
//     each repeat's p99); a limit whose figure was not measured (TPOT of a
//     point without decode) excludes it too, never passes it.
// Qualifying layouts are scored by decide::RelativeScores of their objective
// medians (decide::Objective::Of) over the swept concurrency levels
// (ttft_p50: lower is better; the others higher), 1.0 meaning best everywhere. The highest score is
// the primary, the next the fallback. Layouts imported as a baseline are not candidates: their
// evidence is not in this run.

#include <optional>
#include <string>
#include <vector>

#include "analysis/points.h"
#include "analysis/sample.h"
#include "decide/sla.h"
#include "evidence/run_summary.h"
#include "spec/spec.h"

namespace ppsearch::analysis {

// The decision's types are summary.json's (evidence/run_summary.h).
using SlaMissAt = evidence::SlaMissAt;
using LayoutVerdict = evidence::LayoutVerdict;
using Decision = evidence::Decision;

// In an open loop (workload.request_rate > 0), why the point fell behind
// its offered rate (decide::HowBehind, with the repeats' median request
// throughput and first-token pace): "fell behind the offered 4.00
// requests/s at C<=64: ..."; "" where it kept up, in a closed loop, or where
// the point does not hold its end-to-end p50 (replayed from a file of
// medians). A layout that fell behind at any level is excluded: it did not
// serve that traffic, and its latencies either do not count the wait for a
// free slot under the cap, and flatter it, or grew with a queue in the
// server for as long as the sample lasted.
std::string FellBehind(const spec::Spec& spec, const PointSummary& p);

// `points` are this run's (not imported) summaries with baseline deltas
// applied; `flag_warnings` are the planner's spec-level warnings.
Decision Decide(const spec::Spec& spec, const std::vector<SampleAnalysis>& samples,
                const std::vector<PointSummary>& points, const std::vector<LayoutMemory>& memory,
                const std::vector<std::string>& flag_warnings);

}  // namespace ppsearch::analysis
