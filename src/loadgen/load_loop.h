#pragma once
// The event loop under RunBench: drives a batch of streamed POSTs through
// libcurl's multi interface (curl_multi_socket_action on one epoll set), so
// one thread keeps hundreds of requests in flight. Every transfer has a
// deadline; the loop ends when every request has a record.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loadgen/api_kind.h"
#include "loadgen/routing.h"
#include "util/result.h"
#include "workload/request_record.h"

namespace ppsearch::loadgen {

struct LoopRequest {
  int64_t id = 0;
  int64_t input_tokens = 0;
  int64_t arrival_ns = -1;  // open loop: earliest send, since t = 0; -1: when a slot frees
  int64_t output_tokens = 1;
};

struct LoopConfig {
  // Full URLs, e.g. http://host:port/generate: one per server the requests
  // are spread over (the instances of a layout), by `routing`.
  std::vector<std::string> endpoints;
  Routing routing = Routing::kLeastOutstanding;
  Api api = Api::kNative;
  int max_in_flight = 1;  // 0: no cap
  int64_t timeout_ns = 0;
  // Builds the body of a request; called ahead of its send, on another thread.
  std::function<std::string(const LoopRequest&)> make_body;
  // Polled between events (at least every 100 ms); a non-empty answer stops
  // the sample at once: transfers in flight end as stream errors with that
  // reason and requests not yet sent stay not_sent.
  std::function<std::string()> abort_check;
  bool record_chunks = true;  // BenchOptions::record_chunks
  std::string api_key;        // BenchOptions::api_key
};

struct LoopOutput {
  std::vector<workload::RequestRecord> records;  // in request order
  int64_t start_steady_ns = 0;                   // t = 0 of the record times
};

Result<LoopOutput> RunLoop(const LoopConfig& config, const std::vector<LoopRequest>& requests);

// Opens (and closes) a TCP connection to the host of `url`.
Status ProbeConnect(const std::string& url, int64_t timeout_ms);

// A small blocking POST with an empty body; returns the HTTP status and the
// first bytes of the answer.
struct SimpleResponse {
  int http_status = 0;
  std::string body;
};
// A non-empty `api_key` is sent as "Authorization: Bearer <key>". An
// `abort_check` is asked at least every 100 ms while the call waits; a
// non-empty answer ends it at once as an Error "... aborted: <answer>".
Result<SimpleResponse> PostEmpty(const std::string& url, int64_t timeout_ms,
                                 const std::string& api_key = "",
                                 const std::function<std::string()>& abort_check = {});
// A small blocking GET; an Error when no HTTP answer came (refused, timeout,
// aborted as PostEmpty). The body is kept up to `max_body_bytes`.
Result<SimpleResponse> Get(const std::string& url, int64_t timeout_ms, size_t max_body_bytes = 2048,
                           const std::string& api_key = "",
                           const std::function<std::string()>& abort_check = {});

int64_t SteadyNowNs();

}  // namespace ppsearch::loadgen
