#pragma once
// The one definition of each statistic ppsearch reports.
//  - Percentile: linear interpolation between closest ranks, numpy's default
//    (np.percentile(x, q), method="linear"): sorted x, h = (n - 1) * q / 100,
//    x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
//  - Median: Percentile(x, 50).
//  - Spread: (max - min) / median, the repeat-stability measure.
//  - Correlation: Pearson's r of paired values; RankCorrelation is
//    Spearman's rho, Pearson's r of the ranks (ties take their mean rank).
//  - Input throughput: total intended input tokens of successful requests
//    divided by the time from the first send to the last completion; output
//    throughput and request throughput likewise, with output tokens and
//    completed requests.
//  - E2E latency: send to the end of the stream; TTFT: send to the first
//    chunk that carried a generated token.
//  - TPOT (time per output token), per request with more than one output
//    token: (e2e - TTFT) / (output tokens - 1), SGLang's bench_serving
//    (calculate_metrics) and GuideLLM's per-request "inter_token_latency_ms".
//  - ITL (inter-token latency), per token after the first: each streamed
//    chunk's gap since the previous token chunk, spread evenly over the k
//    tokens it carried (k values of gap / k), as bench_serving's native
//    client; the sample's ITL percentiles are over every such value of every
//    completed request, not over per-request means.
//  - Goodput: completed requests that meet every [decision] SLA limit,
//    each judged on its own figures (decide::RequestMeetsSla: TTFT, TPOT,
//    e2e, and the p99 of its own ITL values), divided by the same duration
//    as the throughputs; vLLM's benchmarks/benchmark_serving.py
//    (calculate_metrics, "request_goodput"), from which SGLang's
//    bench_serving is adapted, and DistServe's SLO attainment. Without a
//    limit every completed request counts: goodput = request throughput.
//  - First-token pace: first tokens per second over requests sent per
//    second, each over the middle half of its own times (the 25th to the
//    75th percentile of the completed requests' sends, and of their first
//    tokens): (send p75 - send p25) / (first token p75 - first token p25).
//    A server that keeps up answers each request's first token a TTFT
//    after its send, so the two spans match and the pace is about 1
//    whatever the arrival process (the sends' own randomness cancels); one
//    whose requests queue inside it admits them only as fast as it serves
//    them, so the pace is its capacity over the rate sent. The middle half
//    leaves out the start, when an empty server answers faster than it
//    can go on doing, and the end. 0 (unknown) with fewer than 4 such
//    requests, sends that all came at once, or first tokens that all came
//    at once (one prefill batch answered the middle half: a sample too
//    short to tell a pace).

#include <cstdint>
#include <optional>
#include <vector>

#include "decide/sla.h"
#include "workload/request_record.h"

namespace ppsearch::stats {

double Percentile(std::vector<double> values, double q);
double Median(const std::vector<double>& values);
double Mean(const std::vector<double>& values);
double Spread(const std::vector<double>& values);  // 0 for fewer than 2 values
// 0 when the sizes differ, there are fewer than 2 pairs or either side is constant.
double Correlation(const std::vector<double>& x, const std::vector<double>& y);
double RankCorrelation(const std::vector<double>& x, const std::vector<double>& y);

// The standard normal quantile: x with Phi(x) = p, for p in (0, 1). Acklam's
// rational approximation refined by one Halley step (|error| < 1e-12).
double NormalQuantile(double p);
// Expected maximum of n independent standard normals, by Blom's formula
// Phi^-1((n - 0.375) / (n + 0.25)) (within 1% for n >= 2); 0 for n < 2.
double ExpectedMaxOfNormals(int n);

struct LatencySummary {
  double mean = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0;
};
LatencySummary Summarize(const std::vector<double>& values);

// TPOT of one request in seconds; none with fewer than 2 output tokens or
// without a first token and an end.
std::optional<double> TimePerOutputTokenS(const workload::RequestRecord& r);
// Appends the request's ITL values in seconds (see the definition above).
void AppendInterTokenLatenciesS(const workload::RequestRecord& r, std::vector<double>& out);

// Aggregates of one benchmark sample.
struct SampleMetrics {
  int requests_total = 0;
  int requests_completed = 0;  // status ok
  int request_errors = 0;      // sent but failed
  int64_t input_tokens = 0;    // intended, of completed requests
  int64_t output_tokens = 0;
  double duration_s = 0;  // first send to last completion
  double input_tps = 0;
  double output_tps = 0;
  double request_throughput = 0;
  int requests_good = 0;  // completed and meeting every SLA limit
  double goodput_rps = 0;
  LatencySummary ttft_s;
  LatencySummary e2e_s;
  // Decode: over completed requests with more than one output token (TPOT)
  // and over every ITL value of completed requests; zero when there are none.
  int tpot_requests = 0;
  int64_t itl_values = 0;
  LatencySummary tpot_s;
  LatencySummary itl_s;
  double first_token_pace = 0;  // see the definition above
};

// `sla`: the limits goodput counts requests against (none: every completed request).
SampleMetrics ComputeSampleMetrics(const std::vector<workload::RequestRecord>& records,
                                   const decide::SlaLimits& sla = {});

// The first-token pace of these records (see the definition above).
double FirstTokenPace(const std::vector<workload::RequestRecord>& records);

// One completed request's own SLA figures: TTFT, TPOT, the p99 of its ITL
// values, e2e; TPOT and ITL unset for a one-token answer.
decide::SlaValues RequestSlaFigures(const workload::RequestRecord& r);

}  // namespace ppsearch::stats
