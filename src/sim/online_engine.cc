#include "sim/online_engine.h"

#include <algorithm>
#include <cassert>

#include "sim/decode_stretch_parts.h"

namespace ppsearch::sim {
namespace {

// scheduler.py: dynamic chunking acts only with pipeline parallelism.
std::optional<ChunkSizePredictor> PredictorFor(const SchedulerConfig& config,
                                               const CostModel& cost) {
  if (!config.dynamic_chunking.enabled || config.pp_size <= 1) return std::nullopt;
  return MakeChunkSizePredictor(cost, config.chunked_prefill_size, config.dynamic_chunking,
                                config.page_size, config.context_len, config.max_prefill_tokens);
}

}  // namespace

OnlineEngine::OnlineEngine(const SchedulerConfig& config, const CostModel& cost,
                           EngineListener* listener, const SimOptions& options)
    : config_(config),
      cost_(cost),
      listener_(listener),
      options_(options),
      scheduler_(config, PredictorFor(config, cost)),
      slots_(config.num_slots),
      gpu_free_ns_(cost.num_stages(), 0) {
  counters_.stages.resize(cost.num_stages());
}

OnlineEngine::~OnlineEngine() = default;

int OnlineEngine::Submit(int64_t send_ns, int64_t input_tokens, int64_t max_new_tokens) {
  assert(send_ns >= now_);
  const int ticket = static_cast<int>(pending_.size());
  pending_.push_back({input_tokens, max_new_tokens});
  events_.Push(send_ns, {EventKind::kSend, ticket});
  return ticket;
}

int OnlineEngine::SubmitPrefilled(int64_t send_ns, int64_t input_tokens, int64_t max_new_tokens,
                                  int dp_rank) {
  const int ticket = Submit(send_ns, input_tokens, max_new_tokens);
  pending_[ticket].prefilled = true;
  pending_[ticket].dp_rank = dp_rank;
  return ticket;
}

bool OnlineEngine::Step(int64_t limit_ns) {
  if (events_.empty() || events_.Top().time_ns > limit_ns) return false;
  if (!options_.step_by_step && !options_.keep_trace && AdvanceDecodeStretch(limit_ns)) return true;
  Dispatch(events_.Pop());
  return true;
}

std::optional<int64_t> OnlineEngine::NextEventNs() const {
  if (events_.empty()) return std::nullopt;
  return events_.Top().time_ns;
}

void OnlineEngine::RunUntil(int64_t t_ns) {
  while (!events_.empty() && events_.Top().time_ns <= t_ns) Dispatch(events_.Pop());
  now_ = std::max(now_, t_ns);
}

void OnlineEngine::RunToEnd() {
  const bool stretches = !options_.step_by_step && !options_.keep_trace;
  while (!events_.empty()) {
    if (stretches && AdvanceDecodeStretch(INT64_MAX)) continue;
    Dispatch(events_.Pop());
  }
}

void OnlineEngine::PushInternal(int64_t t, EventKind kind, int index) {
  ++internal_pending_;
  events_.Push(t, {kind, index});
}

void OnlineEngine::Dispatch(const EventQueue<Event>::Event& e) {
  now_ = e.time_ns;
  if (e.payload.kind == EventKind::kLoop || e.payload.kind == EventKind::kProcess)
    --internal_pending_;
  switch (e.payload.kind) {
    case EventKind::kSend:
      OnSend(e.payload.index);
      break;
    case EventKind::kArrive:
      OnArrive(e.payload.index);
      break;
    case EventKind::kLoop:
      OnLoop();
      break;
    case EventKind::kProcess:
      OnProcess(e.payload.index);
      break;
  }
}

void OnlineEngine::Abort(int ticket) {
  Pending& p = pending_[ticket];
  if (p.aborted) return;
  p.aborted = true;
  if (p.sched < 0) return;  // not sent yet: OnSend drops it
  const SchedRequest& q = scheduler_.request(p.sched);
  const bool queued = arrived_[p.sched] && !q.admitted && !q.finished;
  scheduler_.Abort(p.sched);
  if (queued) --queued_;  // it left the waiting queue
}

void OnlineEngine::OnSend(int ticket) {
  Pending& p = pending_[ticket];
  if (p.aborted) return;
  int r = scheduler_.AddRequest(p.input_tokens, p.max_new_tokens, p.prefilled, p.dp_rank);
  p.sched = r;
  sched_to_ticket_.push_back(ticket);
  arrived_.push_back(false);
  // A prefilled request was tokenized and handed over by the transfer.
  const int64_t ingest = p.prefilled ? 0 : cost_.IngestNs(p.input_tokens);
  events_.Push(now_ + ingest, {EventKind::kArrive, r});
}

void OnlineEngine::OnArrive(int request) {
  arrived_[request] = true;
  if (scheduler_.request(request).finished) return;  // aborted on the way
  scheduler_.Enqueue(request);
  ++queued_;
  if (sleeping_) {
    sleeping_ = false;
    PushInternal(now_, EventKind::kLoop, -1);
  }
}

// One pass of event_loop_pp for micro-batch `mb_counter_`: form and launch
// the slot's batch, then wait for the next slot's outputs.
void OnlineEngine::OnLoop() {
  const int slot = static_cast<int>(mb_counter_ % config_.num_slots);
  MicroBatch batch = scheduler_.NextBatch(slot);
  // Prefilled requests admitted by this pass: the decode server's prebuilt
  // batch streams their first token (computed by the prefill server).
  scheduler_.TakePrefilledAdmissions(&first_token_, &finished_);
  queued_ -= static_cast<int>(first_token_.size());
  int64_t t = now_;
  if (!batch.empty()) {
    // Overlapped, the host formed this decode batch while the GPU ran the
    // previous one: its schedule time counts from that launch.
    const bool overlapped = config_.overlap_schedule && !batch.is_prefill;
    t = overlapped ? std::max(t, last_launch_ns_ + cost_.ScheduleNs(batch))
                   : t + cost_.ScheduleNs(batch);
    Launch(slot, std::move(batch), t);
    empty_passes_ = 0;
  } else {
    ++empty_passes_;
  }
  if (!first_token_.empty()) {
    empty_passes_ = 0;
    const int64_t client_ns = t + cost_.StreamOutNs();
    for (int r : first_token_)
      if (!pending_[sched_to_ticket_[r]].aborted)
        listener_->OnTokens(sched_to_ticket_[r], 1, client_ns);
    for (int r : finished_)
      if (!pending_[sched_to_ticket_[r]].aborted)
        listener_->OnFinished(sched_to_ticket_[r], client_ns, /*ok=*/true);
  }
  counters_.peak_kv_tokens = std::max(counters_.peak_kv_tokens, scheduler_.kv_tokens_used());
  counters_.peak_running_requests =
      std::max<int64_t>(counters_.peak_running_requests, scheduler_.running_requests());

  const int next = static_cast<int>((mb_counter_ + 1) % config_.num_slots);
  ++mb_counter_;
  if (slots_[next].active) {
    PushInternal(std::max(t, slots_[next].outputs_ready_ns), EventKind::kProcess, next);
    return;
  }
  ContinueOrSleep(t);
}

// Process the outputs of the micro-batch that last ran in `slot`.
void OnlineEngine::OnProcess(int slot) {
  InFlight& f = slots_[slot];
  assert(f.active);
  first_token_.clear();
  finished_.clear();
  scheduler_.ApplyResult(slot, f.batch, &first_token_, &finished_);
  f.active = false;
  const int64_t client_ns = now_ + cost_.StreamOutNs();
  auto heard = [this](int r) { return !pending_[sched_to_ticket_[r]].aborted; };
  for (int r : first_token_)
    if (heard(r))
      listener_->OnTokens(sched_to_ticket_[r], scheduler_.request(r).output_tokens, client_ns);
  // Decode batches advance each of their sequences by one token; with DP
  // attention a step holds a decode batch of some ranks and prefills of others.
  auto decoded = [&](const MicroBatch& b) {
    if (b.is_prefill) return;
    for (const auto& e : b.entries)
      if (heard(e.request))
        listener_->OnTokens(sched_to_ticket_[e.request],
                            scheduler_.request(e.request).output_tokens, client_ns);
  };
  if (f.batch.dp_ranks.empty()) decoded(f.batch);
  for (const MicroBatch& part : f.batch.dp_ranks) decoded(part);
  for (int r : finished_)
    if (heard(r)) listener_->OnFinished(sched_to_ticket_[r], client_ns, /*ok=*/true);
  ContinueOrSleep(now_);
}

void OnlineEngine::ContinueOrSleep(int64_t t) {
  bool in_flight =
      std::any_of(slots_.begin(), slots_.end(), [](const InFlight& f) { return f.active; });
  if (!in_flight && scheduler_.Idle()) {
    sleeping_ = true;  // woken by the next arrival
    return;
  }
  if (!in_flight && empty_passes_ > config_.num_slots) {
    // Waiting requests that no slot can admit with nothing running: SGLang
    // rejects such a request (longer than the KV pool) up front.
    int r = scheduler_.DropHeadWaiting();
    --queued_;
    listener_->OnFinished(sched_to_ticket_[r], t, /*ok=*/false);
    empty_passes_ = 0;
  }
  PushInternal(t, EventKind::kLoop, -1);
}

void OnlineEngine::Launch(int slot, MicroBatch batch, int64_t launch_ns) {
  BatchLaunch info;
  info.launch_ns = launch_ns;
  info.slot = slot;
  info.is_prefill = batch.is_prefill;
  auto count = [&info](const MicroBatch& b) {
    for (const auto& e : b.entries) {
      info.new_tokens += e.extend_tokens;
      if (b.is_prefill && e.prefix_tokens == 0) ++info.new_seqs;
      if (b.is_prefill) info.cached_tokens += e.prefix_tokens;
      if (!b.is_prefill || e.last_chunk) ++info.logit_rows;
    }
  };
  if (batch.dp_ranks.empty()) count(batch);
  for (const MicroBatch& part : batch.dp_ranks) count(part);
  queued_ -= info.new_seqs;
  info.running_requests = scheduler_.running_requests();
  info.queued_requests = queued_;
  info.kv_tokens_used = scheduler_.kv_tokens_used();

  const int stages = cost_.num_stages();
  int64_t arrive = launch_ns;
  int64_t end = launch_ns;
  for (int s = 0; s < stages; ++s) {
    StageTime st = cost_.StageCost(s, batch);
    int64_t start = std::max(gpu_free_ns_[s], arrive);
    end = start + st.total_ns();
    gpu_free_ns_[s] = end;
    Account(s, st, start, batch, slot);
    if (s + 1 < stages) {
      // The hand-off is a rendezvous, not a buffer. SGLang's event_loop_pp
      // (python/sglang/srt/managers/scheduler_pp_mixin.py) sends the
      // activations with an async NCCL send but commits it
      // (_pp_commit_comm_work: the stream waits on the send) before it
      // launches its next micro-batch; the receiver's NCCL recv runs on its
      // stream after its previous micro-batch. So the transfer starts when
      // both stages are done, and the sender's stream is held until it ends.
      const int64_t transfer_start = std::max(end, gpu_free_ns_[s + 1]);
      arrive = transfer_start + cost_.HopNs(s, batch);
      gpu_free_ns_[s] = arrive;
    }
  }
  NoteBatchShape(batch);
  last_launch_ns_ = launch_ns;
  ++counters_.micro_batches;
  (batch.is_prefill ? counters_.prefill_batches : counters_.decode_batches)++;
  slots_[slot].outputs_ready_ns = end + cost_.OutputReturnNs(batch);
  slots_[slot].batch = std::move(batch);
  slots_[slot].active = true;
  listener_->OnBatchLaunched(info);
}

void OnlineEngine::NoteBatchShape(const MicroBatch& batch) {
  if (!batch.is_prefill) {
    // A decode step: a token and a logit row per sequence; with DP
    // attention each rank's own batch (its CUDA graph's size).
    int64_t rows = static_cast<int64_t>(batch.entries.size());
    if (!batch.dp_ranks.empty()) {
      rows = 0;
      for (const MicroBatch& part : batch.dp_ranks)
        rows = std::max<int64_t>(rows, static_cast<int64_t>(part.entries.size()));
    }
    counters_.peak_decode_batch = std::max(counters_.peak_decode_batch, rows);
    return;
  }
  BatchShape shape;
  for (const BatchEntry& e : batch.entries) {
    shape.tokens += e.extend_tokens;
    if (e.last_chunk) ++shape.logit_rows;
  }
  AddToFront(counters_.prefill_shapes, shape);
}

void OnlineEngine::Account(int stage, const StageTime& st, int64_t start, const MicroBatch& batch,
                           int slot) {
  AddStageTime(stage, st);
  if (options_.keep_trace &&
      static_cast<int64_t>(counters_.trace.size()) < options_.max_trace_slices) {
    counters_.trace.push_back({stage, start, st.total_ns(), counters_.micro_batches, slot,
                               batch.is_prefill, batch.extend_tokens(),
                               static_cast<int>(batch.entries.size()), st});
  }
}

void OnlineEngine::AddStageTime(int stage, const StageTime& st) {
  StageStats& s = counters_.stages[stage];
  s.compute_ns += st.compute_ns;
  s.gemm_ns += st.gemm_ns;
  s.moe_ns += st.moe_ns;
  s.attention_ns += st.attention_ns;
  s.comm_ns += st.comm_ns;
  s.transfer_ns += st.transfer_ns;
  s.overhead_ns += st.overhead_ns;
  s.allreduce_calls += st.allreduce_calls;
  ++s.micro_batches;
}

}  // namespace ppsearch::sim
