#include "spec/spec.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

namespace ppsearch::spec {
namespace {

// Callers may spell a flag as on the command line ("--chunked-prefill-size")
// or as in the spec ("chunked-prefill-size"); both name the same arg.
std::string_view StripDashes(std::string_view flag) {
  while (!flag.empty() && flag.front() == '-') flag.remove_prefix(1);
  return flag;
}

}  // namespace

bool HardwareNamesAFile(const std::string& hardware) {
  const std::string suffix = ".toml";
  const bool toml = hardware.size() > suffix.size() &&
                    hardware.compare(hardware.size() - suffix.size(), suffix.size(), suffix) == 0;
  return toml || hardware.find('/') != std::string::npos;
}

std::optional<std::vector<int>> ParseVersion(const std::string& text) {
  std::string_view v = text;
  if (!v.empty() && (v.front() == 'v' || v.front() == 'V')) v.remove_prefix(1);
  std::vector<int> parts;
  while (!v.empty() && std::isdigit(static_cast<unsigned char>(v.front()))) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc()) return std::nullopt;
    parts.push_back(n);
    v.remove_prefix(static_cast<size_t>(ptr - v.data()));
    if (v.empty() || v.front() != '.') break;
    v.remove_prefix(1);
  }
  if (parts.empty()) return std::nullopt;
  return parts;
}

std::string LayoutSpec::Label() const {
  if (disaggregated())
    return std::to_string(prefill().instances) + "P" + std::to_string(decode().instances) + "D " +
           prefill().Label() + " + " + decode().Label();
  std::string label =
      "PP" + std::to_string(pp) + "/TP" + std::to_string(tp) + "/EP" + std::to_string(ep);
  // DP and the instance count are shown unless 1: a size a check refuses
  // (0, -1) must still be named as written.
  if (dp != 1) label.append("/DP").append(std::to_string(dp));
  if (instances != 1) return std::to_string(instances) + "x" + label;
  return label;
}

std::string LayoutSpec::Slug() const {
  if (disaggregated())
    return std::to_string(prefill().instances) + "p" + std::to_string(decode().instances) + "d-" +
           prefill().Slug() + "+" + decode().Slug();
  std::string slug =
      "pp" + std::to_string(pp) + "-tp" + std::to_string(tp) + "-ep" + std::to_string(ep);
  if (dp > 1) slug.append("-dp").append(std::to_string(dp));
  if (instances > 1) return std::to_string(instances) + "x-" + slug;
  return slug;
}

LayoutSpec DeploymentLayout(const LayoutSpec& prefill, const LayoutSpec& decode,
                            const SourceLoc& origin) {
  LayoutSpec deployment;
  deployment.origin = origin;
  deployment.pools = {prefill, decode};
  for (LayoutSpec& pool : deployment.pools) pool.pools.clear();  // a pool is never a deployment
  return deployment;
}

const ArgValue* EngineSpec::FindArg(const std::string& flag) const {
  std::string_view name = StripDashes(flag);
  for (const auto& [arg_name, value] : args) {
    if (arg_name == name) return &value;
  }
  return nullptr;
}

std::optional<int64_t> EngineSpec::ArgInt(const std::string& flag) const {
  const ArgValue* arg = FindArg(flag);
  if (arg == nullptr) return std::nullopt;
  if (arg->kind == ArgValue::Kind::kInt) return arg->int_value;
  // A number written as a string ("8192") still means 8192 to the server's argparse.
  if (arg->kind == ArgValue::Kind::kString) {
    int64_t parsed = 0;
    const char* begin = arg->text.data();
    const char* end = begin + arg->text.size();
    auto [ptr, ec] = std::from_chars(begin, end, parsed);
    if (ec == std::errc() && ptr == end && begin != end) return parsed;
  }
  return std::nullopt;
}

std::optional<std::string> EngineSpec::ArgString(const std::string& flag) const {
  const ArgValue* arg = FindArg(flag);
  if (arg == nullptr) return std::nullopt;
  return arg->text;
}

bool EngineSpec::ArgTrue(const std::string& flag) const {
  const ArgValue* arg = FindArg(flag);
  if (arg == nullptr) return false;
  if (arg->kind == ArgValue::Kind::kBool) return arg->bool_value;
  return arg->kind == ArgValue::Kind::kString && (arg->text == "true" || arg->text == "True");
}

SourceLoc Spec::Origin(const std::string& key) const {
  auto it = origins.find(key);
  if (it != origins.end()) return it->second;
  SourceLoc loc;
  loc.file = path;
  loc.key = key;
  return loc;
}

std::vector<int> ServerNodes(const Spec& spec, const LayoutSpec& layout) {
  std::vector<int> out;
  const bool pools_only = layout.disaggregated() && spec.disaggregation;
  for (size_t h = 0; h < spec.cluster.hosts.size(); ++h) {
    const int node = static_cast<int>(h);
    auto in = [node](const PoolSpec& pool) {
      return std::find(pool.hosts.begin(), pool.hosts.end(), node) != pool.hosts.end();
    };
    if (!pools_only || in(spec.disaggregation->prefill) || in(spec.disaggregation->decode))
      out.push_back(node);
  }
  return out;
}

}  // namespace ppsearch::spec
