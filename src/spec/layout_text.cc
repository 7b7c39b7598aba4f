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

// The instance count "<n>x" that starts `text` (removed from it), 1 when
// there is none; nullopt when the count is not a positive number.
std::optional<int> TakeInstances(std::string_view& text) {
  const size_t x = text.find_first_of("xX");
  if (x == std::string_view::npos || x == 0 ||
      !std::all_of(text.begin(), text.begin() + x,
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return 1;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + x, value);
  if (ec != std::errc() || end != text.data() + x || value < 1) return std::nullopt;
  text.remove_prefix(x + 1);
  return value;
}

}  // namespace

Result<LayoutSpec> ParseLayoutText(const std::string& text) {
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  const std::optional<int> instances = TakeInstances(rest);
  for (size_t slash; (slash = rest.find('/')) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  parts.push_back(rest);
  std::optional<int> pp, tp, ep, dp = 1;
  if (parts.size() == 3 || parts.size() == 4) {
    pp = ParsePart(parts[0], "PP");
    tp = ParsePart(parts[1], "TP");
    ep = ParsePart(parts[2], "EP");
    if (parts.size() == 4) dp = ParsePart(parts[3], "DP");
  }
  if (!pp || !tp || !ep || !dp || !instances) {
    return MakeError("--layout " + text +
                     ": expected PP/TP/EP or PP/TP/EP/DP, optionally after an instance count "
                     "NX, e.g. --layout 8/4/4, --layout PP8/TP4/EP4, --layout PP1/TP8/EP8/DP8 "
                     "or --layout 2xPP2/TP8/EP4");
  }
  LayoutSpec layout;
  layout.pp = *pp;
  layout.tp = *tp;
  layout.ep = *ep;
  layout.dp = *dp;
  layout.instances = *instances;
  layout.origin.file = "--layout " + text;
  return layout;
}

namespace {

// An aggregated layout's slug at the start of `text`.
std::optional<std::pair<LayoutSpec, size_t>> ParseLayoutSlugPrefix(std::string_view text) {
  size_t pos = 0;
  // One "<prefix><digits>" part; a number of more than 6 digits is no layout's.
  auto part = [&](std::string_view prefix) -> std::optional<int> {
    if (text.substr(pos, prefix.size()) != prefix) return std::nullopt;
    size_t end = pos + prefix.size();
    while (end < text.size() && end - pos - prefix.size() < 7 &&
           std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    int value = 0;
    auto [ptr, ec] = std::from_chars(text.data() + pos + prefix.size(), text.data() + end, value);
    if (ec != std::errc() || ptr != text.data() + end || value < 1) return std::nullopt;
    pos = end;
    return value;
  };
  LayoutSpec l;
  // "2x-": an instance count before the layout.
  if (const auto instances = part(""); instances && text.substr(pos, 2) == "x-") {
    l.instances = *instances;
    pos += 2;
  } else {
    pos = 0;
  }
  const auto pp = part("pp");
  const auto tp = pp ? part("-tp") : std::nullopt;
  const auto ep = tp ? part("-ep") : std::nullopt;
  if (!ep) return std::nullopt;
  l.pp = *pp;
  l.tp = *tp;
  l.ep = *ep;
  const size_t before_dp = pos;
  if (const auto dp = part("-dp")) {
    l.dp = *dp;
  } else {
    pos = before_dp;
  }
  return std::make_pair(l, pos);
}

// "1p3d-<prefill slug>+<decode slug>": the counts must be the pools' instances.
std::optional<std::pair<LayoutSpec, size_t>> ParseDeploymentSlugPrefix(std::string_view text) {
  int prefill_servers = 0, decode_servers = 0;
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  auto [p, ec] = std::from_chars(begin, end, prefill_servers);
  if (ec != std::errc() || p == end || *p != 'p') return std::nullopt;
  auto [d, ec2] = std::from_chars(p + 1, end, decode_servers);
  if (ec2 != std::errc() || end - d < 2 || d[0] != 'd' || d[1] != '-') return std::nullopt;
  size_t pos = static_cast<size_t>(d + 2 - begin);
  const auto prefill = ParseLayoutSlugPrefix(text.substr(pos));
  if (!prefill) return std::nullopt;
  pos += prefill->second;
  if (pos >= text.size() || text[pos] != '+') return std::nullopt;
  ++pos;
  const auto decode = ParseLayoutSlugPrefix(text.substr(pos));
  if (!decode) return std::nullopt;
  pos += decode->second;
  if (prefill->first.instances != prefill_servers || decode->first.instances != decode_servers)
    return std::nullopt;
  return std::make_pair(DeploymentLayout(prefill->first, decode->first, {}), pos);
}

}  // namespace

std::optional<std::pair<LayoutSpec, size_t>> ParseSlugPrefix(std::string_view text) {
  if (auto deployment = ParseDeploymentSlugPrefix(text)) return deployment;
  return ParseLayoutSlugPrefix(text);
}

}  // namespace ppsearch::spec
