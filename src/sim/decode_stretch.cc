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
#include <cmath>

#include "sim/decode_stretch_parts.h"
#include "sim/online_engine.h"
#include "util/round.h"

namespace ppsearch::sim {
namespace {

// Results applied step by step, per slot, after a pipeline's rounds first
// could not jump, before they are tried again.
constexpr int64_t kRoundRetryFirst = 4;

// Drops the groups no other group ever falls below (one with no more time
// and no more growth than another): the busiest DP rank is one of those
// left, and a DP step of even ranks has one line.
void DropDominatedGroups(DecodeGrowth& g) {
  const size_t n = g.group_ns.size();
  if (n < 2) return;
  std::vector<char> dominated(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n && !dominated[i]; ++j) {
      if (j == i) continue;
      const bool covers =
          g.group_ns[j] >= g.group_ns[i] && g.group_growth_ns[j] >= g.group_growth_ns[i];
      const bool same =
          g.group_ns[j] == g.group_ns[i] && g.group_growth_ns[j] == g.group_growth_ns[i];
      dominated[i] = covers && (!same || j < i);  // of equal groups the first stays
    }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (dominated[i]) continue;
    g.group_ns[kept] = g.group_ns[i];
    g.group_growth_ns[kept] = g.group_growth_ns[i];
    ++kept;
  }
  g.group_ns.resize(kept);
  g.group_growth_ns.resize(kept);
}

// Context steps the batch has taken since the slot's price was made: the
// same sequences in the same order, each `steps` tokens on; nullopt when
// the slot runs other sequences.
std::optional<int64_t> StepsSincePriced(const MicroBatch& batch, const std::vector<int>& requests,
                                        const std::vector<int64_t>& context) {
  if (batch.entries.size() != requests.size() || requests.empty()) return std::nullopt;
  const int64_t steps = batch.entries.front().prefix_tokens - context.front();
  if (steps < 0) return std::nullopt;
  for (size_t i = 0; i < requests.size(); ++i)
    if (batch.entries[i].request != requests[i] ||
        batch.entries[i].prefix_tokens - context[i] != steps)
      return std::nullopt;
  return steps;
}

}  // namespace

bool OnlineEngine::PriceStretchSlot(StretchSlot& z) {
  if (const std::optional<int64_t> steps =
          StepsSincePriced(z.batch, z.priced_requests, z.priced_context)) {
    // DecodeGrowth's form: `steps` on, each group starts where its line is
    // then. The hops, the return and the schedule read the batch's shape only.
    const double k = static_cast<double>(*steps);
    for (DecodeGrowth& g : z.stages) {
      for (size_t a = 0; a < g.group_ns.size(); ++a) g.group_ns[a] += k * g.group_growth_ns[a];
      DropDominatedGroups(g);
      // What the steps added is attention's (only it grows).
      const int64_t before = g.at_start.compute_ns;
      g.at_start.compute_ns = g.ComputeNs(0);
      g.at_start.attention_ns += g.at_start.compute_ns - before;
    }
    ++counters_.carried_prices;
  } else {
    // Each stage's form is written over the last batch's, in its room.
    z.stages.resize(static_cast<size_t>(cost_.num_stages()));
    z.hop_ns.clear();
    for (int st = 0; st < cost_.num_stages(); ++st) {
      DecodeGrowth& g = z.stages[static_cast<size_t>(st)];
      if (!cost_.DecodeStepGrowth(st, z.batch, &g)) {
        z.stages.resize(static_cast<size_t>(st));  // the stages priced
        z.priced_requests.clear();
        return false;
      }
      DropDominatedGroups(g);
      if (st + 1 < cost_.num_stages()) z.hop_ns.push_back(cost_.HopNs(st, z.batch));
    }
    z.return_ns = cost_.OutputReturnNs(z.batch);
    z.schedule_ns = cost_.ScheduleNs(z.batch);
    z.priced_requests.clear();
    for (const BatchEntry& e : z.batch.entries) z.priced_requests.push_back(e.request);
  }
  z.priced_context.clear();
  for (const BatchEntry& e : z.batch.entries) z.priced_context.push_back(e.prefix_tokens);
  return true;
}

