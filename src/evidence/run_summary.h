#pragma once
// What summary.json holds (evidence/summary_json.h writes it): a run's
// points, the baseline rows, memory per layout, the decision and the
// checks, as plain numbers and names. analysis/ computes the points, the
// memory and the decision in these types (it names them as its own); the
// checks are what report/ takes from the analysed samples and the baseline's
// confounder check.

#include <optional>
#include <string>
#include <vector>

#include "decide/objective.h"
#include "decide/sla.h"
#include "evidence/evidence.h"
#include "evidence/validation.h"
#include "evidence/verdict.h"
#include "spec/spec.h"
#include "stats/point_figures.h"

namespace ppsearch::evidence {

// One point of a search (layout x concurrency) over its completed repeats.
struct PointSummary {
  spec::LayoutSpec layout;
  int concurrency = 0;
  int repeats = 0;        // completed samples aggregated (none with impossible evidence)
  int valid_repeats = 0;  // of those, verdict "ok" and no evidence problem
  // Per sample: the fewest completed requests over the repeats, and the
  // requests each sample should have sent.
  int requests_completed = 0;
  int requests_total = 0;
  // Medians over repeats (stats::Median) of each figure, the derived ones
  // (per GPU, per user) taken from the medians; `median.decode`: some
  // sample generated more than one token per request. For a one-token
  // workload the output throughput counts first tokens.
  stats::Figures median;
  // Spreads over repeats ((max - min) / median, stats::Spread).
  double input_tps_spread = 0;
  double ttft_p50_s_spread = 0;
  std::optional<double> peak_gpu_mib;   // highest over repeats and GPUs
  std::optional<double> gpu_total_mib;  // of that GPU
  std::optional<double> headroom_mib;   // worst rank over repeats: min of total - used
  // Against the baseline at the same concurrency: value / baseline - 1.
  std::optional<double> input_tps_vs_baseline;
  std::optional<double> ttft_p50_vs_baseline;
  bool is_baseline = false;  // a row of the baseline
  bool imported = false;     // read from an imported CSV or run, not measured here
  // Which of its columns (evidence::PointColumns(), by index) are known:
  // read from a file, those the file held; measured here, all but the
  // medians of a point no repeat of which completed a request and the
  // spreads of one with fewer than two such repeats (ForgetMedians,
  // ForgetSpreads). A figure not held is unknown, not 0. Empty: every
  // figure is known.
  std::vector<bool> held;
};

// The figures a decide::Objective ranks a point by: medians over repeats.
inline decide::ObjectiveFigures ObjectiveMedians(const PointSummary& p) {
  return {p.median.input_tps, p.median.ttft_p50_s, p.median.output_tps, p.median.output_tps_per_gpu,
          p.median.goodput_rps};
}
// Their spreads over repeats, where the point records one (input TPS and
// TTFT p50, the objectives an adaptive run chooses by); 0 for the others.
inline decide::ObjectiveFigures ObjectiveSpreads(const PointSummary& p) {
  return {p.input_tps_spread, p.ttft_p50_s_spread, 0, 0, 0};
}
// Against the baseline, where the point records it (input TPS and TTFT p50).
inline decide::ObjectiveFields<std::optional<double>> ObjectiveVsBaseline(const PointSummary& p) {
  return {p.input_tps_vs_baseline, p.ttft_p50_vs_baseline, std::nullopt, std::nullopt,
          std::nullopt};
}

struct StagePeak {
  int pp_rank = 0;
  double peak_mib = 0;  // highest used over the stage's GPUs and the samples
};

// Memory of one layout over its completed samples.
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

// An SLA limit a layout missed at one concurrency level.
struct SlaMissAt {
  int concurrency = 0;
  decide::SlaMiss miss;
};

struct LayoutVerdict {
  spec::LayoutSpec layout;
  bool qualifies = false;
  std::vector<std::string> exclusions;  // why it does not qualify, one sentence each
  std::vector<std::string> notes;       // kept findings (failure_policy "warn"), mismatches
  double score = 0;                     // qualifying layouts only
  std::optional<double> headroom_mib;
  std::vector<SlaMissAt> sla_misses;  // also among the exclusions, as sentences
};

// The decision under a spec's [decision] policy (analysis/decision.h says
// how it is made).
struct Decision {
  decide::Objective objective;          // the spec's [decision] objective
  decide::SlaLimits sla;                // the limits every layout was held to
  std::vector<LayoutVerdict> verdicts;  // in sweep order
  std::optional<spec::LayoutSpec> primary;
  std::optional<spec::LayoutSpec> fallback;
  std::string primary_reason;
  std::string fallback_reason;
  std::string none_reason;  // when nothing qualifies
  std::vector<std::string> flags_not_to_carry_forward;

