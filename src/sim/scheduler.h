#pragma once
// SGLang's scheduling policy under pipeline parallelism, as the v0.5.x code
// does it (scheduler.py get_next_batch_to_run / _get_new_batch_prefill_raw,
// schedule_policy.py PrefillAdder, scheduler_pp_mixin.py event_loop_pp):
//  - pp_loop_size micro-batch slots, each with its own running (decode) batch;
//  - one scheduler-wide chunked request whose next chunk may be scheduled
//    into the next slot before the previous chunk's result is back;
//  - prefill first, else decode the slot's running batch (no mixed chunks);
//  - admission: at most pp_max_micro_batch_size - len(slot running batch)
//    new requests per prefill batch, bounded by the request pool
//    (max_running_requests) and free KV tokens;
//  - requests that finish prefill and still decode join the slot's running batch.
// PP = 1 is the same policy with one slot.

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "sim/batch.h"
#include "sim/dynamic_chunk.h"

namespace ppsearch::sim {

// schedule_policy.py CLIP_MAX_NEW_TOKENS: the decode growth PrefillAdder
// reserves per request (and a decode server's preallocation checks) is
// clipped to this.
inline constexpr int64_t kClipMaxNewTokens = 4096;

struct SchedulerConfig {
  int num_slots = 1;                    // pp_size + pp_async_batch_depth
  int64_t chunked_prefill_size = 8192;  // <= 0: no chunking
  int64_t max_prefill_tokens = 16384;
  int max_running_requests = 4096;  // resolved value (req_to_token_pool size)
  int pp_max_micro_batch_size = 0;  // 0: SGLang default max(max_running_requests // pp, 1)
  int pp_size = 1;
  int64_t max_total_tokens = 1 << 30;  // KV pool capacity, tokens
  int page_size = 1;
  int64_t context_len = 0;  // --context-length, else the model's; 0: no limit
  DynamicChunkingConfig dynamic_chunking;
  // SGLang's overlap scheduler (event_loop_overlap): the host forms the next
  // decode batch while the GPU runs the current one. On by default without
  // PP; PP turns it off (arg_groups/overrides.py
  // _pipeline_parallel_overlap_disable, asserted in check_server_args).
  bool overlap_schedule = false;
  // DP attention ranks: each runs a scheduler of this configuration (its own
  // request pool, KV pool and chunk size) over its share of the requests
  // (sim/dp_scheduler.h).
  int dp_size = 1;
};

// Resolved admission cap: the user's value, else SGLang's default.
int ResolvePpMaxMicroBatchSize(const SchedulerConfig& config);

struct SchedRequest {
  int64_t input_tokens = 0;
  int64_t max_new_tokens = 1;
  int64_t scheduled_tokens = 0;  // prompt tokens already put into a batch
  int64_t output_tokens = 0;     // tokens generated so far
  bool admitted = false;         // holds a request-pool slot
  bool finished = false;
  // Its prompt's KV was computed elsewhere and moved here (a decode server
  // of a disaggregated deployment): admitted, it joins the running batch
  // with its first token, no prefill run (sim/disaggregated_engine.h).
  bool prefilled = false;
};

class Scheduler {
 public:
  // `chunk_predictor`: dynamic chunking's next-chunk rule (nullopt: every
  // chunk is chunked_prefill_size).
  explicit Scheduler(const SchedulerConfig& config,
                     std::optional<ChunkSizePredictor> chunk_predictor = std::nullopt);

  // Adds a request (index into requests()) to the waiting queue.
  // `prefilled`: its KV arrives computed (SchedRequest::prefilled).
  int AddRequest(int64_t input_tokens, int64_t max_new_tokens, bool prefilled = false);
  void Enqueue(int request);

