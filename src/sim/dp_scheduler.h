#pragma once
// The schedulers of SGLang's DP attention (--enable-dp-attention --dp-size
// dp): one Scheduler per DP rank, each with its own request pool, KV pool
// and waiting queue, fed by the data-parallel controller and stepped
// together.
//  - Routing: the controller sends each request to the next rank in turn
//    (managers/data_parallel_controller.py round_robin_scheduler; the
//    default load_balance_method "auto" resolves to round_robin outside PD
//    disaggregation, server_args.py _handle_load_balance_method).
//  - Lockstep: every MoE layer gathers all ranks' tokens, so the ranks run
//    their forward passes together; a rank with nothing to run joins with
//    an idle batch (scheduler.py prepare_mlp_sync_batch). NextBatch returns
//    one step of every rank, empty only when no rank has work.
// With dp_size 1 it is the one Scheduler, unchanged: request ids and
// batches pass through as they are.

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "sim/batch.h"
#include "sim/scheduler.h"

namespace ppsearch::sim {

class DpScheduler {
 public:
  // `config.dp_size` ranks, each a Scheduler of `config`.
  DpScheduler(const SchedulerConfig& config, std::optional<ChunkSizePredictor> chunk_predictor);

  // Routes the request to the next rank (round robin), or to `rank` when
  // one is given (a disaggregated decode server's request goes to the rank
  // that preallocated its KV); returns its id. `prefilled`:
  // SchedRequest::prefilled.
  int AddRequest(int64_t input_tokens, int64_t max_new_tokens, bool prefilled = false,
                 int rank = -1);
  void Enqueue(int request);
  // One step for `slot`: with DP, MicroBatch::dp_ranks holds each rank's
  // batch (an idle rank's empty) and `entries` all of them; empty when no
  // rank has a batch to run.
  MicroBatch NextBatch(int slot);
  void ApplyResult(int slot, const MicroBatch& batch, std::vector<int>* first_token,
                   std::vector<int>* finished);
  // Scheduler::TakePrefilledAdmissions of every rank, as ids, into emptied lists.
  void TakePrefilledAdmissions(std::vector<int>* admitted, std::vector<int>* finished);
  // Scheduler::PeekDecode and AdvanceDecode on every rank; PeekDecode is
  // shaped as NextBatch's step.
  MicroBatch PeekDecode(int slot) const;
  // The least of every rank's Scheduler::ResultsBeforeAFinish.
  int64_t ResultsBeforeAFinish(int slot) const;
  void AdvanceDecode(int slot, int64_t launched, int64_t processed, bool visited);
  // Some rank has a request waiting or being chunked: a prefill may be formed.
  bool HasWaiting() const;
  // Scheduler::AdmitsNothingUntilAFinish on every rank.
  bool AdmitsNothingUntilAFinish() const;
  bool Idle() const;
  // Fails the head of the first rank's waiting queue that has one.
  int DropHeadWaiting();
  void Abort(int request);

  const SchedRequest& request(int id) const;
  int rank_of(int id) const { return where_[id].first; }
  int dp_size() const { return static_cast<int>(ranks_.size()); }
  int pp_max_micro_batch_size() const { return ranks_.front().pp_max_micro_batch_size(); }
  bool dynamic_chunking() const { return ranks_.front().dynamic_chunking(); }
  // The fullest rank's KV pool (each rank has its own pool of
  // max_total_tokens).
  int64_t kv_tokens_used() const;
  // One rank's KV pool in use.
  int64_t kv_tokens_used(int rank) const { return ranks_[rank].kv_tokens_used(); }
  // Requests holding a pool slot on any rank.
  int running_requests() const;

 private:
  // The batch with request ids mapped from rank-local to global (or back).
  MicroBatch ToGlobal(int rank, MicroBatch batch) const;
  MicroBatch ToLocal(MicroBatch batch) const;
  // One step of every rank, each rank's part from `part_of`.
  MicroBatch Step(const std::function<MicroBatch(int rank)>& part_of) const;

  std::vector<Scheduler> ranks_;
  std::vector<std::pair<int, int>> where_;   // id -> (rank, rank-local id)
  std::vector<std::vector<int>> global_of_;  // per rank: local id -> id
  int next_rank_ = 0;
};

}  // namespace ppsearch::sim
