#pragma once
// One benchmark sample, analysed from its evidence: request counts and
// latency statistics from the per-request records, failures from every
// node's server log, and the peak GPU memory of every GPU. Pure: the reader
// (analysis/run.h) loads the files into SampleInputs.

#include <optional>
#include <string>
#include <vector>

#include "analysis/log_scan.h"
#include "evidence/bench_summary.h"
#include "evidence/evidence.h"
#include "evidence/validation.h"
#include "nvidia_smi/gpu_memory.h"
#include "spec/spec.h"
#include "stats/point_figures.h"
#include "stats/stats.h"
#include "workload/request_record.h"

namespace ppsearch::analysis {

struct LogText {
  std::string file;  // relative to the run directory, e.g. "service/<sample>/601.log"
  std::string text;
};

// One node's nvidia-smi CSV; it may hold several snapshots (lines repeat per GPU).
struct NodeGpuSnapshot {
  std::string host;
  int node = -1;  // index of host in the spec's cluster.hosts; -1 when unknown
  std::vector<nvidia_smi::GpuMemory> gpus;
};

struct SampleInputs {
  evidence::SampleId id;
  evidence::SampleState state = evidence::SampleState::kCompleted;
  std::vector<workload::RequestRecord> records;
  int requests_expected = 0;        // workload.requests of the spec
  int64_t output_tokens_asked = 0;  // workload.output_tokens; 0 = not checked
  // The longest prompt and output the workload draws (evidence::
  // MaxInputTokens, MaxOutputTokens); 0 = not checked.
  int64_t max_input_tokens = 0;
  int64_t max_output_tokens = 0;
  // The simulated repeat's stretch of every timestamp (the bench summary's
  // noise_factor); unset for measured records (evidence::RecordLimits).
  std::optional<double> noise_factor;
  // Records synthesized from a CSV of medians (the bench summary's
  // synthesis): they hold the file's figures, not a client's timeline, so
  // their overlap is not checked against the concurrency.
  bool synthesized = false;
  // Of a synthesized sample, the figures it reproduces from the file
  // (BenchSynthesis::figures_from_file, defaulted as there).
  std::vector<std::string> figures_from_file;
  decide::SlaLimits sla;  // [decision]'s limits, which goodput counts against
  // The shortest measured window (first send to last completion) a sample
  // may have to count; 0 = no minimum.
  double min_window_s = 0;
  // The longest a sample may run (evidence::SampleDeadlineS): no request
  // time lies past it; 0 = not checked.
  double deadline_s = 0;
  // What the engine said about the sample (the manifest's "verdict" and
  // "detail"); none when it said nothing.
  std::optional<evidence::Verdict> engine_verdict;
  std::string engine_detail;
  // Wall seconds from the sample's start until its server answered (the
  // bench summary's ready_s: a server start, or ~0 for a reused server);
  // none when the engine does not time it (the simulated one).
  std::optional<double> ready_s;
  // A disaggregated deployment's pools in the sample (the bench summary's
  // `disaggregation` group); none for an aggregated layout.
  std::optional<evidence::BenchDisaggregation> disaggregation;
  std::vector<LogText> logs;
  int logs_missing = 0;  // nodes of the cluster whose server log is absent or unreadable
  std::vector<NodeGpuSnapshot> gpu;
  std::vector<std::string> problems;  // evidence that is missing or unreadable
  // Evidence found impossible while reading (a link or FIFO where a file
  // belongs, a corrupt bench summary, conflicting manifest verdicts);
  // AnalyseSample adds what the records and snapshots show.
  std::vector<evidence::EvidenceProblem> invalid_evidence;
};

// Highest used memory of one GPU over its node's snapshots.
struct GpuPeak {
  std::string host;
  int node = -1;
  int local_gpu = 0;
  double used_mib = 0;
  double total_mib = 0;
};

// Highest used memory over one node's GPUs and snapshots.
struct NodePeak {
  std::string host;
  double used_mib = 0;
  double total_mib = 0;  // of the GPU with the peak
};

struct SampleAnalysis {
  evidence::SampleId id;
  std::string name;  // id.str()
  evidence::SampleState state = evidence::SampleState::kCompleted;
  stats::SampleMetrics metrics;
  int requests_expected = 0;
  int64_t output_tokens_asked = 0;
  double min_window_s = 0;
  std::optional<evidence::Verdict> engine_verdict;
  std::string engine_detail;
  std::optional<double> ready_s;               // SampleInputs::ready_s
  bool synthesized = false;                    // SampleInputs::synthesized
  std::vector<std::string> figures_from_file;  // SampleInputs::figures_from_file
  // Whether the sample's `member` is a figure it measured or reproduced
  // from its file: every figure of a measured sample; of a synthesized one,
  // those in figures_from_file and what is derived from its input TPS
  // (request rate, input TPS per GPU). The rest of a synthesized sample's
  // timeline (a p99 flat above the p95, one-token latencies, no output) is
  // made up.
  bool Holds(double stats::Figures::*member) const;
  std::optional<evidence::BenchDisaggregation> disaggregation;  // SampleInputs::disaggregation
  int prompt_length_mismatches = 0;  // ok requests whose server-reported prompt length differs
  int empty_outputs = 0;  // ok requests that returned no generated token although asked for one
  int logs_missing = 0;
  std::vector<LogFinding> findings;
  std::vector<GpuPeak> gpus;
  std::vector<NodePeak> nodes;          // in the order the node CSVs were given
  std::optional<double> peak_gpu_mib;   // highest used over all GPUs
  std::optional<double> gpu_total_mib;  // total of the GPU with the peak
  std::optional<double> headroom_mib;   // worst rank: min over GPUs of total - used
  // Every problem: the inputs' strings, then each invalid_evidence's Text().
  std::vector<std::string> problems;
  // Evidence that cannot be true (evidence/validation.h): the sample's
  // numbers are not computed, and it is in no median, memory peak or decision.
  std::vector<evidence::EvidenceProblem> invalid_evidence;
  evidence::Verdict verdict = evidence::Verdict::kOk;  // SampleVerdict(*this), set by AnalyseSample
  std::string detail;                                  // SampleVerdictDetail(*this)

