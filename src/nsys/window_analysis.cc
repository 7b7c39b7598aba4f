#include "nsys/window_analysis.h"

#include <algorithm>
#include <cassert>

namespace ppsearch::nsys {

double WindowBreakdown::Share(int64_t part_ns) const {
  const int64_t d = duration_ns();
  return d > 0 ? static_cast<double>(part_ns) / static_cast<double>(d) : 0.0;
}

GpuWindowAnalyzer::GpuWindowAnalyzer(std::vector<Interval> windows_by_start)
    : windows_(std::move(windows_by_start)),
      comm_sweep_(windows_),
      compute_sweep_(windows_),
      all_sweep_(windows_),
      kernel_sweep_(windows_),
      comm_ns_(windows_.size(), 0),
      compute_ns_(windows_.size(), 0),
      all_ns_(windows_.size(), 0),
      out_(windows_.size()) {
  assert(std::is_sorted(windows_.begin(), windows_.end(), [](const Interval& a, const Interval& b) {
    return a.start_ns < b.start_ns;
  }));
  for (size_t w = 0; w < windows_.size(); ++w) out_[w].window = windows_[w];
}

void GpuWindowAnalyzer::AddUnion(WindowSweep& sweep, const std::optional<Interval>& merged,
                                 std::vector<int64_t>& covered) {
  if (!merged) return;
  sweep.Add(*merged, [&covered](size_t w, int64_t overlap) { covered[w] += overlap; });
}

void GpuWindowAnalyzer::AddKernel(const Kernel& k) {
  if (k.span.length_ns() == 0) return;
  kernel_sweep_.Add(k.span, [this, &k](size_t w, int64_t overlap) {
    WindowBreakdown& b = out_[w];
    ++b.kernels;
    if (k.collective) {
      const int kind = static_cast<int>(*k.collective);
      ++b.calls[kind];
      b.time_ns[kind] = AddSaturating(b.time_ns[kind], overlap);
    } else {
      const int c = static_cast<int>(k.compute_class);
      b.class_time_ns[c] = AddSaturating(b.class_time_ns[c], overlap);
    }
  });
  if (k.collective) {
    AddUnion(comm_sweep_, comm_union_.Add(k.span), comm_ns_);
  } else {
    AddUnion(compute_sweep_, compute_union_.Add(k.span), compute_ns_);
  }
  AddUnion(all_sweep_, all_union_.Add(k.span), all_ns_);
}

std::vector<WindowBreakdown> GpuWindowAnalyzer::Finish() {
  AddUnion(comm_sweep_, comm_union_.Finish(), comm_ns_);
  AddUnion(compute_sweep_, compute_union_.Finish(), compute_ns_);
  AddUnion(all_sweep_, all_union_.Finish(), all_ns_);
  // Inclusion-exclusion on the three unions: |C ∩ K| = |C| + |K| - |C ∪ K|.
  for (size_t w = 0; w < out_.size(); ++w) {
    WindowBreakdown& b = out_[w];
    b.exposed_ns = all_ns_[w] - compute_ns_[w];
    b.compute_only_ns = all_ns_[w] - comm_ns_[w];
    b.overlapped_ns = comm_ns_[w] + compute_ns_[w] - all_ns_[w];
    b.idle_ns = b.duration_ns() - all_ns_[w];
  }
  return std::move(out_);
}

std::optional<WindowBreakdown> ForwardWindowSplitter::AddKernel(const Kernel& k) {
  if (k.span.length_ns() == 0) return std::nullopt;
  std::optional<WindowBreakdown> closed;
  if (!current_.empty() && k.span.start_ns >= period_.end_ns + gap_ns_) closed = Close();
  if (current_.empty()) period_ = k.span;
  period_.end_ns = std::max(period_.end_ns, k.span.end_ns);
  current_.push_back(k);
  return closed;
}

std::optional<WindowBreakdown> ForwardWindowSplitter::Finish() {
  if (current_.empty()) return std::nullopt;
  return Close();
}

WindowBreakdown ForwardWindowSplitter::Close() {
  GpuWindowAnalyzer analyzer({period_});
  for (const Kernel& k : current_) analyzer.AddKernel(k);
  current_.clear();
  return analyzer.Finish().front();
}

}  // namespace ppsearch::nsys
