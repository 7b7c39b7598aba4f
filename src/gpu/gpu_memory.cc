#include "gpu/gpu_memory.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace ppsearch::gpu {
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

// A MiB value, or nullopt for N/A; false when the text is neither.
bool ParseMib(const std::string& v, std::optional<double>* out) {
  if (IsNotAvailable(v)) {
    *out = std::nullopt;
    return true;
  }
  if (v.empty()) return false;
  std::string num = v;
  if (num.size() > 4 && num.compare(num.size() - 4, 4, " MiB") == 0) num.resize(num.size() - 4);
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(num.c_str(), &end);
  if (errno != 0 || end == num.c_str() || *end != '\0' || !std::isfinite(d) || d < 0) return false;
  *out = d;
  return true;
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
    // Only the name is free text: fields beyond the fixed ones belong to it.
    // A sixth column is the driver version when the two before it are
    // memory values (a comma in a five-column line's name leaves a name
    // part there instead).
    std::optional<double> unused;
    const bool has_driver =
        f.size() >= 6 && ParseMib(f[f.size() - 3], &unused) && ParseMib(f[f.size() - 2], &unused);
    std::string driver;
    if (has_driver) {
      driver = IsNotAvailable(f.back()) ? "" : f.back();
      f.pop_back();
    }
    while (f.size() > 5) {
      f[2] += ", " + f[3];
      f.erase(f.begin() + 3);
    }
    GpuMemory g;
    if (!ParseIndex(f[0], &g.index))
      return fail("index '" + f[0] + "' is not a non-negative integer");
    g.uuid = f[1];
    g.name = f[2];
    g.driver_version = driver;
    if (g.uuid.empty()) return fail("empty uuid");
    if (!ParseMib(f[3], &g.used_mib))
      return fail("memory.used '" + f[3] + "' is not a number of MiB or [N/A]");
    if (!ParseMib(f[4], &g.total_mib))
      return fail("memory.total '" + f[4] + "' is not a number of MiB or [N/A]");
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

}  // namespace ppsearch::gpu