  bool completed() const { return state == evidence::SampleState::kCompleted; }
  // The sample ended with a verdict: it completed or failed, or the engine
  // gave one (a failed start, a death, a timeout). One started or
  // interrupted without one has none, whatever its records show: it is a
  // missing sample.
  bool has_verdict() const {
    return completed() || state == evidence::SampleState::kFailed || engine_verdict.has_value();
  }
  // Requests the sample should have sent: the larger of records and the spec's count.
  int requests_total() const;
  bool all_requests_ok() const;
  // The validity gate on ok requests: every one generated a token (when the
  // workload asks for one), the server saw the prompt length sent, and the
  // window is at least min_window_s.
  bool passes_validity_gate() const;
  // Completed, verdict "ok" and no missing evidence.
  bool valid() const;
  // No impossible evidence: its numbers mean something (they may still be
  // the numbers of a failed sample).
  bool trustworthy() const { return invalid_evidence.empty(); }
  // Its figures (throughput, latencies) were measured: its evidence is
  // trustworthy and some request completed. They are over the completed
  // requests; with none, a throughput of 0 and a TTFT of 0 s would be made
  // up, so the sample's figures are unknown and in no median.
  bool measured_figures() const { return trustworthy() && metrics.requests_completed > 0; }
};

SampleAnalysis AnalyseSample(const SampleInputs& in);

// What the spec says about every sample (requests expected, output tokens
// asked, the minimum window), for `report` and for the runner's verdict alike.
SampleInputs SampleInputsFor(const spec::Spec& spec, const evidence::SampleId& id);

// The sample's verdict (evidence::Verdict), one definition for
// the runner (which writes it on the manifest) and the report:
//   0. invalid_evidence: evidence that cannot be true (even an engine
//      verdict, which conflicting manifest lines make unknowable);
//   1. an engine verdict other than ok (engine_failed_to_start,
//      engine_died, timeout, preflight_failed) stands;
//   2. requests_failed: a request failed or is missing, or the validity gate
//      fails (passes_validity_gate);
//   3. log_findings: a server log holds a failure line;
//   4. ok.
evidence::Verdict SampleVerdict(const SampleAnalysis& s);
// One sentence saying why: the engine's detail for an engine verdict, else
// what the evidence shows ("3 of 40 requests failed (3 request errors)").
std::string SampleVerdictDetail(const SampleAnalysis& s);

}  // namespace ppsearch::analysis
