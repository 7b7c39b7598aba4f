#include "util/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ppsearch {

std::string FormatThousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string FormatRate(double requests_per_s) {
  int decimals = requests_per_s < 10 ? 2 : 1;
  if (requests_per_s > 0 && requests_per_s < 0.005)
    decimals = static_cast<int>(std::ceil(-std::log10(requests_per_s) - 1e-9));
  return FormatNumber(requests_per_s, decimals);
}

std::string FormatNumber(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, std::fabs(value));
  std::string s(buf);
  size_t dot = s.find('.');
  std::string int_part = s.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : s.substr(dot);
  std::string grouped = FormatThousands(std::strtoll(int_part.c_str(), nullptr, 10));
  bool negative = value < 0 && std::strtod(buf, nullptr) != 0;
  return (negative ? "-" : "") + grouped + frac;
}

std::string FormatSignedPercent(double fraction, int decimals) {
  if (!std::isfinite(fraction)) return "n/a";
  double pct = fraction * 100;
  std::string body = FormatNumber(pct, decimals);
  if (body[0] != '-') body = "+" + body;
  return body + "%";
}

std::string FormatPercent(double fraction, int decimals) {
  return FormatNumber(fraction * 100, decimals) + "%";
}

std::string FormatPercentRange(double low, double high, int decimals) {
  const std::string a = FormatPercent(low, decimals), b = FormatPercent(high, decimals);
  return a == b ? a : a + " to " + b;
}

}  // namespace ppsearch
