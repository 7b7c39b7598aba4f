#include "nsys/intervals.h"

#include <algorithm>

namespace ppsearch::nsys {

int64_t OverlapNs(const Interval& a, const Interval& b) {
  const int64_t lo = std::max(a.start_ns, b.start_ns);
  const int64_t hi = std::min(a.end_ns, b.end_ns);
  return hi > lo ? hi - lo : 0;
}

std::optional<Interval> UnionBuilder::Add(const Interval& next) {
  if (next.length_ns() == 0) return std::nullopt;
  if (!open_) {
    open_ = next;
    return std::nullopt;
  }
  if (next.start_ns <= open_->end_ns) {
    open_->end_ns = std::max(open_->end_ns, next.end_ns);
    return std::nullopt;
  }
  const Interval done = *open_;
  open_ = next;
  return done;
}

std::optional<Interval> UnionBuilder::Finish() {
  std::optional<Interval> done = open_;
  open_.reset();
  return done;
}

}  // namespace ppsearch::nsys
