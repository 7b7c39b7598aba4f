#include "spec/layout_text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string_view>
#include <vector>

namespace ppsearch::spec {
namespace {

// One part of "PP8/TP4/EP4" or "8/4/4": an optional prefix ("PP", any case) and a number.
std::optional<int> ParsePart(std::string_view part, std::string_view prefix) {
  if (part.size() >= prefix.size() &&
      std::equal(prefix.begin(), prefix.end(), part.begin(),
                 [](char a, char b) { return a == std::toupper(static_cast<unsigned char>(b)); })) {
    part.remove_prefix(prefix.size());
  }
  int value = 0;
  auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (ec != std::errc() || end != part.data() + part.size() || part.empty()) return std::nullopt;
  return value;
}

}  // namespace

Result<LayoutSpec> ParseLayoutText(const std::string& text) {
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  for (size_t slash; (slash = rest.find('/')) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  parts.push_back(rest);
  std::optional<int> pp, tp, ep;
  if (parts.size() == 3) {
    pp = ParsePart(parts[0], "PP");
    tp = ParsePart(parts[1], "TP");
    ep = ParsePart(parts[2], "EP");
  }
  if (!pp || !tp || !ep) {
    return MakeError("--layout " + text +
                     ": expected PP/TP/EP, e.g. --layout 8/4/4 or --layout PP8/TP4/EP4");
  }
  LayoutSpec layout;
  layout.pp = *pp;
  layout.tp = *tp;
  layout.ep = *ep;
  layout.origin.file = "--layout " + text;
  return layout;
}

}  // namespace ppsearch::spec
