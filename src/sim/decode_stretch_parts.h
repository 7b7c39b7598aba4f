// The state of one slot in a decode stretch, shared by the stretch's
// step-by-step loop (decode_stretch.cc) and its closed forms
// (decode_rounds.cc). Private to sim/.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/batch.h"
#include "sim/cost_model.h"
#include "sim/online_engine.h"

namespace ppsearch::sim {

struct OnlineEngine::StretchSlot {
  MicroBatch batch;  // the decode step the slot would launch at the stretch's start
  std::vector<DecodeGrowth> stages;
  std::vector<int64_t> hop_ns;
  std::vector<int64_t> compute_ns;  // per stage, summed over the slot's launches
  int64_t return_ns = 0;
  int64_t schedule_ns = 0;
  // Results the slot may apply before one finishes a request.
  int64_t results_left = 0;
  std::vector<int> tickets;            // per entry; -1: aborted, not heard
  std::vector<int64_t> output_tokens;  // per entry, at the start
  int64_t launched = 0, processed = 0;
  int64_t last_launch_k = 0;   // context steps of the slot's last launch past `batch`
  int64_t last_client_ns = 0;  // when the client holds the slot's last result
  bool visited = false;
  // It alone runs, and one line gives each stage's compute: cycles jump.
  bool decodes_alone = false;
  bool runs() const { return !batch.empty(); }
};

// The largest n in [lo, hi] with fits(n), given fits(lo) and that fits
// holds up to some n and not past it.
template <typename Fits>
int64_t LastFitting(int64_t lo, int64_t hi, const Fits& fits) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace ppsearch::sim
