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

double Correlation(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return 0;
  const double mx = Mean(x), my = Mean(y);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  // Constant within rounding: no correlation to speak of.
  if (sxx <= 1e-300 || syy <= 1e-300) return 0;
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

namespace {

// 1-based ranks; tied values share the mean of their ranks.
std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = (i + j) / 2.0 + 1;
    i = j + 1;
  }
  return rank;
}

}  // namespace

double RankCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return 0;
  return Correlation(Ranks(x), Ranks(y));
}

double NormalQuantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1 - 1e-16);
  const double plow = 0.02425;
  double x;
  if (p < plow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - plow) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step on Phi(x) - p.
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double ExpectedMaxOfNormals(int n) {
  if (n < 2) return 0;
  return NormalQuantile((n - 0.375) / (n + 0.25));
}

LatencySummary Summarize(const std::vector<double>& v) {
  LatencySummary s;
  if (v.empty()) return s;
  s.mean = Mean(v);
  // The same interpolation as Percentile, from order statistics selected
  // at rising ranks, each among the values right of the last one: linear
  // time where a simulated sample has a value per token.
  std::vector<double> w = v;
  size_t placed_to = 0;  // w[0, placed_to) holds no rank still to be selected
  auto at_rank = [&](size_t rank) {
    if (rank >= placed_to) {
      std::nth_element(w.begin() + static_cast<std::ptrdiff_t>(placed_to),
                       w.begin() + static_cast<std::ptrdiff_t>(rank), w.end());
      placed_to = rank + 1;
    }
    return w[rank];
  };
  auto percentile = [&](double q) {
    const double h = (static_cast<double>(w.size()) - 1) * q / 100.0;
    const size_t lo = static_cast<size_t>(std::floor(h));
    const size_t hi = std::min(lo + 1, w.size() - 1);
    const double low = at_rank(lo);
    return low + (h - static_cast<double>(lo)) * (at_rank(hi) - low);
  };
  s.p50 = percentile(50);
  s.p90 = percentile(90);
  s.p95 = percentile(95);
  s.p99 = percentile(99);
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

std::optional<double> TimePerOutputTokenS(const workload::RequestRecord& r) {
  if (r.output_tokens < 2 || r.first_token_ns < 0 || r.end_ns < r.first_token_ns)
    return std::nullopt;
  return (r.end_ns - r.first_token_ns) * 1e-9 / static_cast<double>(r.output_tokens - 1);
}

void AppendInterTokenLatenciesS(const workload::RequestRecord& r, std::vector<double>& out) {
  for (size_t i = 0; i < r.chunk_gaps_us.size(); ++i) {
    const int64_t k = r.chunk_token_count(i);
    const double each_s = r.chunk_gaps_us[i] * 1e-6 / static_cast<double>(k);
    out.insert(out.end(), static_cast<size_t>(k), each_s);
  }
  // A simulated record: one token a chunk, at ns resolution.
  if (r.chunk_gaps_us.empty())
    for (size_t i = 1; i < r.chunk_ns.size(); ++i)
      out.push_back((r.chunk_ns[i] - r.chunk_ns[i - 1]) * 1e-9);
}

decide::SlaValues RequestSlaFigures(const workload::RequestRecord& r) {
  decide::SlaValues v;
  if (r.first_token_ns >= 0) v[decide::SlaMetric::kTtft] = r.ttft_s();
  if (r.end_ns >= 0) v[decide::SlaMetric::kE2e] = r.e2e_s();
  v[decide::SlaMetric::kTpot] = TimePerOutputTokenS(r);
  std::vector<double> itl;
  AppendInterTokenLatenciesS(r, itl);
  if (!itl.empty()) v[decide::SlaMetric::kItl] = Percentile(std::move(itl), 99);
  return v;
}

double FirstTokenPace(const std::vector<workload::RequestRecord>& records) {
  std::vector<double> sends, first_tokens;
  for (const workload::RequestRecord& r : records) {
    if (!r.ok() || r.first_token_ns < 0) continue;
    sends.push_back(static_cast<double>(r.send_ns));
    first_tokens.push_back(static_cast<double>(r.first_token_ns));
  }
  if (sends.size() < 4) return 0;
  const auto middle_half = [](const std::vector<double>& v) {
    return Percentile(v, 75) - Percentile(v, 25);
  };
  const double sent = middle_half(sends);
  const double answered = middle_half(first_tokens);
  if (!(sent > 0) || !(answered > 0)) return 0;
  return sent / answered;
}

SampleMetrics ComputeSampleMetrics(const std::vector<workload::RequestRecord>& records,
                                   const decide::SlaLimits& sla) {
  SampleMetrics m;
  m.requests_total = static_cast<int>(records.size());
  int64_t first_send = INT64_MAX, last_end = INT64_MIN;
  std::vector<double> ttft, e2e, tpot, itl;
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
    if (!sla.any() || decide::RequestMeetsSla(sla, RequestSlaFigures(r))) ++m.requests_good;
    ttft.push_back(r.ttft_s());
    e2e.push_back(r.e2e_s());
    if (auto t = TimePerOutputTokenS(r)) tpot.push_back(*t);
    AppendInterTokenLatenciesS(r, itl);
  }
  if (first_send != INT64_MAX && last_end > first_send)
    m.duration_s = (last_end - first_send) * 1e-9;
  if (m.duration_s > 0) {
    m.input_tps = m.input_tokens / m.duration_s;
    m.output_tps = m.output_tokens / m.duration_s;
    m.request_throughput = m.requests_completed / m.duration_s;
    m.goodput_rps = m.requests_good / m.duration_s;
  }
  m.ttft_s = Summarize(ttft);
  m.e2e_s = Summarize(e2e);
  m.tpot_requests = static_cast<int>(tpot.size());
  m.itl_values = static_cast<int64_t>(itl.size());
  m.tpot_s = Summarize(tpot);
  m.itl_s = Summarize(itl);
  m.first_token_pace = FirstTokenPace(records);
  return m;
}

}  // namespace ppsearch::stats
