#include "spec/moe_backends.h"

#include <algorithm>
#include <array>

namespace ppsearch::spec {
namespace {

constexpr std::array<const char*, 11> kBackends = {"none", "deepep",        "mooncake",   "nixl",
                                                   "mori", "ascend_fuseep", "flashinfer", "megamoe",
                                                   "pplx", "ascend_tp",     "deepep_v2"};

}  // namespace

bool IsMoeA2aBackend(const std::string& name) {
  return std::any_of(kBackends.begin(), kBackends.end(), [&](const char* b) { return name == b; });
}

std::string MoeA2aBackendNames() {
  std::string out;
  for (const char* b : kBackends) out += (out.empty() ? "" : ", ") + std::string(b);
  return out;
}

}  // namespace ppsearch::spec
