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
// A request rate: 2 decimals below 10/s, 1 above, and a rate below 0.005/s
// to its first significant digit (0.0042 -> "0.004", not "0.00").
std::string FormatRate(double requests_per_s);
// "7.1% to 31.7%"; one percentage when the two print alike ("9.1%").
std::string FormatPercentRange(double low, double high, int decimals = 1);

}  // namespace ppsearch
