#include "decide/sla.h"

#include <fmt/format.h>

#include "util/format.h"

namespace ppsearch::decide {

const SlaMetricInfo& Info(SlaMetric m) {
  static const SlaMetricInfo kInfo[] = {
      {"ttft_p99_s", "TTFT p99", "s", 1, false},
      {"tpot_p99_ms", "TPOT p99", "ms", 1000, true},
      {"itl_p99_ms", "ITL p99", "ms", 1000, true},
      {"e2e_p99_s", "E2E latency p99", "s", 1, false},
  };
  return kInfo[static_cast<size_t>(m)];
}

bool SlaValues::any() const {
  for (const auto& v : s)
    if (v) return true;
  return false;
}

SlaCheck CheckSla(const SlaLimits& limits, const SlaValues& figures) {
  SlaCheck out;
  for (SlaMetric m : kSlaMetrics) {
    if (!limits[m]) continue;
    if (!figures[m])
      out.unchecked.push_back(m);
    else if (*figures[m] > *limits[m])
      out.misses.push_back({m, *figures[m], *limits[m]});
  }
  return out;
}

std::string InKeyUnit(SlaMetric m, double seconds) {
  const SlaMetricInfo& info = Info(m);
  return fmt::format("{:.{}f} {}", seconds * info.per_second, info.per_second > 1 ? 2 : 3,
                     info.unit);
}

namespace {

std::string LimitInUnit(SlaMetric m, double seconds) {
  const SlaMetricInfo& info = Info(m);
  return fmt::format("{:g} {}", seconds * info.per_second, info.unit);
}

}  // namespace

std::string MissText(const SlaMiss& miss) {
  const SlaMetricInfo& info = Info(miss.metric);
  return fmt::format("{} {} > {} {} ({})", info.label, InKeyUnit(miss.metric, miss.value_s),
                     info.key, LimitInUnit(miss.metric, miss.limit_s),
                     FormatSignedPercent(miss.over()));
}

std::string LimitsText(const SlaLimits& limits) {
  std::string out;
  for (SlaMetric m : kSlaMetrics)
    if (limits[m])
      out +=
          (out.empty() ? "" : ", ") + std::string(Info(m).key) + " " + LimitInUnit(m, *limits[m]);
  return out;
}

bool RequestMeetsSla(const SlaLimits& limits, const SlaValues& request) {
  for (SlaMetric m : kSlaMetrics) {
    if (!limits[m]) continue;
    if (!request[m]) {
      if (Info(m).decode) continue;
      return false;
    }
    if (*request[m] > *limits[m]) return false;
  }
  return true;
}

}  // namespace ppsearch::decide
