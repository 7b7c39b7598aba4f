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
  // Its price (OnlineEngine::PriceStretchSlot), kept from one stretch to
  // the next with the sequences and contexts it was priced for.
  std::vector<DecodeGrowth> stages;
  std::vector<int64_t> hop_ns;
  int64_t return_ns = 0;
  int64_t schedule_ns = 0;
  std::vector<int> priced_requests;
  std::vector<int64_t> priced_context;
  // `stages` and `hop_ns` laid out for StageEnds when each stage has one
  // group (no DP attention); empty otherwise.
  struct StageLine {
    int64_t other_ns = 0;          // the stage's time but its compute
    int64_t start_compute_ns = 0;  // at_start.compute_ns
    double fixed_ns = 0, line_ns = 0, growth_ns = 0;
    int64_t hop_ns = 0;  // to the next stage
  };
  std::vector<StageLine> lines;
  std::vector<int64_t> compute_ns;  // per stage, summed over the slot's launches
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
  // Clears what one stretch accumulates; the price stays.
  void StartStretch() {
    results_left = 0;
    tickets.clear();
    output_tokens.clear();
    launched = processed = last_launch_k = last_client_ns = 0;
    visited = decodes_alone = false;
  }
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
