#include "sim/engine.h"

#include <algorithm>
#include <cassert>

#include "sim/event_queue.h"

namespace ppsearch::sim {
namespace {

enum class EventKind { kSend, kArrive, kLoop, kProcess };

struct Event {
  EventKind kind;
  int request;  // kSend: planned index; kArrive: scheduler index; kProcess: slot
};

// A micro-batch launched into a slot and not yet processed.
struct InFlight {
  MicroBatch batch;
  int64_t outputs_ready_ns = 0;  // next_token_ids back on stage 0
  bool active = false;
};

class Engine {
 public:
  Engine(const SchedulerConfig& config, const CostModel& cost,
         const std::vector<workload::PlannedRequest>& planned, int concurrency,
         const SimOptions& options)
      : config_(config),
        cost_(cost),
        planned_(planned),
        concurrency_(concurrency),
        options_(options),
        scheduler_(config),
        slots_(config.num_slots),
        gpu_free_ns_(cost.num_stages(), 0) {
    result_.stages.resize(cost.num_stages());
    result_.records.resize(planned.size());
    sched_to_planned_.reserve(planned.size());
    result_.pp_max_micro_batch_size = scheduler_.pp_max_micro_batch_size();
  }

  SimResult Run() {
    StartClient();
    while (!events_.empty()) {
      auto e = events_.Pop();
      now_ = e.time_ns;
      switch (e.payload.kind) {
        case EventKind::kSend:
          OnSend(e.payload.request);
          break;
        case EventKind::kArrive:
          OnArrive(e.payload.request);
          break;
        case EventKind::kLoop:
          OnLoop();
          break;
        case EventKind::kProcess:
          OnProcess(e.payload.request);
          break;
      }
    }
    Finish();
    return std::move(result_);
  }

 private:
  void StartClient() {
    if (concurrency_ > 0) {
      int first = std::min<int>(concurrency_, static_cast<int>(planned_.size()));
      for (int i = 0; i < first; ++i) events_.Push(0, {EventKind::kSend, i});
      next_to_send_ = first;
    } else {
      for (size_t i = 0; i < planned_.size(); ++i)
        events_.Push(planned_[i].arrival_ns, {EventKind::kSend, static_cast<int>(i)});
      next_to_send_ = static_cast<int>(planned_.size());
    }
  }

  void OnSend(int planned_index) {
    const auto& p = planned_[planned_index];
    auto& rec = result_.records[planned_index];
    rec.id = p.id;
    rec.send_ns = now_;
    rec.input_tokens = p.input_tokens;
    rec.reported_input_tokens = p.input_tokens;
    int r = scheduler_.AddRequest(p.input_tokens, p.output_tokens);
    sched_to_planned_.push_back(planned_index);
    events_.Push(now_ + cost_.IngestNs(p.input_tokens), {EventKind::kArrive, r});
  }

  void OnArrive(int request) {
    scheduler_.Enqueue(request);
    if (sleeping_) {
      sleeping_ = false;
      events_.Push(now_, {EventKind::kLoop, -1});
    }
  }

  // One pass of event_loop_pp for micro-batch `mb_counter_`: form and launch
  // the slot's batch, then wait for the next slot's outputs.
  void OnLoop() {
    const int slot = static_cast<int>(mb_counter_ % config_.num_slots);
    MicroBatch batch = scheduler_.NextBatch(slot);
    int64_t t = now_;
    if (!batch.empty()) {
      t += cost_.ScheduleNs(batch);
      Launch(slot, std::move(batch), t);
      empty_passes_ = 0;
    } else {
      ++empty_passes_;
    }
    result_.peak_kv_tokens = std::max(result_.peak_kv_tokens, scheduler_.kv_tokens_used());
    result_.peak_running_requests =
        std::max<int64_t>(result_.peak_running_requests, scheduler_.running_requests());

    const int next = static_cast<int>((mb_counter_ + 1) % config_.num_slots);
    ++mb_counter_;
    if (slots_[next].active) {
      events_.Push(std::max(t, slots_[next].outputs_ready_ns), {EventKind::kProcess, next});
      return;
    }
    ContinueOrSleep(t);
  }

  // Process the outputs of the micro-batch that last ran in `slot`.
  void OnProcess(int slot) {
    InFlight& f = slots_[slot];
    assert(f.active);
    first_token_.clear();
    finished_.clear();
    scheduler_.ApplyResult(slot, f.batch, &first_token_, &finished_);
    f.active = false;
    const int64_t client_ns = now_ + cost_.StreamOutNs();
    for (int r : first_token_) result_.records[sched_to_planned_[r]].first_token_ns = client_ns;
    for (int r : finished_) Complete(r, client_ns);
    ContinueOrSleep(now_);
  }

