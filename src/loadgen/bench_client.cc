#include "loadgen/bench_client.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "loadgen/load_loop.h"
#include "loadgen/url.h"
#include "workload/workload.h"

namespace ppsearch::loadgen {
namespace {

using workload::RequestRecord;
using workload::RequestStatus;

constexpr int64_t kProbeTimeoutMs = 5000;
constexpr int kMaxRequests = 10'000'000;
constexpr int64_t kMaxPromptTokens = 10'000'000;
// Below it, arrival times of a large sample leave the nanosecond clock's
// range (and no sample waits 1000 s between requests).
constexpr double kMinRequestRate = 1e-3;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string BaseUrl(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

// `output_cap` limits every request's output (warm-up); 0: none.
LoopConfig MakeLoopConfig(const BenchOptions& o, PromptStream stream, int64_t output_cap) {
  LoopConfig config;
  for (const std::string& url : ServerUrls(o))
    config.endpoints.push_back(BaseUrl(url) + ApiPath(o.api));
  config.routing = o.routing;
  config.api = o.api;
  config.abort_check = o.abort_check;
  config.record_chunks = o.record_chunks;
  config.api_key = o.api_key;
  config.timeout_ns = static_cast<int64_t>(o.timeout_s * 1e9);
  const PromptParams prompt = o.prompt;
  const Api api = o.api;
  const std::string model = o.model;
  config.make_body = [=](const LoopRequest& r) {
    const std::vector<int64_t> ids = MakePromptIds(prompt, stream, r.id, r.input_tokens);
    const int64_t output = output_cap > 0 ? std::min(r.output_tokens, output_cap) : r.output_tokens;
    return BuildRequestBody(api, ids, output, model);
  };
  return config;
}

// bench_serving's warm-up: the sample's shapes (output capped at 32 tokens),
// all in flight at once up to the concurrency, but fresh prompts.
Result<int> RunWarmup(const BenchOptions& o) {
  LoopConfig config = MakeLoopConfig(o, PromptStream::kWarmup, 32);
  config.max_in_flight = std::max(o.concurrency, 1);
  std::vector<LoopRequest> requests;
  for (const auto& p : workload::PlanRequests(WorkloadOf(o, o.warmup_requests)))
    requests.push_back({p.id, p.input_tokens, -1, p.output_tokens});
  PPS_ASSIGN_OR_RETURN(LoopOutput out, RunLoop(config, requests));
  int ok = 0;
  const RequestRecord* first_failure = nullptr;
  for (const auto& r : out.records) {
    if (r.ok()) {
      ++ok;
    } else if (first_failure == nullptr) {
      first_failure = &r;
    }
  }
  if (ok == 0) {
    return MakeError(
        "all " + std::to_string(o.warmup_requests) + " warm-up requests failed; the first: " +
        workload::RequestStatusName(first_failure->status) + ": " + first_failure->error);
  }
  return ok;
}

// SGLang refuses to flush (HTTP 400) while a request is still in its
// scheduler, which a just-finished warm-up or readiness request can be for a
// moment after its stream closed: retry for up to kFlushRetryS seconds.
constexpr double kFlushRetryS = 5;
constexpr int kFlushRetryMs = 100;

Status FlushCache(const BenchOptions& o, const std::string& server) {
  const std::string url = BaseUrl(server) + "/flush_cache";
  SimpleResponse response;
  for (int attempt = 0; attempt <= static_cast<int>(kFlushRetryS * 1000 / kFlushRetryMs);
       ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(kFlushRetryMs));
    PPS_ASSIGN_OR_RETURN(response, PostEmpty(url, static_cast<int64_t>(o.timeout_s * 1000),
                                             o.api_key, o.abort_check));
    if (response.http_status != 400) break;
  }
  if (response.http_status != 200) {
    return MakeError("POST " + ShownUrl(url) + " answered HTTP " +
                     std::to_string(response.http_status) + ": " + response.body +
                     " (SGLang flushes only when no request is running)");
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> ServerUrls(const BenchOptions& o) {
  std::vector<std::string> out = {o.url};
  out.insert(out.end(), o.more_urls.begin(), o.more_urls.end());
  return out;
}

workload::WorkloadParams WorkloadOf(const BenchOptions& o, int num_requests) {
  workload::WorkloadParams params;
  params.num_requests = num_requests;
  params.concurrency = o.concurrency;
  params.input_tokens = o.input_tokens;
  params.output_tokens = o.output_tokens;
  params.range_ratio = o.range_ratio;
  params.output_range_ratio = o.output_range_ratio;
  params.lengths = o.lengths;
  params.request_rate = o.request_rate;
  params.seed = o.prompt.seed;
  return params;
}

Status ValidateBenchOptions(const BenchOptions& o) {
  for (const std::string& url : ServerUrls(o)) PPS_RETURN_IF_ERROR(CheckServerUrl(url));
  // Each message names the option, what it takes and what it was given.
  if (o.num_requests < 1 || o.num_requests > kMaxRequests)
    return MakeError(
        fmt::format("--requests must be between 1 and {} (got {})", kMaxRequests, o.num_requests));
  if (o.request_rate == 0 ? o.concurrency < 1 : o.concurrency < 0) {
    return MakeError(fmt::format("--concurrency must be {} (got {})",
                                 o.request_rate == 0 ? "at least 1" : "0 (no cap) or more",
                                 o.concurrency));
  }
  if (!(o.request_rate >= 0) || std::isinf(o.request_rate) ||
      (o.request_rate > 0 && o.request_rate < kMinRequestRate)) {
    return MakeError(
        fmt::format("--request-rate must be 0 (closed loop) or a finite number of requests/s of at "
                    "least 0.001 (one every 1000 s) (got {})",
                    o.request_rate));
  }
  if (o.input_tokens < 1 || o.input_tokens > kMaxPromptTokens)
    return MakeError(fmt::format("--input-tokens must be between 1 and {} (got {})",
                                 kMaxPromptTokens, o.input_tokens));
  if (o.output_tokens < 1)
    return MakeError(fmt::format("--output-tokens must be at least 1 (got {})", o.output_tokens));
  if (!(o.range_ratio > 0 && o.range_ratio <= 1))
    return MakeError(fmt::format("--range-ratio must be in (0, 1] (got {})", o.range_ratio));
  if (!(o.output_range_ratio > 0 && o.output_range_ratio <= 1))
    return MakeError(
        fmt::format("--output-range-ratio must be in (0, 1] (got {})", o.output_range_ratio));
  if (o.warmup_requests < 0 || o.warmup_requests > kMaxRequests)
    return MakeError(
        fmt::format("--warmup must be between 0 and {} (got {})", kMaxRequests, o.warmup_requests));
  if (!(o.timeout_s > 0) || o.timeout_s > 1e6)
    return MakeError(fmt::format("--timeout-s must be in (0, 1e6] seconds (got {})", o.timeout_s));
  // Token ids are drawn from [--min-token-id, --vocab-size): a negative
  // bound is no token id, whatever the range's width.
  if (o.prompt.min_token_id < 0)
    return MakeError(fmt::format("--min-token-id must be a token id, 0 or more (got {})",
                                 o.prompt.min_token_id));
  if (o.prompt.vocab_size <= o.prompt.min_token_id)
    return MakeError(fmt::format(
        "--vocab-size must be above --min-token-id: token ids are drawn from [--min-token-id, "
        "--vocab-size) = [{}, {}), which is empty",
        o.prompt.min_token_id, o.prompt.vocab_size));
  if (o.prompt.shared_prefix_tokens < 0 || o.prompt.shared_prefix_tokens > o.input_tokens) {
    return MakeError(
        fmt::format("--shared-prefix-tokens must be between 0 and --input-tokens ({}) "
                    "(got {})",
                    o.input_tokens, o.prompt.shared_prefix_tokens));
  }
  return Status::Ok();
}

Result<BenchResult> RunBench(const BenchOptions& o) {
  PPS_RETURN_IF_ERROR(ValidateBenchOptions(o));
  for (const std::string& url : ServerUrls(o))
    PPS_RETURN_IF_ERROR(
        ProbeConnect(BaseUrl(url), std::min<int64_t>(kProbeTimeoutMs, o.timeout_s * 1000)));
  BenchResult result;
  if (o.warmup_requests > 0) {
    PPS_ASSIGN_OR_RETURN(result.warmup_ok, RunWarmup(o));
  }
  if (o.flush_cache)
    for (const std::string& url : ServerUrls(o)) PPS_RETURN_IF_ERROR(FlushCache(o, url));

  std::vector<LoopRequest> requests;
  requests.reserve(static_cast<size_t>(o.num_requests));
  for (const auto& p : workload::PlanRequests(WorkloadOf(o, o.num_requests))) {
    requests.push_back(
        {p.id, p.input_tokens, o.request_rate > 0 ? p.arrival_ns : -1, p.output_tokens});
  }
  LoopConfig config = MakeLoopConfig(o, PromptStream::kSample, 0);
  config.max_in_flight = o.concurrency;
  const double cpu_before = ThreadCpuSeconds();
  PPS_ASSIGN_OR_RETURN(LoopOutput out, RunLoop(config, requests));
  result.client_cpu_s = ThreadCpuSeconds() - cpu_before;
  result.sample_start_steady_ns = out.start_steady_ns;
  {
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    const int64_t since_start_ns = SteadyNowNs() - out.start_steady_ns;
    result.sample_start_unix_s =
        std::chrono::duration<double>(wall).count() - static_cast<double>(since_start_ns) * 1e-9;
  }
  result.records = std::move(out.records);
  for (size_t i = 0; i < result.records.size(); ++i) {
    // An answer longer than max_new_tokens answers another request: its
    // tokens (recorded as they arrived) would inflate the output throughput.
    RequestRecord& r = result.records[i];
    if (r.ok() && r.output_tokens > requests[i].output_tokens) {
      r.status = RequestStatus::kStreamError;
      r.error = "the server sent " + std::to_string(r.output_tokens) + " output tokens where " +
                std::to_string(requests[i].output_tokens) + " were asked (max_new_tokens)";
    }
  }
  for (RequestRecord& r : result.records) {
    if (r.reported_input_tokens >= 0 && r.reported_input_tokens != r.input_tokens) {
      ++result.prompt_length_mismatches;
      if (r.error.empty()) {
        r.error = "note: the server counted " + std::to_string(r.reported_input_tokens) +
                  " prompt tokens, " + std::to_string(r.input_tokens) + " were sent";
      }
    }
  }
  result.metrics = stats::ComputeSampleMetrics(result.records);
  return result;
}

}  // namespace ppsearch::loadgen
