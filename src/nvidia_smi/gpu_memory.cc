#include "nvidia_smi/gpu_memory.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace ppsearch::nvidia_smi {
namespace {

std::string Trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::vector<std::string> SplitCommas(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    size_t comma = line.find(',', start);
    fields.push_back(
        Trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return fields;
    start = comma + 1;
  }
}

bool IsNotAvailable(const std::string& v) {
  return v == "[N/A]" || v == "N/A" || v == "[Not Supported]";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether a field stands where a reading does: a number of any shape (a
// sign, a digit or a point first; nan or inf), or N/A. A GPU's name never
// starts so, which tells a reading split at a decimal comma from a name
// holding a comma.
bool LooksLikeReading(const std::string& v) {
  if (v.empty()) return false;
  if (IsNotAvailable(v)) return true;
  const std::string word = Lower(v[0] == '+' || v[0] == '-' ? v.substr(1) : v);
  if (word.rfind("nan", 0) == 0 || word.rfind("inf", 0) == 0) return true;
  return std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '+' || v[0] == '-' ||
         v[0] == '.';
}

// A decimal number (sign, digits, point, exponent; or nan, inf), without
// hexadecimal or locale forms.
bool IsDecimal(const std::string& v) {
  const std::string word = Lower(v[0] == '+' || v[0] == '-' ? v.substr(1) : v);
  if (word == "nan" || word == "inf" || word == "infinity") return true;
  return !word.empty() && word.find_first_not_of("0123456789.e+-") == std::string::npos &&
         std::isdigit(static_cast<unsigned char>(word.back()));
}

// A MiB reading: nullopt for N/A; its value when it is a decimal number,
// however impossible (negative, not finite, 1e5000 as inf: validation
// names those); NaN when it is no number at all (0x10, 1,5), with `bad`
// saying so.
std::optional<double> ParseMib(const std::string& field, const char* column, std::string* bad) {
  if (IsNotAvailable(field)) return std::nullopt;
  std::string num = field;
  if (num.size() > 4 && num.compare(num.size() - 4, 4, " MiB") == 0) num.resize(num.size() - 4);
  char* end = nullptr;
  const double d = num.empty() ? 0 : std::strtod(num.c_str(), &end);
  if (num.empty() || !IsDecimal(num) || end != num.c_str() + num.size()) {
    *bad += std::string(bad->empty() ? "" : ", ") + column + " '" + field + "' is not a number";
    return std::numeric_limits<double>::quiet_NaN();
  }
  return d;  // strtod's overflow is +-HUGE_VAL, an infinity
}

bool ParseIndex(const std::string& v, int* out) {
  if (v.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || n < 0 || n > 1 << 20) return false;
  *out = static_cast<int>(n);
  return true;
}

}  // namespace

Result<std::vector<GpuMemory>> ParseGpuMemoryCsv(const std::string& text,
                                                 const std::string& source) {
  std::vector<GpuMemory> gpus;
  std::istringstream in(text);
  std::string raw;
  for (int line_no = 1; std::getline(in, raw); ++line_no) {
    const std::string line = Trim(raw);
    if (line.empty()) continue;
    auto fail = [&](const std::string& what) {
      return MakeError(fmt::format("{}:{}: {}: '{}'", source, line_no, what, line));
    };
    std::vector<std::string> f = SplitCommas(line);
    if (f.size() < 5)
      return fail(
          fmt::format("expected 5 comma-separated fields (index, uuid, name, memory.used, "
                      "memory.total), got {}",
                      f.size()));
    // A sixth column is the driver version when the two fields before it
    // stand where readings do and it does not (a word, N/A, or a dotted
    // number such as 550.54.15).
    std::string driver;
    const std::string& last = f.back();
    const bool dotted =
        last.find('.') != std::string::npos && std::isdigit(static_cast<unsigned char>(last[0]));
    if (f.size() >= 6 && LooksLikeReading(f[f.size() - 3]) && LooksLikeReading(f[f.size() - 2]) &&
        (IsNotAvailable(last) || dotted || !LooksLikeReading(last))) {
      driver = IsNotAvailable(last) ? "" : last;
      f.pop_back();
    }
    // The name is the only free text: it takes the fields after it up to
    // the first that stands where a reading does.
    size_t readings = 3;
    while (readings + 2 < f.size() && !LooksLikeReading(f[readings])) {
      f[2] += ", " + f[readings];
      ++readings;
    }
    GpuMemory g;
    if (!ParseIndex(f[0], &g.index))
      return fail("index '" + f[0] + "' is not a non-negative integer");
    g.uuid = f[1];
    g.name = f[2];
    g.driver_version = driver;
    if (g.uuid.empty()) return fail("empty uuid");
    if (f.size() - readings == 2) {
      g.used_mib = ParseMib(f[readings], "memory.used", &g.unreadable);
      g.total_mib = ParseMib(f[readings + 1], "memory.total", &g.unreadable);
    } else {  // a reading split at a decimal comma: which one cannot be told
      std::string text;
      for (size_t i = readings; i < f.size(); ++i) text += (text.empty() ? "" : ",") + f[i];
      g.unreadable = "memory.used and memory.total '" + text + "' are not two numbers";
      g.used_mib = g.total_mib = std::numeric_limits<double>::quiet_NaN();
    }
    gpus.push_back(std::move(g));
  }
  if (gpus.empty()) return MakeError(source + ": no GPU lines in the output");
  return gpus;
}

std::string FormatGpuMemoryCsv(const std::vector<GpuMemory>& gpus) {
  auto value = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.0f}", *v) : std::string("[N/A]");
  };
  std::string out;
  for (const auto& g : gpus)
    out += fmt::format("{}, {}, {}, {}, {}, {}\n", g.index, g.uuid, g.name, value(g.used_mib),
                       value(g.total_mib), g.driver_version.empty() ? "[N/A]" : g.driver_version);
  return out;
}

}  // namespace ppsearch::nvidia_smi
