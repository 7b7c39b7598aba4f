#pragma once
// How a router splits a load over a layout's instances (independent copies
// of one deployment, spec::LayoutSpec::instances): as evenly as whole
// requests allow, as both policies of `ppsearch bench` do for a closed loop
// of equal requests: round-robin by turn, least-outstanding by sending each
// new request to an instance with the fewest in flight.

#include <vector>

namespace ppsearch::workload {

// `total` over `parts` (>= 1): every part total / parts, and the first
// total % parts parts one more, e.g. 9 over 2 -> {5, 4}, 1 over 2 -> {1, 0}.
std::vector<int> SplitEvenly(int total, int parts);

// `total` in proportion to `weights` (non-negative, not all zero): each
// part floor(total x weight / sum), the rest one each to the first parts
// with a weight, e.g. 10 over {2, 1} -> {7, 3}, 5 over {1, 0} -> {5, 0}.
std::vector<int> SplitInProportion(int total, const std::vector<int>& weights);

}  // namespace ppsearch::workload