  bool any_qualifies() const { return primary.has_value(); }
};

// One sample as the checks list it. A sample whose evidence cannot be true
// measured nothing: its counts and figures are unknown (unset), not zero.
struct SampleCheck {
  struct Node {
    std::string host;
    double peak_used_mib = 0;
    double total_mib = 0;  // of the GPU with the peak
  };
  std::string sample;  // "pp1-tp32-ep4_c8_r1"
  SampleState state = SampleState::kCompleted;
  bool valid = false;  // completed, verdict "ok" and no missing evidence
  std::optional<int> requests_completed, requests_total, request_errors, prompt_length_mismatches;
  std::optional<double> input_tps, ttft_p50_s;
  int findings = 0;  // log findings
  std::optional<double> peak_gpu_mib, headroom_mib;
  std::vector<Node> nodes;
  std::vector<std::string> problems;
  std::vector<EvidenceProblem> invalid_evidence;
  // None for a sample that did not end (analysis::SampleAnalysis::has_verdict).
  std::optional<Verdict> verdict;
  std::string detail;
};

// A failure line in a server log.
struct LogFindingCheck {
  std::string sample;
  std::string kind;  // "CUDA out of memory", "NCCL failure", ...
  std::string file;  // relative to the run directory
  int line = 0;      // 1-based
  std::string text;
};

// A sweep sample that did not complete: state "not run", "started",
// "failed" or "interrupted".
struct MissingSampleCheck {
  std::string sample;
  std::string state;
};

// The confounder check of two sides' recorded settings (compare/), as
// summary.json and `ppsearch compare --json` write it.
struct ConfounderCheck {
  struct Difference {
    std::string key;       // "engine.args.chunked-prefill-size"
    std::string setting;   // how the report names it
    std::string kind;      // "server flag", "workload", "GPU", ...
    std::string severity;  // "harmful", "relevant" or "cosmetic"
    std::string reason;
    std::string a, b;  // each side's value
  };
  std::vector<Difference> differences;
  std::vector<std::string> unchecked;
  bool comparable = true;
  std::string verdict;
};

struct RunChecks {
  int samples_expected = 0;
  std::vector<SampleCheck> samples;
  std::vector<MissingSampleCheck> missing_samples;
  int request_errors = 0;            // over the samples
  int prompt_length_mismatches = 0;  // over the samples
  std::vector<LogFindingCheck> log_findings;
  std::vector<std::string> evidence_problems;
  std::vector<std::string> baseline_comparability;
  std::optional<ConfounderCheck> baseline_confounders;  // an imported baseline's
  std::vector<std::string> spec_warnings;
  std::vector<std::string> warnings;
};

struct BaselineSummary {
  std::optional<spec::LayoutSpec> layout;
  std::string source;  // "this run", or the imported CSV / run directory
  std::string file;    // what the rows were read from; "" for this run's
  std::string note;
  bool imported = false;
  std::vector<PointSummary> rows;
};

struct RunSummary {
  std::string run_id;
  std::string engine;  // "sim" | "sglang" | "replay"
  bool simulated = false;
  std::vector<PointSummary> points;
  BaselineSummary baseline;
  std::vector<LayoutMemory> memory;
  Decision decision;
  RunChecks checks;
};

}  // namespace ppsearch::evidence
