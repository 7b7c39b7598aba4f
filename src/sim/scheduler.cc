#include "sim/scheduler.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace ppsearch::sim {
namespace {

// SGLang's --init-new-token-ratio default: the expected fraction of
// max_new_tokens a running request still needs (decays over time in SGLang;
// held constant here, a documented simplification).
constexpr double kNewTokenRatio = 0.7;

int64_t RoundDownToPage(int64_t tokens, int page) { return tokens / page * page; }

}  // namespace

int ResolvePpMaxMicroBatchSize(const SchedulerConfig& config) {
  if (config.pp_max_micro_batch_size > 0) return config.pp_max_micro_batch_size;
  // scheduler.py init_model_worker: max(max_running_requests // pp_size, 1).
  return std::max(config.max_running_requests / std::max(config.pp_size, 1), 1);
}

Scheduler::Scheduler(const SchedulerConfig& config,
                     std::optional<ChunkSizePredictor> chunk_predictor)
    : config_(config),
      chunk_predictor_(std::move(chunk_predictor)),
      pp_max_mbs_(ResolvePpMaxMicroBatchSize(config)),
      slots_(config.num_slots) {
  assert(config.num_slots >= 1);
}

int Scheduler::AddRequest(int64_t input_tokens, int64_t max_new_tokens, bool prefilled) {
  SchedRequest r;
  r.input_tokens = input_tokens;
  r.max_new_tokens = std::max<int64_t>(max_new_tokens, 1);
  r.prefilled = prefilled;
  requests_.push_back(r);
  return static_cast<int>(requests_.size()) - 1;
}

void Scheduler::Enqueue(int request) {
  if (!requests_[request].finished) waiting_.push_back(request);  // else aborted before it arrived
}

void Scheduler::Abort(int request) {
  SchedRequest& q = requests_[request];
  if (q.finished) return;
  if (!q.admitted) {
    waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), request), waiting_.end());
    q.finished = true;
    return;
  }
  // No token after the one being computed (a prefill yields its first).
  q.max_new_tokens = std::min(q.max_new_tokens, q.output_tokens + 1);
}

bool Scheduler::Idle() const {
  if (!waiting_.empty() || chunked_ >= 0) return false;
  for (const auto& s : slots_)
    if (!s.running.empty()) return false;
  return true;
}

int Scheduler::DropHeadWaiting() {
  int r = waiting_.front();
  waiting_.pop_front();
  requests_[r].finished = true;
  return r;
}

MicroBatch Scheduler::NextBatch(int slot_index) {
  Slot& slot = slots_[slot_index];
  AdmitPrefilled(slot);
  MicroBatch batch = NextPrefill(slot);
  if (!batch.empty()) return batch;  // "Run prefill first if possible"
  return NextDecode(slot);
}

void Scheduler::AdmitPrefilled(Slot& slot) {
  // get_new_prebuilt_batch admits waiting requests while the running batch
  // is below min(req_to_token_pool.size, max_running_requests); their KV was
  // allocated when the transfer was set up, so no token budget is checked.
  // A full slot's flag holds as for a prefill (AdmitsNothingUntilAFinish).
  if (slot.batch_is_full && !slot.running.empty()) return;
  while (!waiting_.empty() && chunked_ < 0 && requests_[waiting_.front()].prefilled &&
         Allocatable(slot) > 0) {
    const int r = waiting_.front();
    waiting_.pop_front();
    SchedRequest& q = requests_[r];
    q.admitted = true;
    ++pool_used_;
    q.scheduled_tokens = q.input_tokens;
    q.output_tokens = 1;  // computed by the prefill server, streamed by the prebuilt batch
    kv_used_ += q.input_tokens;
    prefilled_admitted_.push_back(r);
    if (q.output_tokens >= q.max_new_tokens) {
      Release(r);
      prefilled_finished_.push_back(r);
    } else {
      slot.running.push_back(r);
    }
  }
}

