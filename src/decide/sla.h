#pragma once
// Service-level limits ([decision] ttft_p99_s, tpot_p99_ms, itl_p99_ms,
// e2e_p99_s) and the one test of figures against them, shared by the
// decision on measured evidence (analysis/), the search on predictions
// (search/) and goodput per request (stats/). Everything here is in seconds;
// the keys' own units (ms for TPOT and ITL) are only for messages.

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace ppsearch::decide {

enum class SlaMetric { kTtft, kTpot, kItl, kE2e };
inline constexpr SlaMetric kSlaMetrics[] = {SlaMetric::kTtft, SlaMetric::kTpot, SlaMetric::kItl,
                                            SlaMetric::kE2e};

struct SlaMetricInfo {
  const char* key;    // the [decision] key: "tpot_p99_ms"
  const char* label;  // for sentences: "TPOT p99"
  const char* unit;   // of the key: "ms"
  double per_second;  // key units in one second: 1000 for ms
  bool decode;        // needs more than one output token per request
};
const SlaMetricInfo& Info(SlaMetric m);

// One value per metric, in seconds; none: not set (a limit) or not known (a figure).
struct SlaValues {
  std::array<std::optional<double>, 4> s;

  std::optional<double>& operator[](SlaMetric m) { return s[static_cast<size_t>(m)]; }
  const std::optional<double>& operator[](SlaMetric m) const { return s[static_cast<size_t>(m)]; }
  bool any() const;
};
using SlaLimits = SlaValues;

struct SlaMiss {
  SlaMetric metric;
  double value_s = 0;
  double limit_s = 0;
  double over() const { return value_s / limit_s - 1; }  // 0.03: 3% over the limit
};

struct SlaCheck {
  std::vector<SlaMiss> misses;
  std::vector<SlaMetric> unchecked;  // a limit is set but the figure is not known
  bool meets() const { return misses.empty(); }
};

// Each set limit against its figure: a figure above its limit is a miss
// (equal meets it); a set limit without a figure is unchecked, never passed
// silently: the caller says so.
SlaCheck CheckSla(const SlaLimits& limits, const SlaValues& figures);

// A value of the metric in its key's unit: "41.20 ms", "9.912 s".
std::string InKeyUnit(SlaMetric m, double seconds);
// "TPOT p99 41.20 ms > tpot_p99_ms 40 ms (+3.00%)".
std::string MissText(const SlaMiss& miss);
// "tpot_p99_ms 40 ms, e2e_p99_s 30 s", the set limits in key order.
std::string LimitsText(const SlaLimits& limits);

// Goodput's test of one request (requests/s that meet every limit,
// vLLM's benchmarks/benchmark_serving.py calculate_metrics, the source of
// SGLang's bench_serving, and DistServe's per-request SLO attainment): each
// set limit against the request's own figure. A figure the request has not
// (TPOT or ITL of a one-token answer: no token after the first to be late)
// does not fail it; a request without a first token or an end fails.
bool RequestMeetsSla(const SlaLimits& limits, const SlaValues& request);

}  // namespace ppsearch::decide
