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
//    throughput likewise with output tokens.
//  - TPOT (time per output token) of a request with more than one output
//    token: (e2e - ttft) / (output tokens - 1); ITL (inter-token latency):
//    every gap between consecutive streamed chunks of a request, all
//    requests' gaps pooled (SGLang's bench_serving, benchmark/serving.py).

#include <cstdint>
#include <vector>

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
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};
LatencySummary Summarize(const std::vector<double>& values);

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
  LatencySummary ttft_s;
  LatencySummary e2e_s;
  LatencySummary tpot_s;  // completed requests with more than one output token
  LatencySummary itl_s;   // of requests that recorded chunk times
};

SampleMetrics ComputeSampleMetrics(const std::vector<workload::RequestRecord>& records);

}  // namespace ppsearch::stats