void Scheduler::TakePrefilledAdmissions(std::vector<int>* admitted, std::vector<int>* finished) {
  if (prefilled_admitted_.empty()) return;  // the common case: nothing allocated
  admitted->insert(admitted->end(), prefilled_admitted_.begin(), prefilled_admitted_.end());
  finished->insert(finished->end(), prefilled_finished_.begin(), prefilled_finished_.end());
  prefilled_admitted_.clear();
  prefilled_finished_.clear();
}

int64_t Scheduler::ReservedDecodeTokens() const {
  // PrefillAdder reserves future decode growth only for the current slot's
  // running batch; using all running requests is the conservative reading
  // when KV is the binding constraint. Free KV is global either way.
  double reserved = 0;
  for (const auto& s : slots_)
    for (int r : s.running) {
      const SchedRequest& q = requests_[r];
      reserved += std::min(q.max_new_tokens - q.output_tokens, kClipMaxNewTokens) * kNewTokenRatio;
    }
  return static_cast<int64_t>(reserved);
}

MicroBatch Scheduler::NextPrefill(Slot& slot) {
  MicroBatch batch;
  batch.is_prefill = true;
  if ((slot.batch_is_full || waiting_.empty()) && chunked_ < 0) return batch;

  const int allocatable = Allocatable(slot);
  if (allocatable <= 0 && chunked_ < 0) {
    slot.batch_is_full = true;
    return batch;
  }

  int64_t rem_chunk = config_.chunked_prefill_size > 0 ? config_.chunked_prefill_size : INT64_MAX;
  // Dynamic chunking sizes the whole batch's chunk budget from the chunked
  // request's prefix (_get_new_batch_prefill_raw); a new request's first
  // chunk keeps chunked_prefill_size.
  if (chunk_predictor_ && chunked_ >= 0)
    rem_chunk = NextChunkSize(*chunk_predictor_, requests_[chunked_].scheduled_tokens);
  int64_t rem_input = config_.max_prefill_tokens;
  int64_t rem_total = config_.max_total_tokens - kv_used_ - ReservedDecodeTokens();

  // add_chunked_req: the chunked request continues first, whatever the cap.
  if (chunked_ >= 0) {
    SchedRequest& q = requests_[chunked_];
    int64_t left = q.input_tokens - q.scheduled_tokens;
    int64_t take = std::min(left, rem_chunk);
    batch.entries.push_back({chunked_, take, q.scheduled_tokens, take == left});
    q.scheduled_tokens += take;
    kv_used_ += take;
    rem_chunk -= take;
    rem_input -= take;
    rem_total -= take;
    if (take == left) chunked_ = -1;
  }

  while (!waiting_.empty()) {
    if (static_cast<int>(batch.entries.size()) >= allocatable) {
      slot.batch_is_full = true;
      break;
    }
    if (rem_chunk <= 0 || rem_input <= 0) break;
    int r = waiting_.front();
    SchedRequest& q = requests_[r];
    if (q.prefilled) break;  // waits for room in the running batch (AdmitPrefilled)
    int64_t need = q.input_tokens + std::min(q.max_new_tokens, kClipMaxNewTokens);
    if (need > rem_total) break;  // AddReqResult.NO_TOKEN
    int64_t take = q.input_tokens;
    bool last = true;
    if (take > rem_chunk) {
      take = RoundDownToPage(rem_chunk, config_.page_size);
      if (take <= 0) break;
      last = false;
    }
    waiting_.pop_front();
    q.admitted = true;
    ++pool_used_;
    batch.entries.push_back({r, take, 0, last});
    q.scheduled_tokens = take;
    kv_used_ += take;
    rem_chunk -= take;
    rem_input -= take;
    rem_total -= take;
    if (!last) {
      chunked_ = r;  // only one request is chunked at a time
      break;
    }
  }
  return batch;
}

MicroBatch Scheduler::NextDecode(Slot& slot) {
  // An empty slot holds no decode work that could make it full; clearing the
  // flag here keeps a slot from staying closed after the pool drained.
  if (slot.running.empty()) slot.batch_is_full = false;
  MicroBatch batch = DecodeOf(slot);
  kv_used_ += static_cast<int64_t>(batch.entries.size());
  return batch;
}

