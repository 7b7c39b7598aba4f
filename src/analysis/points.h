#pragma once
// Points of a search (layout x concurrency): medians over the completed
// repeats, their spread, deltas against the baseline; and memory per layout
// (peak, headroom, balance across pipeline stages).

#include <optional>
#include <string>
#include <vector>

#include "analysis/sample.h"
#include "decide/sla.h"
#include "evidence/run_summary.h"
#include "plan/plan.h"
#include "spec/spec.h"

namespace ppsearch::analysis {

// One point's medians over its repeats (evidence/run_summary.h: summary.json
// writes it as it is).
using PointSummary = evidence::PointSummary;

// The point's figures for the SLA test: each metric's p99, the median over
// repeats of each repeat's p99 (as every figure of the decision is a median
// of repeats); TPOT and ITL only for a decode point, and only the figures
// the point holds (PointSummary::held).
decide::SlaValues SlaFigures(const PointSummary& p);
// The median of PointSummary the SLA test reads for `m`.
double stats::Figures::*SlaMember(decide::SlaMetric m);
// Why a point measured here lacks `member` (evidence::ValueOf unset): its
// samples were synthesized from a file of medians and do not reproduce it
// (SampleAnalysis::Holds), or no request generated a second token (a
// decode figure).
std::string WhyUnknown(const PointSummary& p, double stats::Figures::*member);
// What the decision of `spec` judges that samples holding only `held`
// (stats::FigureField names, as SampleAnalysis::Holds reads them: a replay
// of a CSV of medians) lack: one line for the objective's figure and one
// for each set SLA limit's, each at its spec origin, saying that `source`
// does not hold it. Empty when every one is held.
std::vector<std::string> DecisionFiguresNotHeld(const spec::Spec& spec,
                                                const std::vector<std::string>& held,
                                                const std::string& source);

// One summary per (layout, concurrency) that has at least one completed
// sample, in the order of `layouts` then `concurrency`. A sample with
// impossible evidence (SampleAnalysis::trustworthy) is in no summary.
std::vector<PointSummary> AggregatePoints(const std::vector<SampleAnalysis>& samples,
                                          const std::vector<spec::LayoutSpec>& layouts,
                                          const std::vector<int>& concurrency);

// Marks the rows of `baseline` as baseline rows and fills every other row's
// deltas against `baseline_rows` at the same concurrency. When the baseline
// is imported, this run's rows of the same layout are compared, not marked.
void ApplyBaseline(std::vector<PointSummary>& points,
                   const std::vector<PointSummary>& baseline_rows,
                   const spec::LayoutSpec& baseline);

using StagePeak = evidence::StagePeak;
using LayoutMemory = evidence::LayoutMemory;

// Memory of one layout over its completed samples. GPUs map to stages
// through `plan`'s rank map (node + local GPU -> rank -> pp_rank); without a
// plan the stages are left empty.
LayoutMemory AnalyseLayoutMemory(const spec::LayoutSpec& layout,
                                 const std::vector<SampleAnalysis>& samples,
                                 const plan::LayoutPlan* plan);

}  // namespace ppsearch::analysis
