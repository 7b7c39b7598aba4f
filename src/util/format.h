#pragma once
// Number formatting for tables people read: thousands separators, fixed
// decimals, signed percentages.

#include <cstdint>
#include <string>

namespace ppsearch {

std::string FormatThousands(int64_t value);                          // 1234567 -> "1,234,567"
std::string FormatNumber(double value, int decimals);                // 3257.956, 2 -> "3,257.96"
std::string FormatSignedPercent(double fraction, int decimals = 2);  // 0.1234 -> "+12.34%"
std::string FormatPercent(double fraction, int decimals = 2);        // 0.1234 -> "12.34%"
// "7.1% to 31.7%"; one percentage when the two print alike ("9.1%").
std::string FormatPercentRange(double low, double high, int decimals = 1);

}  // namespace ppsearch
