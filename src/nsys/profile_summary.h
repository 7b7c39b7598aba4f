#pragma once
// The profile's analysis as a whole: every (GPU, window) breakdown, and their
// medians and spreads (stats/stats.h definitions) over all windows of all
// GPUs. Pure.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "nsys/window_analysis.h"

namespace ppsearch::nsys {

// One GPU of one export file and its windows, in time order.
struct GpuWindows {
  std::string source;  // the export file
  int device_id = 0;
  std::string gpu_name;  // TARGET_INFO_GPU.name, "" when absent
  std::vector<WindowBreakdown> windows;
  std::vector<std::string> labels;  // per window: the NVTX text, or "forward"
};

struct Distribution {
  double median = 0, min = 0, max = 0;
  double spread = 0;  // (max - min) / median, 0 for fewer than 2 values or a 0 median
};
Distribution Describe(const std::vector<double>& values);

struct ProfileSummary {
  int gpus = 0;
  int windows = 0;  // (GPU, window) pairs
  Distribution window_ms;
  Distribution exposed_share, overlapped_share, compute_only_share, idle_share;
  // Overlapped / (exposed + overlapped) per window with communication.
  Distribution comm_overlapped_fraction;
  std::array<Distribution, kCollectiveKinds> calls_per_window, time_ms_per_window;
  std::array<int64_t, kCollectiveKinds> total_calls{}, total_time_ns{};
  // Per compute class (nsys/compute_kernels.h): its kernels' time as a share
  // of the window, and in all windows together.
  std::array<Distribution, kComputeClasses> class_share;
  std::array<int64_t, kComputeClasses> total_class_time_ns{};
};

ProfileSummary Summarize(const std::vector<GpuWindows>& gpus);

// The words the baseline summary uses for the overlap of communication with
// compute: under 5% of communication time overlapped is "effectively none",
// under 50% "partial", otherwise "mostly overlapped".
std::string OverlapWords(double comm_overlapped_fraction);

}  // namespace ppsearch::nsys
