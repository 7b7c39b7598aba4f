// A pipeline's decode rounds in closed form. While every slot of a decode
// stretch runs, the stretch repeats one round: each slot in turn applies
// its result, launches its next step through the stages, and the next slot
// waits for its own result. A round is a fixed sequence of max() and +
// over the state (the stages' free times, the slots' result times, the
// host's last launch), and each step's stage time is affine in the slot's
// context k (DecodeGrowth). While every max() keeps its winner, each state
// time is a quadratic in the round number and each max()'s margin (winner
// minus loser) is too: the round's increments grow by the growth of the
// path that wins. So: play a few rounds unrounded, check that the state and
// the margins are quadratics, find the last round before a margin changes
// sign (or a request finishes, or an outside event comes due), and jump
// there. The jump drops the per-step rounding of the stage times (within
// half a ns per stage and step of the step-by-step times).

#include <algorithm>
#include <array>
#include <cmath>

#include "sim/decode_stretch_parts.h"
#include "sim/online_engine.h"
#include "util/round.h"

namespace ppsearch::sim {
namespace {

// Rounds played unrounded before a jump: the state after kFitRounds
// rounds from the first fitted one, and the margins of all of them but the
// last, must be quadratics. The first fitted round is 2 (rounds 0 and 1
// still read the stretch's rounded times), or later while the fit fails,
// up to kLastFirstFitRound: a pipeline often needs a few rounds to settle
// into its pattern (a max() changes winner once, or the ns the stretch's
// start times were rounded to still ripple through), and each round played
// here is one less played step by step before the next try.
constexpr int kFitRounds = 5;
constexpr int kFirstFitRound = 2;
constexpr int kLastFirstFitRound = 6;
constexpr int kMostTrialRounds = kLastFirstFitRound + kFitRounds - 1;
// Fewer rounds than this are played step by step (more than the trial plays).
constexpr int64_t kMinJumpRounds = 12;
static_assert(kMinJumpRounds > kMostTrialRounds);
// Margins within this of zero are ties; a margin may cross zero by the
// slack (the max() then differs by under a ns).
constexpr double kTieNs = 1e-3;
constexpr double kSlackNs = 0.5;
// Agreement of a second difference with the next (doubles at ~1e10 ns).
constexpr double kSecondDiffNs = 1e-3;
// The last event of a jump stays this far before an outside event.
constexpr double kEventMarginNs = 1e4;

// Quadratic through the values at rounds 1, 2, 3 (v1, v2, v3), at round r.
double Quadratic(double v1, double v2, double v3, double r) {
  const double d = v2 - v1, c = v3 - 2 * v2 + v1;
  return v1 + (r - 1) * d + (r - 1) * (r - 2) / 2 * c;
}

// Whether the values at rounds 1..n (n >= 4) lie on one quadratic.
bool IsQuadratic(const double* at, size_t n) {
  for (size_t r = 3; r < n; ++r) {
    const double predicted = Quadratic(at[0], at[1], at[2], static_cast<double>(r + 1));
    if (std::abs(predicted - at[r]) > kSecondDiffNs + std::abs(at[r]) * 1e-12) return false;
  }
  return true;
}

// The least of the quadratic through (1, v1), (2, v2), (3, v3) over [1, r].
double LeastUpTo(double v1, double v2, double v3, double r) {
  double least = std::min(Quadratic(v1, v2, v3, 1), Quadratic(v1, v2, v3, r));
  const double c = v3 - 2 * v2 + v1;
  if (c > 0) {  // convex: the vertex may be inside
    const double vertex = 1.5 - (v2 - v1) / c;
    if (vertex > 1 && vertex < r) least = std::min(least, Quadratic(v1, v2, v3, vertex));
  }
  return least;
}

// A trial's state variable `v` after `n` rounds: as the trial played it
// before the first fitted round, on the quadratic through the fitted
// rounds after it (its argument counts from 1 at first_fit).
double StateAfter(const std::vector<std::vector<double>>& state, int first_fit, int64_t n,
                  size_t v) {
  if (n < first_fit) return state[static_cast<size_t>(n)][v];
  return Quadratic(state[first_fit][v], state[first_fit + 1][v], state[first_fit + 2][v],
                   static_cast<double>(n - first_fit + 1));
}

// The running slot whose result a round from `first` applies last.
template <typename Slots>
int LastRunning(const Slots& slots, int first) {
  const int n = static_cast<int>(slots.size());
  for (int i = n - 1; i > 0; --i)
    if (slots[(first + i) % n].runs()) return (first + i) % n;
  return first;
}

}  // namespace

// One round from `first`'s result at state[0]: every slot, from `first` on,
// applies its result, launches step k = processed + round + 1 and hands over
// to the next slot's result. `state`: [t, last launch, free per stage,
// outputs ready per slot, result time per slot]. Each max()'s margin is
// appended to `margins`.
void OnlineEngine::PlayRound(const std::vector<StretchSlot>& slots, int first, int64_t round,
                             std::vector<double>& state, std::vector<double>* margins) const {
  const int num_slots = config_.num_slots;
  const int stages = cost_.num_stages();
  double& t = state[0];
  double& last_launch = state[1];
  double* free = &state[2];
  double* ready = free + stages;
  double* heard = ready + num_slots;
  auto pick = [margins](double a, double b) {
    margins->push_back(a - b);
    return std::max(a, b);
  };
  for (int i = 0; i < num_slots; ++i) {
    const int s = (first + i) % num_slots;
    const StretchSlot& z = slots[s];
    if (!z.runs()) continue;  // an empty slot passes at the time it is reached
    heard[s] = t;
    const double k = static_cast<double>(z.processed + round + 1);
    const double sched = static_cast<double>(z.schedule_ns);
    const double launch = config_.overlap_schedule ? pick(t, last_launch + sched) : t + sched;
    last_launch = launch;
    double arrive = launch, end = launch;
    for (int st = 0; st < stages; ++st) {
      const DecodeGrowth& g = z.stages[st];
      double most = g.group_ns[0] + k * g.group_growth_ns[0];
      for (size_t a = 1; a < g.group_ns.size(); ++a)
        most = pick(most, g.group_ns[a] + k * g.group_growth_ns[a]);
      const double start = pick(free[st], arrive);
      end = start + static_cast<double>(g.at_start.total_ns() - g.at_start.compute_ns) +
            g.fixed_compute_ns + most;
      free[st] = end;
      if (st + 1 < stages) {
        arrive = pick(end, free[st + 1]) + static_cast<double>(z.hop_ns[st]);
        free[st] = arrive;
      }
    }
    ready[s] = end + static_cast<double>(z.return_ns);
    int next = (s + 1) % num_slots;  // the next running slot (`first` runs)
    while (!slots[next].runs()) next = (next + 1) % num_slots;
    t = pick(launch, ready[next]);
  }
}

int64_t OnlineEngine::RoundsToJump(const std::vector<StretchSlot>& slots, int slot, int64_t t,
                                   int64_t outside_ns, int64_t limit_ns,
                                   std::vector<double>* end_state) const {
  const int num_slots = config_.num_slots;
  const int stages = cost_.num_stages();
  if (num_slots < 2) return 0;
  if (mb_counter_ % num_slots != slot) return 0;
  int64_t most = INT64_MAX;  // rounds before a result would finish a request
  int running = 0;
  for (int s = 0; s < num_slots; ++s) {
    const StretchSlot& z = slots[s];
    if (z.decodes_alone) return 0;
    if (!z.runs()) continue;
    if (s != slot && !slots_[s].active) return 0;
    most = std::min(most, z.results_left - z.processed);
    ++running;
  }
  if (running < 2 || most < kMinJumpRounds) return 0;
  // A round lasts about from the slot's previous result to this one: an
  // outside event due sooner than the fewest rounds a jump takes leaves no
  // jump, without trial rounds.
  const StretchSlot& first = slots[slot];
  if (first.processed > 0) {
    const double round_ns = static_cast<double>(t - (first.last_client_ns - cost_.StreamOutNs()));
    const double room_ns = static_cast<double>(std::min(outside_ns, limit_ns)) -
                           static_cast<double>(t) - kEventMarginNs;
    if (room_ns < static_cast<double>(kMinJumpRounds) * round_ns) return 0;
  }

  // Trial rounds from the stretch's state (in storage the engine keeps:
  // a pipeline tries often), played as the fit asks for them.
  RoundTrial& trial = round_trial_;
  std::vector<std::vector<double>>& state = trial.state;
  std::vector<std::vector<double>>& margins = trial.margins;
  state.resize(kMostTrialRounds + 1);
  margins.resize(kMostTrialRounds);
  state[0].assign({static_cast<double>(t), static_cast<double>(last_launch_ns_)});
  for (int64_t f : gpu_free_ns_) state[0].push_back(static_cast<double>(f));
  for (const InFlight& f : slots_) state[0].push_back(static_cast<double>(f.outputs_ready_ns));
  state[0].resize(state[0].size() + static_cast<size_t>(num_slots), 0.0);
  int played = 0;
  auto play_to = [&](int rounds) {
    for (; played < rounds; ++played) {
      state[played + 1] = state[played];
      margins[played].clear();
      PlayRound(slots, slot, played, state[played + 1], &margins[played]);
    }
  };
  const size_t n_vars = state[0].size();
  std::vector<RoundTrial::Margin>& kept = trial.kept;
  // Whether rounds from `first` on fit: the state and the margins on
  // quadratics, margins keeping their sign (or staying ties); fills `kept`.
  auto fit_from = [&](int first) {
    play_to(first + kFitRounds - 1);
    std::array<double, kFitRounds> at{};
    for (size_t v = 0; v < n_vars; ++v) {
      for (int r = 0; r < kFitRounds; ++r) at[r] = state[first + r][v];
      if (!IsQuadratic(at.data(), kFitRounds)) return false;
    }
    kept.clear();
    for (size_t m = 0; m < margins[first].size(); ++m) {
      int positive = 0, negative = 0;
      for (int r = 0; r < kFitRounds - 1; ++r) {
        if (margins[first + r].size() != margins[first].size()) return false;
        at[r] = margins[first + r][m];
        positive += at[r] > kTieNs;
        negative += at[r] < -kTieNs;
      }
      if (!IsQuadratic(at.data(), kFitRounds - 1)) return false;
      if (positive > 0 && negative > 0) return false;
      const double sign = positive > 0 ? 1 : negative > 0 ? -1 : 0;
      if (sign != 0 && positive + negative != kFitRounds - 1) return false;
      kept.push_back({at[0], at[1], at[2], sign});
    }
    return true;
  };
  int first_fit = kFirstFitRound;
  while (!fit_from(first_fit))
    if (++first_fit > kLastFirstFitRound) return 0;
  trial.first_fit = first_fit;
  // The quadratics' argument counts from 1 at first_fit (StateAfter); a
  // jump's rounds are all past the fitted ones.
  const double shift = first_fit - 1;
  auto state_after = [&](int64_t n, size_t v) { return StateAfter(state, first_fit, n, v); };
  const size_t last_heard = 2 + static_cast<size_t>(stages) + static_cast<size_t>(num_slots) +
                            static_cast<size_t>(LastRunning(slots, slot));
  auto fits = [&](int64_t n) {
    // Rounds 0..n-1 are played; margins of rounds first_fit..n-1 keep
    // their winner.
    const double rounds = static_cast<double>(n - 1) - shift;
    for (const RoundTrial::Margin& m : kept) {
      if (m.sign == 0) {  // a tie stays one: the max() is either side
        if (LeastUpTo(m.v1, m.v2, m.v3, rounds) < -kSlackNs ||
            LeastUpTo(-m.v1, -m.v2, -m.v3, rounds) < -kSlackNs)
          return false;
        continue;
      }
      if (LeastUpTo(m.sign * m.v1, m.sign * m.v2, m.sign * m.v3, rounds) < -kSlackNs) return false;
    }
    const double last_event = state_after(n, last_heard);
    return last_event < static_cast<double>(outside_ns) - kEventMarginNs &&
           last_event <= static_cast<double>(limit_ns) - kEventMarginNs;
  };
  if (!fits(kMinJumpRounds)) return 0;
  const int64_t rounds = LastFitting(kMinJumpRounds, most, fits);
  end_state->resize(n_vars);
  for (size_t v = 0; v < n_vars; ++v) (*end_state)[v] = state_after(rounds, v);
  return rounds;
}

// Every token's time of a jump of `rounds` rounds from `slot`'s result:
// round r applies each running slot's result at the time the trial played
// (before the first fitted round) or on the fitted quadratic (after it),
// as RoundsToJump's end state does for the last.
void OnlineEngine::HearRounds(const std::vector<StretchSlot>& slots, int slot, int64_t rounds) {
  const int num_slots = config_.num_slots;
  const std::vector<std::vector<double>>& state = round_trial_.state;
  const int first_fit = round_trial_.first_fit;
  const size_t heard = 2 + static_cast<size_t>(cost_.num_stages()) + static_cast<size_t>(num_slots);
  const int64_t stream_out_ns = cost_.StreamOutNs();
  for (int64_t r = 0; r < rounds; ++r)
    for (int i = 0; i < num_slots; ++i) {
      const int s = (slot + i) % num_slots;
      const StretchSlot& z = slots[s];
      if (!z.runs()) continue;
      const double at = StateAfter(state, first_fit, r + 1, heard + static_cast<size_t>(s));
      HearStretchTokens(z, z.processed + r + 1, RoundToInt64(at) + stream_out_ns);
    }
}

int64_t OnlineEngine::JumpRounds(std::vector<StretchSlot>& slots, int slot, int64_t rounds,
                                 const std::vector<double>& end_state) {
  const int num_slots = config_.num_slots;
  const int stages = cost_.num_stages();
  const double* free = &end_state[2];
  const double* ready = free + stages;
  const double* heard = ready + num_slots;
  const double n = static_cast<double>(rounds);
  if (options_.token_times) HearRounds(slots, slot, rounds);
  int64_t batches = 0;
  for (int s = 0; s < num_slots; ++s) {
    StretchSlot& z = slots[s];
    z.visited = true;
    if (!z.runs()) continue;
    batches += rounds;
    // Stage compute over launches k = p + 1 .. p + rounds, on each stage's
    // winning line: the margins kept it from the first fitted round on; a
    // line that wins only before it counts the rounds it won.
    const double p = static_cast<double>(z.processed);
    const double k_sum = n * p + n * (n + 1) / 2;
    const int first_fit = round_trial_.first_fit;
    for (int st = 0; st < stages; ++st) {
      const DecodeGrowth& g = z.stages[st];
      auto winner = [&g](double k) {
        size_t line = 0;
        for (size_t a = 1; a < g.group_ns.size(); ++a)
          if (g.group_ns[a] + k * g.group_growth_ns[a] >
              g.group_ns[line] + k * g.group_growth_ns[line])
            line = a;
        return line;
      };
      auto step_ns = [&g](size_t line, double k) {
        return g.fixed_compute_ns + g.group_ns[line] + k * g.group_growth_ns[line];
      };
      const size_t line = winner(p + first_fit + 1);
      if (winner(p + 1) == line) {
        z.compute_ns[st] += RoundToInt64(n * (g.fixed_compute_ns + g.group_ns[line]) +
                                         k_sum * g.group_growth_ns[line]);
        continue;
      }
      double sum = 0;
      for (int r = 0; r < first_fit; ++r) sum += step_ns(winner(p + r + 1), p + r + 1);
      const double m = n - first_fit;
      sum += m * (g.fixed_compute_ns + g.group_ns[line]) +
             (m * (p + first_fit) + m * (m + 1) / 2) * g.group_growth_ns[line];
      z.compute_ns[st] += RoundToInt64(sum);
    }
    z.processed += rounds;
    z.launched += rounds;
    z.last_launch_k = z.processed;
    z.last_client_ns = RoundToInt64(heard[s]) + cost_.StreamOutNs();
    slots_[s].outputs_ready_ns = RoundToInt64(ready[s]);
    slots_[s].active = true;
  }
  for (int st = 0; st < stages; ++st) gpu_free_ns_[st] = RoundToInt64(free[st]);
  last_launch_ns_ = RoundToInt64(end_state[1]);
  counters_.micro_batches += batches;
  counters_.decode_batches += batches;
  counters_.stretched_batches += batches;
  counters_.round_batches += batches;
  if (round_trial_.first_fit > kFirstFitRound) ++counters_.late_fit_jumps;
  mb_counter_ += rounds * num_slots;  // the empty slots' passes too
  now_ = RoundToInt64(heard[LastRunning(slots, slot)]);
  return RoundToInt64(end_state[0]);
}

}  // namespace ppsearch::sim