MicroBatch Scheduler::DecodeOf(const Slot& slot) const {
  MicroBatch batch;
  batch.is_prefill = false;
  batch.entries.reserve(slot.running.size());
  for (int r : slot.running) {
    const SchedRequest& q = requests_[r];
    batch.entries.push_back({r, 1, q.input_tokens + q.output_tokens - 1, false});
  }
  return batch;
}

MicroBatch Scheduler::PeekDecode(int slot) const { return DecodeOf(slots_[slot]); }

int64_t Scheduler::ResultsBeforeAFinish(int slot) const {
  int64_t least = INT64_MAX;
  for (int r : slots_[slot].running) {
    const SchedRequest& q = requests_[r];
    least = std::min(least, q.max_new_tokens - q.output_tokens - 1);
  }
  return least;
}

int Scheduler::Allocatable(const Slot& slot) const {
  // get_num_allocatable_reqs: the per-micro-batch cap, bounded by the pool.
  return std::min(pp_max_mbs_ - static_cast<int>(slot.running.size()),
                  config_.max_running_requests - pool_used_);
}

bool Scheduler::AdmitsNothingUntilAFinish() const {
  if (!HasWaiting()) return true;
  if (chunked_ >= 0) return false;
  for (const Slot& slot : slots_) {
    // An empty slot's flag is cleared by its first decode pass (NextDecode).
    const bool flag_holds = slot.batch_is_full && !slot.running.empty();
    if (!flag_holds && Allocatable(slot) > 0) return false;
  }
  return true;
}

void Scheduler::AdvanceDecode(int slot_index, int64_t launched, int64_t processed, bool visited) {
  Slot& slot = slots_[slot_index];
  if (visited && slot.running.empty()) slot.batch_is_full = false;
  // With requests waiting and no room, a visit's NextPrefill sets the flag
  // (AdmitsNothingUntilAFinish allowed the stretch).
  if (visited && !slot.running.empty() && !waiting_.empty() && Allocatable(slot) <= 0)
    slot.batch_is_full = true;
  kv_used_ += launched * static_cast<int64_t>(slot.running.size());
  for (int r : slot.running) {
    SchedRequest& q = requests_[r];
    q.output_tokens += processed;
    assert(q.output_tokens < q.max_new_tokens);
  }
}

void Scheduler::Release(int request) {
  SchedRequest& q = requests_[request];
  q.finished = true;
  if (q.admitted) {
    --pool_used_;
    q.admitted = false;
  }
  // The prompt and every generated token but the last were written to KV.
  kv_used_ -= q.input_tokens + std::max<int64_t>(q.output_tokens - 1, 0);
}

void Scheduler::ApplyResult(int slot_index, const MicroBatch& batch, std::vector<int>* first_token,
                            std::vector<int>* finished) {
  Slot& slot = slots_[slot_index];
  bool removed_any = false;
  if (batch.is_prefill) {
    for (const auto& e : batch.entries) {
      if (!e.last_chunk) {
        removed_any = true;  // the chunked request is filtered out of the last batch
        continue;
      }
      SchedRequest& q = requests_[e.request];
      q.output_tokens = 1;
      first_token->push_back(e.request);
      if (q.output_tokens >= q.max_new_tokens) {
        Release(e.request);
        finished->push_back(e.request);
        removed_any = true;
      } else {
        slot.running.push_back(e.request);  // merge_batch into the slot's running batch
      }
    }
  } else {
    std::vector<int> still;
    for (int r : slot.running) {
      SchedRequest& q = requests_[r];
      if (std::none_of(batch.entries.begin(), batch.entries.end(),
                       [r](const BatchEntry& e) { return e.request == r; })) {
        still.push_back(r);
        continue;
      }
      ++q.output_tokens;
      if (q.output_tokens >= q.max_new_tokens) {
        Release(r);
        finished->push_back(r);
        removed_any = true;
      } else {
        still.push_back(r);
      }
    }
    slot.running.swap(still);
  }
  // get_next_batch_to_run / update_running_batch reset batch_is_full when the
  // slot's batch shrank.
  if (removed_any) slot.batch_is_full = false;
}

}  // namespace ppsearch::sim