  // get_next_batch_to_run for `slot`: a prefill batch if one can be formed,
  // else a decode step of the slot's running batch; empty when neither.
  // Prefilled requests at the head of the waiting queue first join the
  // slot's running batch while it has room, as a decode server's prebuilt
  // batch merges them (disaggregation/decode.py get_new_prebuilt_batch):
  // TakePrefilledAdmissions lists them.
  MicroBatch NextBatch(int slot);
  // Appends the prefilled requests NextBatch admitted since the last call
  // (each now holds its first token) to `admitted`, and those of them
  // already complete (a single output token) to `finished`.
  void TakePrefilledAdmissions(std::vector<int>* admitted, std::vector<int>* finished);

  // Applies a finished micro-batch's result for `slot`. Appends requests that
  // got their first token to `first_token` and requests that completed to
  // `finished` (a request can be in both).
  void ApplyResult(int slot, const MicroBatch& batch, std::vector<int>* first_token,
                   std::vector<int>* finished);

  // The decode batch NextBatch(slot) would return when no prefill can be
  // formed, without taking its KV tokens; empty when the slot runs nothing.
  MicroBatch PeekDecode(int slot) const;
  // Decode results the slot's running batch may apply before one finishes
  // a request (0: its next finishes one); INT64_MAX when it runs nothing.
  int64_t ResultsBeforeAFinish(int slot) const;
  // The state after `launched` decode steps of `slot`'s running batch, of
  // which the first `processed` have had their results applied, none of
  // them finishing a request; `visited`: NextBatch(slot) ran at least once
  // (an empty slot's batch_is_full is then cleared). What a decode stretch
  // leaves (online_engine.h).
  void AdvanceDecode(int slot, int64_t launched, int64_t processed, bool visited);

  // Nothing waiting, no chunked request, no running request.
  bool Idle() const;
  bool HasWaiting() const { return !waiting_.empty() || chunked_ >= 0; }
  // No prefill can be formed before a request finishes: nothing waits, or
  // no request is being chunked and no slot has room for what waits (the
  // pool of max_running_requests is full, or the slot's micro-batch is, or
  // its batch_is_full flag holds, which only a finish clears on a running
  // slot). A decode stretch may then run with requests waiting: only a
  // finish, which ends it, could let one in.
  bool AdmitsNothingUntilAFinish() const;
  // Fails the head of the waiting queue (it can never be admitted); returns it.
  int DropHeadWaiting();
  // Aborts `request` as SGLang's abort_request does when its client goes
  // away: one still waiting (or not yet enqueued) is dropped at once; one
  // admitted finishes with the result of the batch it is in, its next token
  // or its prefill (ApplyResult reports it as finished and frees its KV).
  void Abort(int request);

  const SchedRequest& request(int i) const { return requests_[i]; }
  int pp_max_micro_batch_size() const { return pp_max_mbs_; }
  bool dynamic_chunking() const { return chunk_predictor_.has_value(); }
  int64_t kv_tokens_used() const { return kv_used_; }
  int running_requests() const { return pool_used_; }

 private:
  struct Slot {
    std::vector<int> running;  // decoding requests that live in this slot
    bool batch_is_full = false;
  };

  MicroBatch NextPrefill(Slot& slot);
  void AdmitPrefilled(Slot& slot);
  MicroBatch NextDecode(Slot& slot);
  MicroBatch DecodeOf(const Slot& slot) const;
  // Requests the slot's next prefill could admit (get_num_allocatable_reqs).
  int Allocatable(const Slot& slot) const;
  int64_t ReservedDecodeTokens() const;
  void Release(int request);

  SchedulerConfig config_;
  std::optional<ChunkSizePredictor> chunk_predictor_;
  int pp_max_mbs_;
  std::vector<SchedRequest> requests_;
  std::deque<int> waiting_;
  std::vector<Slot> slots_;
  int chunked_ = -1;  // the one request being chunked, or -1
  std::vector<int> prefilled_admitted_, prefilled_finished_;
  int64_t kv_used_ = 0;
  int pool_used_ = 0;
};

}  // namespace ppsearch::sim
