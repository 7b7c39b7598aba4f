#include "stats/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ppsearch::stats {

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * q / 100.0;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double Median(const std::vector<double>& v) { return Percentile(v, 50); }

double Mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double Spread(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double median = Median(v);
  return median == 0 ? 0 : (*hi - *lo) / median;
}

LatencySummary Summarize(const std::vector<double>& v) {
  LatencySummary s;
  if (v.empty()) return s;
  s.mean = Mean(v);
  s.p50 = Percentile(v, 50);
  s.p95 = Percentile(v, 95);
  s.p99 = Percentile(v, 99);
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

SampleMetrics ComputeSampleMetrics(const std::vector<workload::RequestRecord>& records) {
  SampleMetrics m;
  m.requests_total = static_cast<int>(records.size());
  int64_t first_send = INT64_MAX, last_end = INT64_MIN;
  std::vector<double> ttft, e2e;
  for (const auto& r : records) {
    if (r.status == workload::RequestStatus::kNotSent) continue;
    first_send = std::min(first_send, r.send_ns);
    if (r.end_ns >= 0) last_end = std::max(last_end, r.end_ns);
    if (!r.ok()) {
      ++m.request_errors;
      continue;
    }
    ++m.requests_completed;
    m.input_tokens += r.input_tokens;
    m.output_tokens += r.output_tokens;
    ttft.push_back(r.ttft_s());
    e2e.push_back(r.e2e_s());
  }
  if (first_send != INT64_MAX && last_end > first_send)
    m.duration_s = (last_end - first_send) * 1e-9;
  if (m.duration_s > 0) {
    m.input_tps = m.input_tokens / m.duration_s;
    m.output_tps = m.output_tokens / m.duration_s;
    m.request_throughput = m.requests_completed / m.duration_s;
  }
  m.ttft_s = Summarize(ttft);
  m.e2e_s = Summarize(e2e);
  return m;
}

}  // namespace ppsearch::stats