bool OnlineEngine::BuildStretch() {
  stretch_.resize(config_.num_slots);
  bool any = false;
  for (int s = 0; s < config_.num_slots; ++s) {
    StretchSlot& z = stretch_[s];
    z.StartStretch();
    z.batch = scheduler_.PeekDecode(s);
    if (!z.runs()) {
      z.priced_requests.clear();
      continue;
    }
    any = true;
    z.results_left = scheduler_.ResultsBeforeAFinish(s);
    for (const BatchEntry& e : z.batch.entries) {
      z.output_tokens.push_back(scheduler_.request(e.request).output_tokens);
      const int ticket = sched_to_ticket_[e.request];
      z.tickets.push_back(pending_[ticket].aborted ? -1 : ticket);
    }
    if (!PriceStretchSlot(z)) return false;
    z.compute_ns.assign(z.stages.size(), 0);
    z.lines.clear();
    if (std::all_of(z.stages.begin(), z.stages.end(),
                    [](const DecodeGrowth& g) { return g.group_ns.size() == 1; }))
      for (size_t st = 0; st < z.stages.size(); ++st) {
        const DecodeGrowth& g = z.stages[st];
        z.lines.push_back({g.at_start.total_ns() - g.at_start.compute_ns, g.at_start.compute_ns,
                           g.fixed_compute_ns, g.group_ns[0], g.group_growth_ns[0],
                           st < z.hop_ns.size() ? z.hop_ns[st] : 0});
      }
  }
  const auto running = std::count_if(stretch_.begin(), stretch_.end(),
                                     [](const StretchSlot& z) { return z.runs(); });
  // One line per stage is what laid `lines` out.
  for (StretchSlot& z : stretch_) z.decodes_alone = running == 1 && z.runs() && !z.lines.empty();
  return any;
}

bool OnlineEngine::AdvanceDecodeStretch(int64_t limit_ns) {
  if (internal_pending_ != 1 || events_.empty()) return false;
  const EventQueue<Event>::Event head = events_.Top();
  const bool is_loop = head.payload.kind == EventKind::kLoop;
  if (!is_loop && head.payload.kind != EventKind::kProcess) return false;
  // Requests may wait, as long as none could be admitted before a finish.
  if (head.time_ns > limit_ns || !scheduler_.AdmitsNothingUntilAFinish()) return false;
  for (const InFlight& f : slots_)
    if (f.active && f.batch.is_prefill) return false;
  // A result that finishes a request ends the stretch before its first
  // step: nothing to build.
  if (!is_loop && scheduler_.ResultsBeforeAFinish(head.payload.index) <= 0) return false;
  if (!BuildStretch()) return false;
  std::vector<StretchSlot>& slots = stretch_;

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
  int64_t processes = 0, next_round_try = 0;  // results applied; when rounds may jump
  int64_t round_retry_wait = kRoundRetryFirst;
  std::vector<double> round_state;
  // mb_counter_ % num_slots, kept without a division per step (the jumps
  // advance the counter by whole turns of the slots).
  int loop_slot = static_cast<int>(mb_counter_ % num_slots);
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
      if (empty_passes_ > num_slots && !in_flight()) {  // OnProcess would drop a request
        slots_[process_slot].active = true;
        break;
      }
      take(t);
      if (const int64_t cycles = CyclesToJump(slots, process_slot, t, outside_ns, limit_ns);
          cycles > 0) {
        t = JumpCycles(slots, process_slot, t, cycles);
        continue;
      }
      if (processes >= next_round_try) {
        if (const int64_t rounds =
                RoundsToJump(slots, process_slot, t, outside_ns, limit_ns, &round_state);
            rounds > 0) {
          t = JumpRounds(slots, process_slot, rounds, round_state);
          continue;
        }
        // A pipeline not yet in one pattern: play a few rounds before the
        // next try, twice as many after each miss.
        next_round_try = processes + round_retry_wait * num_slots;
        round_retry_wait *= 2;
      }
      ++processes;
      ++z.processed;
      z.last_client_ns = now_ + stream_out_ns;
      if (options_.token_times) HearStretchTokens(z);
      kind = EventKind::kLoop;  // ContinueOrSleep(now)
      continue;
    }
    const int slot = loop_slot;
    StretchSlot& z = slots[slot];
    if (!z.runs() && empty_passes_ + 1 > num_slots && !in_flight()) break;
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
    const int next = slot + 1 == num_slots ? 0 : slot + 1;
    ++mb_counter_;
    loop_slot = next;
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

