// Number formatting for the plan's text: people compare MiB and parameter
// counts at a glance, so large numbers get separators and short units.

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "plan/plan_internal.h"

namespace ppsearch::plan {

std::string FormatMib(double mib) { return FormatThousands(std::llround(mib)); }

std::string FormatParams(int64_t params) {
  struct Unit {
    double scale;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  char buf[32];
  for (const Unit& unit : kUnits) {
    if (static_cast<double>(params) >= unit.scale) {
      const double scaled = static_cast<double>(params) / unit.scale;
      // Three significant digits: "2.80T", "61.4B", "384M".
      const int decimals = scaled >= 100 ? 0 : scaled >= 10 ? 1 : 2;
      std::snprintf(buf, sizeof(buf), "%.*f%s", decimals, scaled, unit.suffix);
      return buf;
    }
  }
  return std::to_string(params);
}

std::string FormatBytes(int64_t bytes) {
  char buf[32];
  if (bytes < 64 * 1024) return FormatThousands(bytes) + " B";
  if (bytes < 64LL * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / kBytesPerMib);
  }
  return buf;
}

}  // namespace ppsearch::plan
