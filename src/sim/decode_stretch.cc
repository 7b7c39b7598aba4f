// OnlineEngine's decode stretches: the steps of batches that keep their
// sequences, played without the event queue. Each step is what OnLoop and
// OnProcess (online_engine.cc) would do with it, in the same order and at
// the same times; the scheduler and the slots are then left as those
// events would have left them. What makes a step cheap: its stage times
// come from the cost model's DecodeGrowth of the stretch's first step (no
// pricing per step), its batch is never built, and the scheduler is told
// the outcome once (Scheduler::AdvanceDecode).

#include <algorithm>
#include <climits>

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
  bool runs() const { return !batch.empty(); }
};

bool OnlineEngine::BuildStretch(std::vector<StretchSlot>* out) const {
  std::vector<StretchSlot>& slots = *out;
  slots.resize(config_.num_slots);
  bool any = false;
  for (int s = 0; s < config_.num_slots; ++s) {
    StretchSlot& z = slots[s];
    z.batch = scheduler_.PeekDecode(s);
    if (!z.runs()) continue;
    any = true;
    z.results_left = INT64_MAX;
    for (const BatchEntry& e : z.batch.entries) {
      const SchedRequest& q = scheduler_.request(e.request);
      z.results_left = std::min(z.results_left, q.max_new_tokens - q.output_tokens - 1);
      z.output_tokens.push_back(q.output_tokens);
      const int ticket = sched_to_ticket_[e.request];
      z.tickets.push_back(pending_[ticket].aborted ? -1 : ticket);
    }
    for (int st = 0; st < cost_.num_stages(); ++st) {
      std::optional<DecodeGrowth> g = cost_.DecodeStepGrowth(st, z.batch);
      if (!g) return false;
      z.stages.push_back(std::move(*g));
      z.compute_ns.push_back(0);
      if (st + 1 < cost_.num_stages()) z.hop_ns.push_back(cost_.HopNs(st, z.batch));
    }
    z.return_ns = cost_.OutputReturnNs(z.batch);
    z.schedule_ns = cost_.ScheduleNs(z.batch);
  }
  return any;
}

bool OnlineEngine::AdvanceDecodeStretch(int64_t limit_ns) {
  if (internal_pending_ != 1 || events_.empty()) return false;
  const EventQueue<Event>::Event head = events_.Top();
  const bool is_loop = head.payload.kind == EventKind::kLoop;
  if (!is_loop && head.payload.kind != EventKind::kProcess) return false;
  if (head.time_ns > limit_ns || scheduler_.HasWaiting()) return false;
  for (const InFlight& f : slots_)
    if (f.active && f.batch.is_prefill) return false;
  std::vector<StretchSlot> slots;
  if (!BuildStretch(&slots)) return false;

  const int num_slots = config_.num_slots;
  const int64_t stream_out_ns = cost_.StreamOutNs();
  auto in_flight = [this] {
    return std::any_of(slots_.begin(), slots_.end(), [](const InFlight& f) { return f.active; });
  };
  EventKind kind = head.payload.kind;
  int process_slot = head.payload.index;
  int64_t t = head.time_ns;
  // Outside events queued before the stretch come first at equal times; the
  // head alone was queued before some of them and is the queue's first.
  int64_t outside_ns = INT64_MAX;
  bool started = false;
  // The step at `at` is played: the head leaves the queue with the first.
  auto take = [&](int64_t at) {
    if (!started) {
      events_.Pop();
      --internal_pending_;
      outside_ns = events_.empty() ? INT64_MAX : events_.Top().time_ns;
      started = true;
    }
    now_ = at;
  };
  while (true) {
    if (started && (t >= outside_ns || t > limit_ns)) break;
    if (kind == EventKind::kProcess) {
      StretchSlot& z = slots[process_slot];
      if (z.processed >= z.results_left) break;  // this result finishes a request
      slots_[process_slot].active = false;
      if (!in_flight() && empty_passes_ > num_slots) {  // OnProcess would drop a request
        slots_[process_slot].active = true;
        break;
      }
      take(t);
      ++z.processed;
      z.last_client_ns = now_ + stream_out_ns;
      if (options_.token_times) HearStretchTokens(z);
      kind = EventKind::kLoop;  // ContinueOrSleep(now)
      continue;
    }
    const int slot = static_cast<int>(mb_counter_ % num_slots);
    StretchSlot& z = slots[slot];
    if (!z.runs() && !in_flight() && empty_passes_ + 1 > num_slots) break;
    take(t);
    z.visited = true;
    if (z.runs()) {
      t = config_.overlap_schedule ? std::max(t, last_launch_ns_ + z.schedule_ns)
                                   : t + z.schedule_ns;
      LaunchStretchStep(z, slot, t);
      empty_passes_ = 0;
    } else {
      ++empty_passes_;
    }
    const int next = static_cast<int>((mb_counter_ + 1) % num_slots);
    ++mb_counter_;
    if (slots_[next].active) {
      kind = EventKind::kProcess;
      process_slot = next;
      t = std::max(t, slots_[next].outputs_ready_ns);
    }
  }
  if (!started) return false;
  PushInternal(t, kind, kind == EventKind::kProcess ? process_slot : -1);
  FinishStretch(slots);
  return true;
}

