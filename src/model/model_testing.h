#pragma once
// Hand-built weights for tests that construct a ModelDesc by hand (planner,
// cost model) rather than loading a config.

#include <cstdint>
#include <string>

#include "model/model.h"

namespace ppsearch::model::testing {

inline Linear MakeLinear(const std::string& name, int64_t in, int64_t out, Sharding sharding,
                         OpRole role = OpRole::kAttention, DType dtype = DType::kBf16,
                         int64_t count = 1, int64_t active = 1) {
  Linear l;
  l.name = name;
  l.in_features = in;
  l.out_features = out;
  l.sharding = sharding;
  l.role = role;
  l.dtype = dtype;
  l.count = count;
  l.active_count = active;
  return l;
}

}  // namespace ppsearch::model::testing
