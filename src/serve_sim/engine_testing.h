#pragma once
// A cost model, scheduler config and clock for tests of the realtime engine
// and what runs on it.

#include <atomic>

#include "serve_sim/realtime_engine.h"
#include "sim/cost_model.h"
#include "sim/scheduler.h"

namespace ppsearch::serve_sim::testutil {

// Stage time linear in tokens; fixed hop and host costs.
class LinearCost : public sim::CostModel {
 public:
  LinearCost(int stages, int64_t per_token_ns, int64_t per_batch_ns)
      : stages_(stages), per_token_ns_(per_token_ns), per_batch_ns_(per_batch_ns) {}
  int num_stages() const override { return stages_; }
  sim::StageTime StageCost(int, const sim::MicroBatch& b) const override {
    sim::StageTime t;
    t.compute_ns = per_batch_ns_ + per_token_ns_ * b.extend_tokens();
    return t;
  }
  int64_t HopNs(int, const sim::MicroBatch&) const override { return 1000; }
  int64_t OutputReturnNs(const sim::MicroBatch&) const override { return 1000; }
  int64_t ScheduleNs(const sim::MicroBatch&) const override { return 500; }
  int64_t IngestNs(int64_t) const override { return 2000; }
  int64_t StreamOutNs() const override { return 300; }

 private:
  int stages_;
  int64_t per_token_ns_, per_batch_ns_;
};

inline sim::SchedulerConfig Config(int pp) {
  sim::SchedulerConfig c;
  c.pp_size = pp;
  c.num_slots = pp;
  c.chunked_prefill_size = 4096;
  c.max_running_requests = 64;
  return c;
}

class FakeClock : public Clock {
 public:
  int64_t NowNs() const override { return now_ns.load(); }
  std::atomic<int64_t> now_ns{1'000'000'000};
};

}  // namespace ppsearch::serve_sim::testutil