// Launch's stage arithmetic for the slot's next step.
void OnlineEngine::LaunchStretchStep(StretchSlot& z, int slot, int64_t launch_ns) {
  const int64_t k = z.processed;  // each launch follows the slot's previous result
  const int stages = cost_.num_stages();
  int64_t arrive = launch_ns;
  int64_t end = launch_ns;
  for (int st = 0; st < stages; ++st) {
    const DecodeGrowth& g = z.stages[st];
    const int64_t compute_ns = k > 0 ? g.ComputeNs(k) : g.at_start.compute_ns;
    const int64_t start = std::max(gpu_free_ns_[st], arrive);
    end = start + g.at_start.total_ns() - g.at_start.compute_ns + compute_ns;
    gpu_free_ns_[st] = end;
    z.compute_ns[st] += compute_ns;
    if (st + 1 < stages) {
      arrive = std::max(end, gpu_free_ns_[st + 1]) + z.hop_ns[st];
      gpu_free_ns_[st] = arrive;
    }
  }
  last_launch_ns_ = launch_ns;
  ++counters_.micro_batches;
  ++counters_.decode_batches;
  ++counters_.stretched_batches;
  slots_[slot].outputs_ready_ns = end + z.return_ns;
  slots_[slot].active = true;
  ++z.launched;
  z.last_launch_k = k;
}

void OnlineEngine::HearStretchTokens(const StretchSlot& z) {
  for (size_t i = 0; i < z.tickets.size(); ++i)
    if (z.tickets[i] >= 0)
      listener_->OnTokens(z.tickets[i], z.output_tokens[i] + z.processed, z.last_client_ns);
}

void OnlineEngine::FinishStretch(std::vector<StretchSlot>& slots) {
  for (int s = 0; s < config_.num_slots; ++s) {
    StretchSlot& z = slots[s];
    if (!options_.token_times && z.processed > 0) HearStretchTokens(z);
    // Each launch's stage times but compute are those of the first.
    for (size_t st = 0; st < z.stages.size() && z.launched > 0; ++st) {
      const StageTime& first = z.stages[st].at_start;
      StageStats& sum = counters_.stages[st];
      sum.compute_ns += z.compute_ns[st];
      sum.comm_ns += first.comm_ns * z.launched;
      sum.transfer_ns += first.transfer_ns * z.launched;
      sum.overhead_ns += first.overhead_ns * z.launched;
      sum.allreduce_calls += first.allreduce_calls * z.launched;
      sum.micro_batches += z.launched;
    }
    scheduler_.AdvanceDecode(s, z.launched, z.processed, z.visited);
    if (z.launched == 0 || !slots_[s].active) continue;
    // The batch in flight is the slot's last launch.
    MicroBatch batch = std::move(z.batch);
    for (BatchEntry& e : batch.entries) e.prefix_tokens += z.last_launch_k;
    for (MicroBatch& part : batch.dp_ranks)
      for (BatchEntry& e : part.entries) e.prefix_tokens += z.last_launch_k;
    slots_[s].batch = std::move(batch);
  }
  counters_.peak_kv_tokens = std::max(counters_.peak_kv_tokens, scheduler_.kv_tokens_used());
}

}  // namespace ppsearch::sim
