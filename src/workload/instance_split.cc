#include "workload/instance_split.h"

#include <algorithm>
#include <cstdint>

namespace ppsearch::workload {

std::vector<int> SplitEvenly(int total, int parts) {
  parts = std::max(parts, 1);
  std::vector<int> out(parts, total / parts);
  for (int i = 0; i < total % parts; ++i) ++out[i];
  return out;
}

std::vector<int> SplitInProportion(int total, const std::vector<int>& weights) {
  int64_t sum = 0;
  for (int w : weights) sum += w;
  std::vector<int> out(weights.size(), 0);
  if (sum <= 0) return out;
  int64_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    out[i] = static_cast<int>(int64_t{total} * weights[i] / sum);
    given += out[i];
  }
  for (size_t i = 0; given < total; i = (i + 1) % weights.size())
    if (weights[i] > 0) {
      ++out[i];
      ++given;
    }
  return out;
}

}  // namespace ppsearch::workload
