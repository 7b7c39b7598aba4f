#pragma once
// Points of a search (layout x concurrency): medians over the completed
// repeats, their spread, deltas against the baseline; and memory per layout
// (peak, headroom, balance across pipeline stages).

#include <optional>
#include <string>
#include <vector>

#include "analysis/sample.h"
#include "decide/sla.h"
#include "plan/plan.h"
#include "spec/spec.h"

namespace ppsearch::analysis {

struct PointSummary {
  spec::LayoutSpec layout;
  int concurrency = 0;
  int repeats = 0;        // completed samples aggregated (none with impossible evidence)
  int valid_repeats = 0;  // of those, verdict "ok" and no evidence problem
  // Per sample: the fewest completed requests over the repeats, and the
  // requests each sample should have sent.
  int requests_completed = 0;
  int requests_total = 0;
  // Medians over repeats (stats::Median) and spreads ((max - min) / median, stats::Spread).
  double input_tps_median = 0;
  double input_tps_spread = 0;
  double ttft_mean_s_median = 0;
  double ttft_p50_s_median = 0;
  double ttft_p50_s_spread = 0;
  double ttft_p95_s_median = 0;
  double ttft_p99_s_median = 0;
  double e2e_p50_s_median = 0;
  double e2e_p99_s_median = 0;
  // Requests/s meeting every [decision] SLA limit (stats' goodput); the
  // request throughput when no limit is set.
  double goodput_rps_median = 0;
  // Output throughput: medians over repeats (for a one-token workload it
  // counts first tokens). Decode, where the samples generated more than one
  // token per request (decode): medians over repeats of TPOT and ITL.
  bool decode = false;
  double output_tps_median = 0;
  double output_tps_per_gpu_median = 0;  // output_tps / (pp x tp) GPUs
  double tpot_p50_s_median = 0;
  // Throughput one user sees while decoding: 1 / tpot_p50_s_median, tokens/s.
  double output_tps_per_user = 0;
  double tpot_p99_s_median = 0;
  double itl_p99_s_median = 0;
  std::optional<double> peak_gpu_mib;   // highest over repeats and GPUs
  std::optional<double> gpu_total_mib;  // of that GPU
  std::optional<double> headroom_mib;   // worst rank over repeats: min of total - used
  // Against the baseline at the same concurrency: value / baseline - 1.
  std::optional<double> input_tps_vs_baseline;
  std::optional<double> ttft_p50_vs_baseline;
  bool is_baseline = false;  // a row of the baseline
  bool imported = false;     // read from an imported CSV or run, not measured here
};

// The point's figures for the SLA test: each metric's p99, the median over
// repeats of each repeat's p99 (as every figure of the decision is a median
// of repeats); TPOT and ITL only for a decode point.
decide::SlaValues SlaFigures(const PointSummary& p);

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

struct StagePeak {
  int pp_rank = 0;
  double peak_mib = 0;  // highest used over the stage's GPUs and the samples
};

struct LayoutMemory {
  spec::LayoutSpec layout;
  std::optional<double> peak_gpu_mib;      // highest per-GPU used over samples and GPUs
  std::optional<double> gpu_total_mib;     // total of that GPU
  std::optional<double> remaining_mib;     // gpu_total - peak
  std::optional<double> headroom_mib;      // worst rank: min over samples and GPUs of total - used
  std::string peak_where;                  // "host 603 GPU 5 (stage 2)"
  std::vector<StagePeak> stages;           // by pp_rank; empty without a rank map
  std::optional<double> stage_spread_mib;  // max stage peak - min stage peak
  bool imported = false;
};

// Memory of one layout over its completed samples. GPUs map to stages
// through `plan`'s rank map (node + local GPU -> rank -> pp_rank); without a
// plan the stages are left empty.
LayoutMemory AnalyseLayoutMemory(const spec::LayoutSpec& layout,
                                 const std::vector<SampleAnalysis>& samples,
                                 const plan::LayoutPlan* plan);

}  // namespace ppsearch::analysis
