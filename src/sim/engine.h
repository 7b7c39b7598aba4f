#pragma once
// The simulated serving engine: SGLang's PP event loop over a CostModel,
// driven by a benchmark client (closed loop with concurrency C, or an open
// loop of planned arrivals). Deterministic: integer nanoseconds, one event
// heap ordered by (time, push order).

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost_model.h"
#include "sim/scheduler.h"
#include "workload/request_record.h"
#include "workload/workload.h"

namespace ppsearch::sim {

struct StageStats {
  int64_t compute_ns = 0;
  int64_t gemm_ns = 0, moe_ns = 0, attention_ns = 0;  // of compute_ns (StageTime's classes)
  int64_t comm_ns = 0;
  int64_t transfer_ns = 0;
  int64_t overhead_ns = 0;
  int64_t idle_ns = 0;  // window minus busy: pipeline bubbles and starvation
  int64_t micro_batches = 0;
  int64_t allreduce_calls = 0;

  int64_t busy_ns() const { return compute_ns + comm_ns + transfer_ns + overhead_ns; }
};

// One slice of the timeline, for the Perfetto/Chrome trace.
struct TraceSlice {
  int stage = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t micro_batch = 0;
  int slot = 0;
  bool is_prefill = true;
  int64_t tokens = 0;
  int requests = 0;
  StageTime parts;
};

struct SimOptions {
  // Every decode step its own pair of events, as SGLang's loop runs them;
  // otherwise each stretch of decode steps whose batches keep their
  // sequences is advanced in one go (online_engine.h), to the same figures.
  // Keeping a trace steps too (the trace has a slice per step).
  bool step_by_step = false;
  bool keep_trace = false;
  // Each token's arrival in the records (RequestRecord::chunk_ns: the
  // inter-token latencies); false: a request's first token, count and end
  // only, and a decode stretch tells the listener of each request's last
  // token in it alone. Either way the engine takes the same course: the
  // stretches' jumps are the same, their tokens' times read off them.
  bool token_times = true;
  int64_t max_trace_slices = 200000;  // bounds memory for huge runs
};

struct SimResult {
  std::vector<workload::RequestRecord> records;
  std::vector<StageStats> stages;
  std::vector<TraceSlice> trace;
  int64_t window_ns = 0;  // first send to last completion
  int64_t micro_batches = 0;
  int64_t prefill_batches = 0;
  int64_t decode_batches = 0;
  // Decode batches advanced inside decode stretches (0 step by step).
  int64_t stretched_batches = 0;
  // Of those, the batches of a pipeline's rounds played in closed form
  // (decode_rounds.cc) rather than one by one.
  int64_t round_batches = 0;
  // Of those jumps, the ones fitted only past the pipeline's first rounds
  // (it settled into its pattern during the trial).
  int64_t late_fit_jumps = 0;
  // Decode stretches' slots priced from the stretch before (the same
  // sequences, some steps on) rather than by the cost model.
  int64_t carried_prices = 0;
  int pp_max_micro_batch_size = 0;  // resolved admission cap
  // Dynamic chunking ran: asked for, PP > 1, and the profiled prefill curve
  // was convex (otherwise SGLang, and this engine, fall back to fixed chunks).
  bool dynamic_chunking = false;
  int64_t peak_kv_tokens = 0;
  int64_t peak_running_requests = 0;
  // The prefill batches launched, as the front of their shapes, and the
  // largest decode step (one DP rank's): what the activations a server
  // holds follow (memory/served.h).
  std::vector<BatchShape> prefill_shapes;
  int64_t peak_decode_batch = 0;
};

// Runs `planned` requests through the engine. Each is sent at its planned
// arrival time (all 0 in a closed loop), and `concurrency` > 0 caps the
// requests in flight: a request due while the cap is reached is sent when
// one finishes (a closed loop when every arrival is 0; an open loop with a
// cap, as bench_serving's --max-concurrency, otherwise). 0: no cap.
SimResult Simulate(const SchedulerConfig& config, const CostModel& cost,
                   const std::vector<workload::PlannedRequest>& planned, int concurrency,
                   const SimOptions& options = {});

}  // namespace ppsearch::sim
