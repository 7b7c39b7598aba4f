#pragma once
// The waits of a run (servers becoming ready, GPU memory being released, the
// pause between samples) can last minutes; an interrupt must end them within
// a fraction of a second, so they sleep in short slices and look at the run's
// stop flag (SIGINT/SIGTERM) between them.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace ppsearch {

// How often a wait looks at the stop flag at most.
constexpr std::chrono::milliseconds kStopCheckInterval{100};

inline bool StopRequested(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(); }

// Sleeps until `until`, or less once `stop` is set; false when it was.
inline bool SleepUnlessStopped(std::chrono::steady_clock::time_point until,
                               const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  while (!StopRequested(stop)) {
    const Clock::time_point now = Clock::now();
    if (now >= until) return true;
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kStopCheckInterval));
  }
  return false;
}

// An abort check for loadgen's calls (BenchOptions::abort_check, Get):
// "interrupted" once `stop` is set.
inline std::string InterruptedReason(const std::atomic<bool>* stop) {
  return StopRequested(stop) ? "interrupted" : "";
}

}  // namespace ppsearch
