#include "nsys/profile_summary.h"

#include <algorithm>

#include "stats/stats.h"

namespace ppsearch::nsys {

Distribution Describe(const std::vector<double>& values) {
  Distribution d;
  if (values.empty()) return d;
  d.median = stats::Median(values);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  d.min = *lo;
  d.max = *hi;
  d.spread = d.median != 0 ? stats::Spread(values) : 0;
  return d;
}

ProfileSummary Summarize(const std::vector<GpuWindows>& gpus) {
  ProfileSummary s;
  std::vector<double> ms, exposed, overlapped, compute_only, idle, comm_overlap;
  std::array<std::vector<double>, kCollectiveKinds> calls, time_ms;
  std::array<std::vector<double>, kComputeClasses> class_share;
  for (const GpuWindows& g : gpus) {
    if (!g.windows.empty()) ++s.gpus;
    for (const WindowBreakdown& w : g.windows) {
      ++s.windows;
      ms.push_back(static_cast<double>(w.duration_ns()) / 1e6);
      exposed.push_back(w.Share(w.exposed_ns));
      overlapped.push_back(w.Share(w.overlapped_ns));
      compute_only.push_back(w.Share(w.compute_only_ns));
      idle.push_back(w.Share(w.idle_ns));
      const int64_t comm = w.exposed_ns + w.overlapped_ns;
      if (comm > 0)
        comm_overlap.push_back(static_cast<double>(w.overlapped_ns) / static_cast<double>(comm));
      for (int k = 0; k < kCollectiveKinds; ++k) {
        calls[k].push_back(w.calls[k]);
        time_ms[k].push_back(static_cast<double>(w.time_ns[k]) / 1e6);
        s.total_calls[k] += w.calls[k];
        s.total_time_ns[k] = AddSaturating(s.total_time_ns[k], w.time_ns[k]);
      }
      for (int c = 0; c < kComputeClasses; ++c) {
        class_share[c].push_back(w.Share(w.class_time_ns[c]));
        s.total_class_time_ns[c] = AddSaturating(s.total_class_time_ns[c], w.class_time_ns[c]);
      }
    }
  }
  s.window_ms = Describe(ms);
  s.exposed_share = Describe(exposed);
  s.overlapped_share = Describe(overlapped);
  s.compute_only_share = Describe(compute_only);
  s.idle_share = Describe(idle);
  s.comm_overlapped_fraction = Describe(comm_overlap);
  for (int k = 0; k < kCollectiveKinds; ++k) {
    s.calls_per_window[k] = Describe(calls[k]);
    s.time_ms_per_window[k] = Describe(time_ms[k]);
  }
  for (int c = 0; c < kComputeClasses; ++c) s.class_share[c] = Describe(class_share[c]);
  return s;
}

std::string OverlapWords(double comm_overlapped_fraction) {
  if (comm_overlapped_fraction < 0.05) return "effectively none";
  if (comm_overlapped_fraction < 0.5) return "partial";
  return "mostly overlapped";
}

}  // namespace ppsearch::nsys
