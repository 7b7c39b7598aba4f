#pragma once
// The engine model driven incrementally: requests are submitted while the
// simulation runs and results are reported through a listener as the
// simulated clock reaches them. `Simulate` (engine.h) is a benchmark client
// on top of this; `ppsearch serve-sim` advances it in step with a wall clock.
// Deterministic: integer nanoseconds, one event heap ordered by
// (time, push order); listener calls happen in simulated-time order.

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/cost_model.h"
#include "sim/dp_scheduler.h"
#include "sim/engine.h"
#include "sim/event_queue.h"
#include "sim/scheduler.h"

namespace ppsearch::sim {

// What the scheduler launched, for SGLang-style per-batch log lines.
struct BatchLaunch {
  int64_t launch_ns = 0;
  int slot = 0;
  bool is_prefill = false;
  int new_seqs = 0;            // requests admitted by this batch
  int64_t new_tokens = 0;      // tokens the batch computes
  int64_t cached_tokens = 0;   // prefix tokens of continued chunks
  int running_requests = 0;    // holding a request-pool slot after the launch
  int queued_requests = 0;     // arrived, not yet admitted
  int64_t kv_tokens_used = 0;  // after the launch
  // Sequences the batch computes logits for: a prefill batch's prompts that
  // end in it, a decode batch's every sequence.
  int64_t logit_rows = 0;
};

// Receives results as simulated time reaches them. `request` is the ticket
// Submit returned; times are when the client holds the result.
class EngineListener {
 public:
  virtual ~EngineListener() = default;
  virtual void OnBatchLaunched(const BatchLaunch& /*launch*/) {}
  // The request now has `output_tokens` tokens (1 on its first token).
  virtual void OnTokens(int /*request*/, int64_t /*output_tokens*/, int64_t /*client_ns*/) {}
  // Finished: ok, or rejected (it can never fit the KV pool; SGLang answers 400).
  virtual void OnFinished(int /*request*/, int64_t /*client_ns*/, bool /*ok*/) {}
};

// Engine-wide counters, the non-record part of SimResult.
struct EngineCounters {
  std::vector<StageStats> stages;
  std::vector<TraceSlice> trace;
  int64_t micro_batches = 0;
  int64_t prefill_batches = 0;
  int64_t decode_batches = 0;
  int64_t stretched_batches = 0;
  int64_t round_batches = 0;
  int64_t late_fit_jumps = 0;  // round jumps fitted past a pipeline's first rounds
  int64_t carried_prices = 0;
  int64_t peak_kv_tokens = 0;
  int64_t peak_running_requests = 0;
  // The prefill batches launched, as the front of their shapes, and the
  // largest decode step (one DP rank's), for memory/served.h.
  std::vector<BatchShape> prefill_shapes;
  int64_t peak_decode_batch = 0;
};

class OnlineEngine {
 public:
  // `cost` and `listener` must outlive the engine.
  OnlineEngine(const SchedulerConfig& config, const CostModel& cost, EngineListener* listener,
               const SimOptions& options = {});
  ~OnlineEngine();
  OnlineEngine(const OnlineEngine&) = delete;
  OnlineEngine& operator=(const OnlineEngine&) = delete;

  // A client sends a request at `send_ns` (>= now_ns()); returns its ticket
  // (0, 1, 2, ... in submission order).
  int Submit(int64_t send_ns, int64_t input_tokens, int64_t max_new_tokens);
  // A request whose prompt's KV arrives computed (a disaggregated decode
  // server's, sim/disaggregated_engine.h) at `send_ns`, for DP rank `dp_rank` (-1:
  // the next in turn). It needs no ingest; once the running batch has room
  // it joins it, and the listener hears its first token then.
  int SubmitPrefilled(int64_t send_ns, int64_t input_tokens, int64_t max_new_tokens, int dp_rank);

  // Aborts request `ticket` (its client went away): not yet admitted, it is
  // dropped at once; admitted, it finishes with its next result. The
  // listener hears nothing more of it, nor of its finish.
  void Abort(int ticket);

  // Processes every event at or before `t_ns`, then sets now to t_ns. Step
  // by step: the listener hears every batch launched.
  void RunUntil(int64_t t_ns);
  // Processes events until none is left. Unless options.step_by_step or
  // keep_trace, each decode stretch (below) is advanced in one go: the
  // listener hears its tokens, in order and at their times, but not its
  // batch launches.
  void RunToEnd();
  // Time of the next event, if any.
  std::optional<int64_t> NextEventNs() const;
  // Advances by the next event, or by a decode stretch up to `limit_ns`
  // (unless options.step_by_step or keep_trace), when the next event is at
  // or before `limit_ns`; false when none is. A stretch ends before any
  // result that finishes a request, so the listener hears finishes only
  // from single events: what lets several engines run side by side in time
  // order (sim/disaggregated_engine.cc).
  bool Step(int64_t limit_ns);

  int64_t now_ns() const { return now_; }
  int pp_max_micro_batch_size() const { return scheduler_.pp_max_micro_batch_size(); }
  bool dynamic_chunking() const { return scheduler_.dynamic_chunking(); }
  int64_t kv_tokens_used() const { return scheduler_.kv_tokens_used(); }
  int64_t kv_tokens_used(int dp_rank) const { return scheduler_.kv_tokens_used(dp_rank); }
  int dp_size() const { return scheduler_.dp_size(); }
  int running_requests() const { return scheduler_.running_requests(); }
  int queued_requests() const { return queued_; }
  const EngineCounters& counters() const { return counters_; }

