#pragma once
// The load generator: streams requests to a running SGLang-compatible server
// (a real engine or `ppsearch serve-sim`) and records each one as a
// workload::RequestRecord, the type the simulator fills too.
//
// One thread, one libcurl multi event loop; no thread per request. A closed
// loop keeps `concurrency` requests in flight (a new one starts when one
// finishes); an open loop sends at Poisson arrival times
// (workload::PlanRequests, the simulator's plan for the same seed).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loadgen/api_kind.h"
#include "loadgen/request_builder.h"
#include "loadgen/routing.h"
#include "stats/stats.h"
#include "util/result.h"
#include "workload/lengths_file.h"
#include "workload/request_record.h"
#include "workload/workload.h"

namespace ppsearch::loadgen {

struct BenchOptions {
  std::string url;  // server base URL, e.g. http://127.0.0.1:30000
  // Further servers, e.g. the other instances of a layout: with any, the
  // requests (warm-up too) are spread over `url` and these by `routing`,
  // and each record names its server (RequestRecord::instance: 0 is `url`).
  std::vector<std::string> more_urls;
  Routing routing = Routing::kLeastOutstanding;
  Api api = Api::kNative;
  std::string model = "default";  // the "model" field of OpenAI requests
  int num_requests = 1;
  // Closed loop: requests in flight. Open loop: at most this many in flight
  // (a request due while all are busy waits; send_ns is when it was sent).
  // 0 with an open loop: no cap.
  int concurrency = 1;
  double request_rate = 0;  // requests/s, Poisson arrivals; 0 = closed loop
  int64_t input_tokens = 1024;
  int64_t output_tokens = 1;
  double range_ratio = 1.0;         // input lengths uniform on [L * ratio, L]; 1 = fixed
  double output_range_ratio = 1.0;  // output lengths likewise
  // Rows of a lengths file (workload/lengths_file.h): each request draws
  // its input and output length from one; the lengths above are then unused.
  std::vector<workload::LengthPair> lengths;
  std::string lengths_file;  // where they came from, for the report
  int warmup_requests = 0;   // sent before the sample, not counted
  bool flush_cache = false;  // POST /flush_cache after warm-up, before the sample
  double timeout_s = 600;    // per request, from send to the end of the stream
  PromptParams prompt;       // seed and id range of the prompts
  // Polled during warm-up, the cache flush and the sample (at least every
  // 100 ms); a non-empty reason stops it at once (a node died, the sample's
  // deadline passed, an interrupt). Requests in flight become stream errors
  // "aborted: <reason>", the rest stay not_sent; a flush fails.
  std::function<std::string()> abort_check;
  // Record every token chunk's arrival (RequestRecord::chunk_gaps_us); off,
  // records keep TTFT and end only. On for every measurement; the client
  // benchmark turns it off to measure what recording costs.
  bool record_chunks = true;
  // The server's --api-key, sent as "Authorization: Bearer <key>" with every
  // request and the cache flush; never printed or written.
  std::string api_key;
};

struct BenchResult {
  std::vector<workload::RequestRecord> records;  // the sample, by id
  stats::SampleMetrics metrics;
  // Requests whose server-reported prompt length differs from the intended
  // one (they still count as ok; the record's error says so).
  int prompt_length_mismatches = 0;
  int warmup_ok = 0;
  // steady_clock time (ns since its epoch) of the sample's t = 0, to compare
  // record times with another clock reading in the same process.
  int64_t sample_start_steady_ns = 0;
  // The same t = 0 as a Unix time (system clock), to compare record times
  // with a server's own timestamps.
  double sample_start_unix_s = 0;
  // CPU time the calling thread spent in the sample (the client's whole cost).
  double client_cpu_s = 0;
};

// `url` and `more_urls`: every server of the sample, in instance order.
std::vector<std::string> ServerUrls(const BenchOptions& options);

// Argument errors, worded for the command line (flag names).
Status ValidateBenchOptions(const BenchOptions& options);

// The seeded plan of `num_requests` requests with the options' lengths and
// arrivals: the simulator's workload::PlanRequests for the same seed.
workload::WorkloadParams WorkloadOf(const BenchOptions& options, int num_requests);

// Runs warm-up, optional cache flush and the sample. Returns an Error when
// the options are invalid, the server cannot be reached, every warm-up
// request failed or the flush failed; failed sample requests are records,
// not errors.
Result<BenchResult> RunBench(const BenchOptions& options);

}  // namespace ppsearch::loadgen