  void ContinueOrSleep(int64_t t) {
    bool in_flight = std::any_of(slots_.begin(), slots_.end(), [](const InFlight& f) { return f.active; });
    if (!in_flight && scheduler_.Idle()) {
      sleeping_ = true;  // woken by the next arrival
      return;
    }
    if (!in_flight && empty_passes_ > config_.num_slots) {
      // Waiting requests that no slot can admit with nothing running: SGLang
      // rejects such a request (longer than the KV pool) up front.
      int r = scheduler_.DropHeadWaiting();
      auto& rec = result_.records[sched_to_planned_[r]];
      rec.status = workload::RequestStatus::kHttpError;
      rec.http_status = 400;
      rec.error = "request does not fit the KV cache pool";
      Complete(r, t, /*ok=*/false);
      empty_passes_ = 0;
    }
    events_.Push(t, {EventKind::kLoop, -1});
  }

  void Launch(int slot, MicroBatch batch, int64_t launch_ns) {
    const int stages = cost_.num_stages();
    int64_t arrive = launch_ns;
    int64_t end = launch_ns;
    for (int s = 0; s < stages; ++s) {
      StageTime st = cost_.StageCost(s, batch);
      int64_t start = std::max(gpu_free_ns_[s], arrive);
      end = start + st.total_ns();
      gpu_free_ns_[s] = end;
      Account(s, st, start, batch, slot);
      if (s + 1 < stages) arrive = end + cost_.HopNs(s, batch);
    }
    ++result_.micro_batches;
    (batch.is_prefill ? result_.prefill_batches : result_.decode_batches)++;
    slots_[slot].outputs_ready_ns = end + cost_.OutputReturnNs(batch);
    slots_[slot].batch = std::move(batch);
    slots_[slot].active = true;
  }

  void Account(int stage, const StageTime& st, int64_t start, const MicroBatch& batch, int slot) {
    StageStats& s = result_.stages[stage];
    s.compute_ns += st.compute_ns;
    s.comm_ns += st.comm_ns;
    s.transfer_ns += st.transfer_ns;
    s.overhead_ns += st.overhead_ns;
    s.allreduce_calls += st.allreduce_calls;
    ++s.micro_batches;
    if (options_.keep_trace && static_cast<int64_t>(result_.trace.size()) < options_.max_trace_slices) {
      result_.trace.push_back({stage, start, st.total_ns(), result_.micro_batches, slot,
                               batch.is_prefill, batch.extend_tokens(),
                               static_cast<int>(batch.entries.size()), st});
    }
  }

  void Complete(int request, int64_t t, bool ok = true) {
    auto& rec = result_.records[sched_to_planned_[request]];
    rec.end_ns = t;
    if (ok) {
      rec.output_tokens = scheduler_.request(request).output_tokens;
      rec.http_status = 200;
    }
    last_end_ns_ = std::max(last_end_ns_, t);
    if (concurrency_ > 0 && next_to_send_ < static_cast<int>(planned_.size())) {
      events_.Push(t, {EventKind::kSend, next_to_send_++});
    }
  }

  void Finish() {
    int64_t first_send = INT64_MAX;
    for (auto& rec : result_.records) {
      if (rec.end_ns < 0) {
        rec.status = workload::RequestStatus::kNotSent;
        continue;
      }
      first_send = std::min(first_send, rec.send_ns);
    }
    result_.window_ns = first_send == INT64_MAX ? 0 : last_end_ns_ - first_send;
    for (auto& s : result_.stages) s.idle_ns = std::max<int64_t>(result_.window_ns - s.busy_ns(), 0);
  }

  const SchedulerConfig& config_;
  const CostModel& cost_;
  const std::vector<workload::PlannedRequest>& planned_;
  const int concurrency_;
  const SimOptions options_;
  Scheduler scheduler_;
  std::vector<InFlight> slots_;
  std::vector<int64_t> gpu_free_ns_;
  EventQueue<Event> events_;
  SimResult result_;
  std::vector<int> sched_to_planned_;
  std::vector<int> first_token_, finished_;
  int64_t now_ = 0;
  int64_t mb_counter_ = 0;
  int64_t last_end_ns_ = 0;
  int next_to_send_ = 0;
  int empty_passes_ = 0;
  bool sleeping_ = true;
};

}  // namespace

SimResult Simulate(const SchedulerConfig& config, const CostModel& cost,
                   const std::vector<workload::PlannedRequest>& planned, int concurrency,
                   const SimOptions& options) {
  Engine engine(config, cost, planned, concurrency, options);
  return engine.Run();
}

}  // namespace ppsearch::sim
