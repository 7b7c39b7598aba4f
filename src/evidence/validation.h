#pragma once
// Evidence that cannot be true. A sample whose files hold one of these says
// nothing about its layout: the numbers computed from it (a doubled
// throughput from a records file appended to itself, a negative TTFT, a
// 292-year latency, a GPU with more memory used than it has) would
// otherwise land in the tables and the medians as if measured. Each check
// returns named problems; analysis/sample marks the sample invalid with
// them (verdict invalid_evidence), leaves it out of every median and
// decision, and the report lists each problem with its file. The kinds are
// documented in docs/cluster.md ("Damaged evidence").

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/bench_summary.h"
#include "nvidia_smi/gpu_memory.h"
#include "spec/spec.h"
#include "util/result.h"
#include "workload/request_record.h"

namespace ppsearch::evidence {

struct EvidenceProblem {
  std::string kind;    // a name from the list below, e.g. "duplicate_request_id"
  std::string file;    // relative to the run directory, e.g. "raw/pp4-tp8-ep4_c8_r1.jsonl"
  std::string detail;  // what was found, with counts and a first example

  // "raw/pp4-tp8-ep4_c8_r1.jsonl: duplicate_request_id: ..."
  std::string Text() const;
};

// The kinds, as reports and summary.json spell them.
inline constexpr const char* kDuplicateRequestId = "duplicate_request_id";
inline constexpr const char* kMoreRecordsThanRequests = "more_records_than_requests";
inline constexpr const char* kEndBeforeSend = "end_before_send";
inline constexpr const char* kFirstTokenOutsideRequest = "first_token_outside_request";
inline constexpr const char* kChunksOutsideRequest = "chunks_outside_request";
inline constexpr const char* kTimeOutsideWindow = "time_outside_window";
inline constexpr const char* kRequestIdOutOfRange = "request_id_out_of_range";
inline constexpr const char* kLengthOutOfRange = "length_out_of_range";
inline constexpr const char* kStatusContradictsHttp = "status_contradicts_http";
inline constexpr const char* kMoreInFlightThanConcurrency = "more_in_flight_than_concurrency";
inline constexpr const char* kGpuMemoryOutOfRange = "gpu_memory_out_of_range";
inline constexpr const char* kGpuMemoryAboveTotal = "gpu_memory_above_total";
inline constexpr const char* kConflictingVerdicts = "conflicting_verdicts";
inline constexpr const char* kNotARegularFile = "not_a_regular_file";
inline constexpr const char* kUnreadableFile = "unreadable_file";
inline constexpr const char* kBenchSummaryMissing = "bench_summary_missing";
inline constexpr const char* kBenchSummaryCorrupt = "bench_summary_corrupt";
inline constexpr const char* kSimulatedContradictsRun = "simulated_contradicts_run";

// The longest a sample's benchmark may run: lifecycle.bench_timeout_s when
// set, else every wave of requests (requests + warm-up over the
// concurrency) taking the whole request_timeout_s, plus 60 s of slack. The
// real engine stops a benchmark at this deadline, so no request of a sample
// can be sent or end later.
double SampleDeadlineS(const spec::Spec& spec, int concurrency);

struct RecordLimits {
  int requests_expected = 0;  // workload.requests; 0 = not checked
  int64_t window_ns = 0;      // SampleDeadlineS in ns; 0 = not checked
  int concurrency = 0;        // the sample's; 0 = not checked
  // The longest prompt and output the spec's workload draws; 0 = not checked.
  int64_t max_input_tokens = 0;
  int64_t max_output_tokens = 0;
  // A simulated sample's stretch of every timestamp (its bench summary's
  // noise_factor); unset for measured records. Simulated runs written
  // before chunk times were stretched with the rest hold unstretched gaps,
  // each rounded on its own, and kept the chunks of a request an injected
  // failure lost: their gaps may add up to (end - first token) / stretch
  // plus a microsecond a gap, and chunks without a first token pass.
  std::optional<double> simulated_stretch{};
};

// The longest prompt and output `workload` draws (its lengths file's rows,
// or input_tokens and output_tokens).
int64_t MaxInputTokens(const spec::WorkloadSpec& workload);
int64_t MaxOutputTokens(const spec::WorkloadSpec& workload);

// Per-request records of one sample (times in ns since the sample's start):
//   duplicate_request_id         an id appears on more than one record
//   more_records_than_requests   more records than the sample sent
//   end_before_send              a sent request ends before it was sent
//   first_token_outside_request  a first token before the send or after the end
//   chunks_outside_request       chunk_gaps_us adding up past end_ns -
//                                first_token_ns (in whole microseconds;
//                                see RecordLimits::simulated_stretch), or
//                                chunks without a first token before the end
//   time_outside_window          a time below 0 (other than -1, "did not
//                                happen") or past limits.window_ns
//   request_id_out_of_range      an id outside [0, requests_expected): the
//                                sample's requests are numbered from 0
//   length_out_of_range          input_tokens outside [1, max_input_tokens],
//                                output_tokens below 0, or an ok request's
//                                above max_output_tokens (bench fails one)
//   status_contradicts_http      status ok with an http_status not 2xx, or
//                                http_error with a 2xx one
//   more_in_flight_than_concurrency  more requests between their send and
//                                end at one instant than the concurrency
// Records with status not_sent have no times to check. One problem per kind,
// with the count and the first record (1-based, in file order).
std::vector<EvidenceProblem> CheckRecords(const std::vector<workload::RequestRecord>& records,
                                          const RecordLimits& limits, const std::string& file);

// The most memory one GPU can have, 16 TiB in MiB: far above any GPU made,
// far below where sums of readings lose precision.
inline constexpr double kMaxGpuMemoryMib = 16.0 * 1024 * 1024;

// One node's nvidia-smi snapshot:
//   gpu_memory_out_of_range  a used or total reading that is negative, not a
//                            number (GpuMemory::unreadable), not
//                            finite, or above kMaxGpuMemoryMib
//   gpu_memory_above_total   more memory used than the GPU has
std::vector<EvidenceProblem> CheckGpuSnapshot(const std::vector<nvidia_smi::GpuMemory>& gpus,
                                              const std::string& file);

// bench/<sample>.json's text read as the summary of `sample`
// (bench_summary.h): bench_summary_corrupt when BenchSummaryFromText
// refuses it (not JSON, not an object, a key of the wrong type) or it is
// the summary of another sample. Without a problem, `summary` (when given)
// receives it.
std::vector<EvidenceProblem> CheckBenchSummary(const std::string& text, const std::string& sample,
                                               const std::string& file,
                                               BenchSummary* summary = nullptr);

// A file of a run directory that could not be read: not_a_regular_file for
// a symbolic link, directory, FIFO, device or socket, unreadable_file
// otherwise (permissions, size). `path` is where it is, `file` its name in
// the run directory, `error` ReadEvidenceFile's message.
EvidenceProblem UnreadableEvidence(const std::string& path, const std::string& file,
                                   const std::string& error);

}  // namespace ppsearch::evidence
