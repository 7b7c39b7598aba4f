#pragma once
// One request as a benchmark client sees it. The simulated engine and the real
// HTTP client both produce these; analysis never knows which made them.

#include <cstdint>
#include <string>
#include <vector>

namespace ppsearch::workload {

enum class RequestStatus {
  kOk,
  kHttpError,    // non-2xx answer
  kTimeout,      // no completion within the per-request timeout
  kStreamError,  // malformed stream, error chunk, connection reset
  kNotSent,      // the sample ended (or was stopped) before it was sent
};

const char* RequestStatusName(RequestStatus status);

struct RequestRecord {
  int64_t id = 0;
  // Times in nanoseconds since the sample's start (the first send is at >= 0).
  int64_t send_ns = 0;
  int64_t first_token_ns = -1;  // -1: no token arrived
  int64_t end_ns = -1;
  int64_t input_tokens = 0;            // intended prompt length
  int64_t reported_input_tokens = -1;  // as the server reported it; -1 unknown
  int64_t output_tokens = 0;
  int http_status = 0;  // 200 for a simulated success
  RequestStatus status = RequestStatus::kOk;
  std::string error;
  // The server's own Unix time of the first token, where it reports one
  // (serve-sim's meta_info.first_token_ts); -1 unknown.
  double server_first_token_unix_s = -1;
  // When each streamed chunk carrying output tokens arrived, ns since the
  // sample's start, in order: the first is first_token_ns. The simulated
  // engine streams one token per chunk. Empty: not recorded.
  std::vector<int64_t> chunk_ns = {};

  bool ok() const { return status == RequestStatus::kOk; }
  double ttft_s() const { return (first_token_ns - send_ns) * 1e-9; }
  double e2e_s() const { return (end_ns - send_ns) * 1e-9; }
  // Time per output token after the first: (e2e - ttft) / (output_tokens - 1),
  // as SGLang's bench_serving defines TPOT; only for output_tokens > 1.
  double tpot_s() const { return (end_ns - first_token_ns) * 1e-9 / (output_tokens - 1); }
};

}  // namespace ppsearch::workload
