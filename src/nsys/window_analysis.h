#pragma once
// How one GPU spent each analysis window: the window's time split into
// exposed communication (communication kernels running while no compute
// kernel runs on that GPU), overlapped communication, compute only and idle,
// plus calls and kernel time per collective kind. Pure: kernels in, numbers
// out. The four parts are integer nanoseconds and add up to the window's
// duration exactly.

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "nsys/comm_kernels.h"
#include "nsys/compute_kernels.h"
#include "nsys/intervals.h"

namespace ppsearch::nsys {

struct Kernel {
  Interval span;
  std::optional<Collective> collective;               // nullopt: compute
  ComputeClass compute_class = ComputeClass::kOther;  // compute kernels only
};

struct WindowBreakdown {
  Interval window;
  int64_t exposed_ns = 0;       // communication, no compute on the GPU
  int64_t overlapped_ns = 0;    // communication and compute at once
  int64_t compute_only_ns = 0;  // compute, no communication
  int64_t idle_ns = 0;          // no kernel at all
  int kernels = 0;              // kernels that overlap the window
  // Per collective kind: kernels that overlap the window, and the sum of
  // their durations clipped to it (concurrent calls each count).
  std::array<int, kCollectiveKinds> calls{};
  std::array<int64_t, kCollectiveKinds> time_ns{};
  // Per compute class: the sum of its kernels' durations clipped to the
  // window (concurrent kernels each count).
  std::array<int64_t, kComputeClasses> class_time_ns{};

  int64_t duration_ns() const { return window.length_ns(); }
  double Share(int64_t part_ns) const;  // part / duration; 0 for an empty window
};

// Windows of one GPU, met by that GPU's kernels fed in start order (across
// all its streams). Windows may overlap or nest; each is measured alone.
class GpuWindowAnalyzer {
 public:
  explicit GpuWindowAnalyzer(std::vector<Interval> windows_by_start);
  // The sweeps point into windows_.
  GpuWindowAnalyzer(const GpuWindowAnalyzer&) = delete;
  GpuWindowAnalyzer& operator=(const GpuWindowAnalyzer&) = delete;
  void AddKernel(const Kernel& k);
  std::vector<WindowBreakdown> Finish();

 private:
  void AddUnion(WindowSweep& sweep, const std::optional<Interval>& merged,
                std::vector<int64_t>& covered);

  std::vector<Interval> windows_;
  // Union of communication kernels, of compute kernels, and of all kernels.
  UnionBuilder comm_union_, compute_union_, all_union_;
  WindowSweep comm_sweep_, compute_sweep_, all_sweep_, kernel_sweep_;
  std::vector<int64_t> comm_ns_, compute_ns_, all_ns_;
  std::vector<WindowBreakdown> out_;
};

// Forward-pass windows found from the kernels alone: a window is a busy
// period of the GPU, kernels separated by idle gaps shorter than `gap_ns`.
// Only the current period's kernels are held.
class ForwardWindowSplitter {
 public:
  explicit ForwardWindowSplitter(int64_t gap_ns) : gap_ns_(gap_ns) {}
  // The breakdown of the period that `k` closes, if it starts a new one.
  std::optional<WindowBreakdown> AddKernel(const Kernel& k);
  std::optional<WindowBreakdown> Finish();

 private:
  WindowBreakdown Close();

  int64_t gap_ns_;
  std::vector<Kernel> current_;
  Interval period_;
};

}  // namespace ppsearch::nsys
