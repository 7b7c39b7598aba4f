#include "uncertainty/overlap.h"

#include <fmt/format.h>

namespace ppsearch::uncertainty {

std::vector<int> OverlappingLevels(const std::vector<LevelInterval>& a,
                                   const std::vector<LevelInterval>& b) {
  std::vector<int> out;
  for (const LevelInterval& x : a)
    for (const LevelInterval& y : b)
      if (x.concurrency == y.concurrency && x.interval.Overlaps(y.interval))
        out.push_back(x.concurrency);
  return out;
}

std::string OverlapNote(const spec::LayoutSpec& primary, const std::vector<LevelInterval>& p,
                        const spec::LayoutSpec& runner_up, const std::vector<LevelInterval>& r,
                        const std::string& metric) {
  const std::vector<int> levels = OverlappingLevels(p, r);
  if (levels.empty())
    return fmt::format(
        "the intervals of {} and {} do not overlap ({} at every concurrency level): the ranking "
        "holds over the 10th-90th percentile of this calibration's uncertainty",
        primary.Label(), runner_up.Label(), metric);
  std::string where;
  for (size_t i = 0; i < levels.size(); ++i)
    where += (i == 0                   ? ""
              : i + 1 == levels.size() ? " and "
                                       : ", ") +
             fmt::format("C={}", levels[i]);
  return fmt::format(
      "the intervals of {} and {} overlap ({} at {}): the ranking is not certain at this "
      "calibration",
      primary.Label(), runner_up.Label(), metric, where);
}

}  // namespace ppsearch::uncertainty