// Launch's stage arithmetic for a step `k` context tokens past the slot's
// batch; adds each stage's compute to `compute_ns`; returns when the last
// stage ends.
int64_t OnlineEngine::StageEnds(const StretchSlot& z, int64_t k, int64_t launch_ns,
                                std::vector<int64_t>* compute_ns) {
  const int stages = cost_.num_stages();
  int64_t arrive = launch_ns;
  int64_t end = launch_ns;
  if (!z.lines.empty()) {  // the same arithmetic on one line per stage, laid out flat
    const double kd = static_cast<double>(k);
    int64_t* free = gpu_free_ns_.data();
    int64_t* compute = compute_ns != nullptr ? compute_ns->data() : nullptr;
    for (int st = 0; st < stages; ++st) {
      const StretchSlot::StageLine& l = z.lines[st];
      const int64_t c =
          k > 0
              ? static_cast<int64_t>(l.fixed_ns + std::max(0.0, l.line_ns + kd * l.growth_ns) + 0.5)
              : l.start_compute_ns;
      end = std::max(free[st], arrive) + l.other_ns + c;
      free[st] = end;
      if (compute != nullptr) compute[st] += c;
      if (st + 1 < stages) {
        arrive = std::max(end, free[st + 1]) + l.hop_ns;
        free[st] = arrive;
      }
    }
    return end;
  }
  for (int st = 0; st < stages; ++st) {
    const DecodeGrowth& g = z.stages[st];
    const int64_t c = k > 0 ? g.ComputeNs(k) : g.at_start.compute_ns;
    const int64_t start = std::max(gpu_free_ns_[st], arrive);
    end = start + g.at_start.total_ns() - g.at_start.compute_ns + c;
    gpu_free_ns_[st] = end;
    if (compute_ns != nullptr) (*compute_ns)[st] += c;
    if (st + 1 < stages) {
      arrive = std::max(end, gpu_free_ns_[st + 1]) + z.hop_ns[st];
      gpu_free_ns_[st] = arrive;
    }
  }
  return end;
}

// The slot's next step launched at `launch_ns`.
void OnlineEngine::LaunchStretchStep(StretchSlot& z, int slot, int64_t launch_ns) {
  const int64_t k = z.processed;  // each launch follows the slot's previous result
  const int64_t end = StageEnds(z, k, launch_ns, &z.compute_ns);
  last_launch_ns_ = launch_ns;
  ++counters_.micro_batches;
  ++counters_.decode_batches;
  ++counters_.stretched_batches;
  slots_[slot].outputs_ready_ns = end + z.return_ns;
  slots_[slot].active = true;
  ++z.launched;
  z.last_launch_k = k;
}

// A slot that decodes alone (no other slot runs or is in flight) repeats
// one cycle: apply its result, launch its next step, pass the empty slots,
// wait for the result. Cycle j's times follow from the step time
//   D(k) = sum over stages of (its time but compute + fixed + group + k x growth)
//          + the hops + the output's return,
// affine in the step's context k, so that the launch of cycle j is
//   t_j = P_0 + (j + 1) x schedule + sum_{i=1..j} D(p0 + i)         (no overlap)
//   t_j = t_0 + sum_{i=1..j} max(D(p0 + i), schedule)                (overlap)
// with P_0 the first result's time and p0 the results applied before it:
// sums of an affine sequence, in closed form. Each stage's time is rounded
// to the ns once per cycle step by step and once per jump here (within a
// ns per step of the step-by-step times).
struct OnlineEngine::Cycle {
  double p0 = 0, first_ns = 0, schedule_ns = 0, last_launch_ns = 0;
  double d_fixed = 0, d_growth = 0;  // D(k) = d_fixed + k x d_growth
  bool overlap = false;

  double D(double k) const { return d_fixed + k * d_growth; }
  // Launch time of cycle j (j >= 0).
  double Launch(double j) const {
    if (!overlap)
      return first_ns + (j + 1) * schedule_ns + j * d_fixed + d_growth * (j * p0 + j * (j + 1) / 2);
    const double t0 = std::max(first_ns, last_launch_ns + schedule_ns);
    // Cycles whose step is shorter than the schedule time: i < below + 1.
    double below = 0;
    if (d_growth > 0)
      below = std::clamp(std::ceil((schedule_ns - d_fixed) / d_growth - p0) - 1, 0.0, j);
    else if (d_fixed < schedule_ns)
      below = j;
    return t0 + below * schedule_ns + (j - below) * (d_fixed + p0 * d_growth) +
           d_growth * (j * (j + 1) / 2 - below * (below + 1) / 2);
  }
  // Result time of cycle j: P_0, then the previous launch plus its step.
  double Result(double j) const { return j == 0 ? first_ns : Launch(j - 1) + D(p0 + j); }
};

int64_t OnlineEngine::CyclesToJump(const std::vector<StretchSlot>& slots, int slot, int64_t t,
                                   int64_t outside_ns, int64_t limit_ns) const {
  const StretchSlot& z = slots[slot];
  if (!z.decodes_alone) return 0;
  for (int s = 0; s < config_.num_slots; ++s)
    if (s != slot && slots_[s].active) return 0;
  // Cycles that apply a result before the one that finishes a request.
  const int64_t most = z.results_left - z.processed;
  if (most < 2) return 0;
  const Cycle c = CycleOf(z, t);
  // The last cycle's launch must come before the next outside event, by a
  // margin that the closed form's rounding cannot cross (the step-by-step
  // loop plays the cycles near it).
  constexpr double kMarginNs = 1e4;
  auto fits = [&](int64_t j) {
    const double launch = c.Launch(static_cast<double>(j - 1));
    return launch < static_cast<double>(outside_ns) - kMarginNs &&
           launch <= static_cast<double>(limit_ns) - kMarginNs;
  };
  if (!fits(1)) return 0;
  return LastFitting(1, most, fits);
}

