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
  // Which of a layout's instances (spec::LayoutSpec::instances) served it,
  // counted from 0; always 0 with one instance.
  int instance = 0;
  // The server's own Unix time of the first token, where it reports one
  // (serve-sim's meta_info.first_token_ts); -1 unknown.
  double server_first_token_unix_s = -1;
  // Decode timing, compact enough for a million tokens: one entry per
  // streamed chunk after the first that carried generated tokens, the
  // microseconds since the previous such chunk (the first entry: since the
  // first token). Chunks read together count as one chunk.
  std::vector<int64_t> chunk_gaps_us{};
  // Tokens each of those chunks carried, parallel to chunk_gaps_us; empty:
  // every one carried exactly one (the file leaves all-one counts out).
  std::vector<int64_t> chunk_tokens{};
  // The simulator's form of the same timing, kept in memory only (a sample's
  // evidence is written from chunk_gaps_us): when each streamed chunk
  // arrived, ns since the sample's start, the first being first_token_ns;
  // one token a chunk. Empty: not simulated. stats/ reads either form.
  std::vector<int64_t> chunk_ns = {};

  bool ok() const { return status == RequestStatus::kOk; }
  double ttft_s() const { return (first_token_ns - send_ns) * 1e-9; }
  double e2e_s() const { return (end_ns - send_ns) * 1e-9; }
  // Tokens the i-th entry of chunk_gaps_us carried.
  int64_t chunk_token_count(size_t i) const { return chunk_tokens.empty() ? 1 : chunk_tokens[i]; }
};

}  // namespace ppsearch::workload
