#pragma once
// Whether two predicted layouts' intervals overlap: when the best and the
// runner-up of a prediction overlap at a concurrency level, the
// calibration's uncertainty allows either order there, and the decision
// says so instead of presenting the ranking as settled.

#include <string>
#include <vector>

#include "spec/spec.h"
#include "uncertainty/propagate.h"

namespace ppsearch::uncertainty {

struct LevelInterval {
  int concurrency = 0;
  Interval interval;
};

// Concurrency levels present in both whose intervals overlap, in `a`'s order.
std::vector<int> OverlappingLevels(const std::vector<LevelInterval>& a,
                                   const std::vector<LevelInterval>& b);

// "the intervals of A and B overlap (input TPS at C=8 and C=16): the ranking is
// not certain at this calibration", or that they are apart at every level.
std::string OverlapNote(const spec::LayoutSpec& primary, const std::vector<LevelInterval>& p,
                        const spec::LayoutSpec& runner_up, const std::vector<LevelInterval>& r,
                        const std::string& metric);

}  // namespace ppsearch::uncertainty