 private:
  enum class EventKind { kSend, kArrive, kLoop, kProcess };
  struct Event {
    EventKind kind;
    int index;  // kSend: ticket; kArrive: scheduler index; kProcess: slot
  };
  struct Pending {  // a submitted request not yet sent
    int64_t input_tokens = 0;
    int64_t max_new_tokens = 0;
    int sched = -1;        // its scheduler index once sent
    bool aborted = false;  // the listener hears nothing more of it
    bool prefilled = false;
    int dp_rank = -1;
  };
  // A micro-batch launched into a slot and not yet processed.
  struct InFlight {
    MicroBatch batch;
    int64_t outputs_ready_ns = 0;  // next_token_ids back on stage 0
    bool active = false;
  };

  // One slot's part of a decode stretch (decode_stretch.cc).
  struct StretchSlot;
  enum class Step { kAdvanced, kStop };

  void Dispatch(const EventQueue<Event>::Event& e);
  void PushInternal(int64_t t, EventKind kind, int index);
  // A decode stretch: while no request waits to be admitted and the
  // micro-batches in flight decode, every slot runs the same sequences
  // step after step until a result finishes one of them or an outside
  // event (an arrival, a send) comes due. Its steps are played here
  // without the event queue, each stage's time from the cost model's
  // DecodeGrowth, in the order and at the times the events would have had;
  // false when no step could be advanced.
  bool AdvanceDecodeStretch(int64_t limit_ns);
  bool BuildStretch();
  // The slot's decode batch priced per stage: from what the last stretch
  // priced when the slot runs the same sequences, some steps on (its
  // growth shifted), else by the cost model; false when the cost model
  // has no DecodeGrowth for it.
  bool PriceStretchSlot(StretchSlot& z);
  void LaunchStretchStep(StretchSlot& z, int slot, int64_t launch_ns);
  int64_t StageEnds(const StretchSlot& z, int64_t k, int64_t launch_ns,
                    std::vector<int64_t>* compute_ns);
  // A slot decoding alone, cycle after cycle, in closed form (decode_stretch.cc).
  struct Cycle;
  Cycle CycleOf(const StretchSlot& z, int64_t t) const;
  int64_t CyclesToJump(const std::vector<StretchSlot>& slots, int slot, int64_t t,
                       int64_t outside_ns, int64_t limit_ns) const;
  int64_t JumpCycles(std::vector<StretchSlot>& slots, int slot, int64_t t, int64_t cycles);
  // Every slot of a pipeline decoding, round after round, in closed form
  // (decode_rounds.cc): rounds to jump from the result of `slot` at `t`
  // (0: none), and the jump, which returns the time of the result after them.
  int64_t RoundsToJump(const std::vector<StretchSlot>& slots, int slot, int64_t t,
                       int64_t outside_ns, int64_t limit_ns, std::vector<double>* end_state) const;
  int64_t JumpRounds(std::vector<StretchSlot>& slots, int slot, int64_t rounds,
                     const std::vector<double>& end_state);
  void HearRounds(const std::vector<StretchSlot>& slots, int slot, int64_t rounds);
  void PlayRound(const std::vector<StretchSlot>& slots, int first, int64_t round,
                 std::vector<double>& state, std::vector<double>* margins) const;
  void FinishStretch(std::vector<StretchSlot>& slots);
  // The listener hears the slot's last result of the stretch so far, or
  // its result that brings it to `processed` results, heard at `client_ns`
  // (a jump's results, one by one, when every token's time is wanted).
  void HearStretchTokens(const StretchSlot& z);
  void HearStretchTokens(const StretchSlot& z, int64_t processed, int64_t client_ns);
  void OnSend(int ticket);
  void OnArrive(int request);
  void OnLoop();
  void OnProcess(int slot);
  void ContinueOrSleep(int64_t t);
  void Launch(int slot, MicroBatch batch, int64_t launch_ns);
  void Account(int stage, const StageTime& st, int64_t start, const MicroBatch& batch, int slot);
  void NoteBatchShape(const MicroBatch& batch);
  void AddStageTime(int stage, const StageTime& st);

  const SchedulerConfig config_;
  const CostModel& cost_;
  EngineListener* listener_;
  const SimOptions options_;
  DpScheduler scheduler_;  // one Scheduler, or one per DP attention rank
  std::vector<InFlight> slots_;
  std::vector<int64_t> gpu_free_ns_;
  // RoundsToJump's trial rounds: the state after each, each max()'s margin.
  struct RoundTrial {
    struct Margin {
      double v1, v2, v3, sign;
    };
    std::vector<std::vector<double>> state, margins;
    std::vector<Margin> kept;
    int first_fit = 0;  // the first round the last fit read
  };
  mutable RoundTrial round_trial_;
  // Each slot's part of the current or last decode stretch: its storage is
  // reused and its pricing carried over (PriceStretchSlot).
  std::vector<StretchSlot> stretch_;
  EventQueue<Event> events_;
  EngineCounters counters_;
  std::vector<Pending> pending_;
  std::vector<int> sched_to_ticket_;
  std::vector<bool> arrived_;  // per scheduler index: in the waiting queue or past it
  std::vector<int> first_token_, finished_;
  int64_t now_ = 0;
  int64_t mb_counter_ = 0;
  int64_t last_launch_ns_ = 0;  // the host's last batch launch (overlap scheduler)
  int empty_passes_ = 0;
  int internal_pending_ = 0;  // kLoop and kProcess events queued (at most one, by the loop's chain)
  int queued_ = 0;
  bool sleeping_ = true;
};

}  // namespace ppsearch::sim
