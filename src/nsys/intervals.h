#pragma once
// Interval arithmetic over half-open nanosecond intervals [start, end), the
// pure core of the profile analysis. Everything here consumes intervals in
// start order, one at a time, so an export of millions of kernels streams
// through in constant memory per GPU.

#include <cstdint>
#include <optional>
#include <vector>

namespace ppsearch::nsys {

struct Interval {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t length_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
};

// a + b, held at INT64_MAX instead of overflowing. Sums of concurrent kernel
// times need it only for files no profiler writes: with timestamps within
// +-2^53 ns (export_rows.h) over 500 kernels, each running for months, would
// have to overlap.
inline int64_t AddSaturating(int64_t a, int64_t b) {
  int64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? INT64_MAX : sum;
}

// |a ∩ b|, 0 when they do not meet.
int64_t OverlapNs(const Interval& a, const Interval& b);

// Merges intervals fed in start order into disjoint ones, in order: Add
// returns the previous merged interval once `next` starts after it ends.
// Touching intervals ([0,5) and [5,9)) merge.
class UnionBuilder {
 public:
  std::optional<Interval> Add(const Interval& next);
  std::optional<Interval> Finish();  // the last open interval, then empty

 private:
  std::optional<Interval> open_;
};

// Windows (sorted by start, possibly overlapping or nested) met by intervals
// fed in start order: Add calls on_overlap(window_index, overlap_ns) for each
// window the interval meets. A window leaves the active set once an interval
// starts at or after its end, since no later interval can reach back into it.
class WindowSweep {
 public:
  explicit WindowSweep(const std::vector<Interval>& windows) : windows_(windows) {}

  template <typename OnOverlap>
  void Add(const Interval& iv, OnOverlap&& on_overlap) {
    while (next_ < windows_.size() && windows_[next_].start_ns < iv.end_ns)
      active_.push_back(next_++);
    size_t kept = 0;
    for (size_t i = 0; i < active_.size(); ++i) {
      const size_t w = active_[i];
      if (windows_[w].end_ns <= iv.start_ns) continue;  // finished for good
      active_[kept++] = w;
      const int64_t overlap = OverlapNs(windows_[w], iv);
      if (overlap > 0) on_overlap(w, overlap);
    }
    active_.resize(kept);
  }

 private:
  const std::vector<Interval>& windows_;
  size_t next_ = 0;
  std::vector<size_t> active_;
};

}  // namespace ppsearch::nsys