OnlineEngine::Cycle OnlineEngine::CycleOf(const StretchSlot& z, int64_t t) const {
  Cycle c;
  c.p0 = static_cast<double>(z.processed);
  c.first_ns = static_cast<double>(t);
  c.schedule_ns = static_cast<double>(z.schedule_ns);
  c.last_launch_ns = static_cast<double>(last_launch_ns_);
  c.overlap = config_.overlap_schedule;
  c.d_fixed = static_cast<double>(z.return_ns);
  for (int64_t hop : z.hop_ns) c.d_fixed += static_cast<double>(hop);
  for (const DecodeGrowth& g : z.stages) {
    c.d_fixed += static_cast<double>(g.at_start.total_ns() - g.at_start.compute_ns) +
                 g.fixed_compute_ns + g.group_ns.front();
    c.d_growth += g.group_growth_ns.front();
  }
  return c;
}

// Plays `cycles` cycles of the slot (CyclesToJump) from its result at `t`;
// returns the time of the result that follows them.
int64_t OnlineEngine::JumpCycles(std::vector<StretchSlot>& slots, int slot, int64_t t,
                                 int64_t cycles) {
  StretchSlot& z = slots[slot];
  const Cycle c = CycleOf(z, t);
  const double j = static_cast<double>(cycles);
  // Stage compute over launches k = p0 + 1 .. p0 + cycles.
  const double k_sum = j * c.p0 + j * (j + 1) / 2;
  for (size_t st = 0; st < z.stages.size(); ++st) {
    const DecodeGrowth& g = z.stages[st];
    z.compute_ns[st] += RoundToInt64(j * (g.fixed_compute_ns + g.group_ns.front()) +
                                     k_sum * g.group_growth_ns.front());
  }
  const int64_t last_launch = RoundToInt64(c.Launch(j - 1));
  const int64_t last_result = RoundToInt64(c.Result(j - 1));
  // Every token's time, when wanted, from the same closed form: hearing
  // them leaves the jump, and so the engine's course, as it is without
  // them (a run's samples and a prediction of the same point then agree).
  if (options_.token_times)
    for (int64_t i = 0; i < cycles; ++i)
      HearStretchTokens(z, z.processed + i + 1,
                        RoundToInt64(c.Result(static_cast<double>(i))) + cost_.StreamOutNs());
  z.processed += cycles;
  // The last launch's stages, from free GPUs (each cycle waits for its result).
  for (int64_t& free_ns : gpu_free_ns_) free_ns = std::min(free_ns, last_launch);
  const int64_t end = StageEnds(z, z.processed, last_launch, nullptr);
  slots_[slot].outputs_ready_ns = end + z.return_ns;
  slots_[slot].active = true;
  z.launched += cycles;
  z.last_launch_k = z.processed;
  z.last_client_ns = last_result + cost_.StreamOutNs();
  last_launch_ns_ = last_launch;
  counters_.micro_batches += cycles;
  counters_.decode_batches += cycles;
  counters_.stretched_batches += cycles;
  const int num_slots = config_.num_slots;
  mb_counter_ += cycles * num_slots;
  empty_passes_ = num_slots - 1;
  for (StretchSlot& other : slots) other.visited = true;
  now_ = num_slots == 1 ? last_result : last_launch;
  return std::max(last_launch, slots_[slot].outputs_ready_ns);
}

void OnlineEngine::HearStretchTokens(const StretchSlot& z) {
  HearStretchTokens(z, z.processed, z.last_client_ns);
}

void OnlineEngine::HearStretchTokens(const StretchSlot& z, int64_t processed, int64_t client_ns) {
  for (size_t i = 0; i < z.tickets.size(); ++i)
    if (z.tickets[i] >= 0)
      listener_->OnTokens(z.tickets[i], z.output_tokens[i] + processed, client_ns);
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
      // Only attention grows along a stretch (DecodeGrowth): every launch
      // pays the first's other classes, and attention the rest.
      sum.gemm_ns += first.gemm_ns * z.launched;
      sum.moe_ns += first.moe_ns * z.launched;
      sum.attention_ns += std::max<int64_t>(
          z.compute_ns[st] - (first.compute_ns - first.attention_ns) * z.launched, 0);
      sum.comm_ns += first.comm_ns * z.launched;
      sum.transfer_ns += first.transfer_ns * z.launched;
      sum.overhead_ns += first.overhead_ns * z.launched;
      sum.allreduce_calls += first.allreduce_calls * z.launched;
      sum.micro_batches += z.launched;
    }
    scheduler_.AdvanceDecode(s, z.launched, z.processed, z.visited);
    if (z.launched > 0) NoteBatchShape(z.batch);
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
