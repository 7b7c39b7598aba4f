#pragma once
// GPUs whose tensor rate is held down under sustained load but runs faster
// for a few milliseconds after the tensor cores have been idle (the RTX
// 6000D: data/hardware/rtx-6000d.toml, [tensor_burst]). The faster rate is a
// budget, not a gift: tensor work at the burst rate drains it, idle time
// refills it, and spending it all is paid back with a stretch below the
// sustained rate. Between two TP collectives a rank's GEMMs form one compute
// phase; the collective before it is the idle that refilled it.

#include <vector>

namespace ppsearch::cost {

// The budget's parameters, in the cost model's units (rates as ratios to the
// sustained rate, times in ns). hardware::HardwareProfile's [tensor_burst]
// gives them; src/probe measures them.
struct BurstBudget {
  double window_ns = 0;     // the full budget: this long at the burst rate
  double payback_ns = 0;    // how long the card runs slower once a full budget is spent
  double refill_ratio = 1;  // budget regained per ns of tensor idle
};

// Where a card is in its budget: `credit_ns` of burst left, or `debt_ns` of
// payback still to run (never both). A card that idled long starts full.
// `spent_ns`: burst run since the budget was last full or last ran dry;
// running dry costs payback_ns x spent / window (the whole payback for a
// whole window spent, as measured; a sliver refilled and spent costs a
// sliver of it).
struct BudgetState {
  double credit_ns = 0;
  double debt_ns = 0;
  double spent_ns = 0;
};

// One kernel's time at each rate: equal for a kernel that memory bandwidth
// bounds, the sustained time scaled by the rate ratio for a compute-bound one.
struct KernelRates {
  double sustained_ns = 0;
  double burst_ns = 0;    // never above sustained_ns
  double payback_ns = 0;  // never below sustained_ns
};

// The state after `idle_ns` without tensor work: the payback runs out first
// (it lasts its time whether the card works or idles), then the window
// refills at refill_ratio, up to the full budget (which forgets what was
// spent before it).
BudgetState AfterIdle(const BudgetState& state, double idle_ns, const BurstBudget& budget);

// Runs one compute phase's kernels in order from `state` and returns each
// kernel's time; `state` becomes the state after the phase. While in debt a
// kernel runs at the payback rate, else while credit lasts at the burst rate
// (spending credit as it goes, and when the credit runs out inside the
// phase its payback starts there), else at the sustained rate. A kernel a
// boundary falls inside runs each share of its work at its own rate.
std::vector<double> RunPhase(const std::vector<KernelRates>& kernels, const BurstBudget& budget,
                             BudgetState* state);

// One compute phase of a serving step: the idle before it (the collective
// it follows), then its kernels in order.
struct BurstPhase {
  double idle_before_ns = 0;
  std::vector<KernelRates> kernels;
};

// Each phase's kernel times in a step that a serving stage runs over and
// over, in its steady state: each step starts in the state the step before
// it left (within a nanosecond of budget; the step's first phase follows
// the last one's collective). A card that idled long starts with a full
// budget and most stages settle within a step or two of it; one whose steps
// each drain a large budget a little would take too many steps to run it
// dry, and is costed where that drain bottoms out: the cycle reached from an
// empty budget. A cycle longer than a step (a payback spanning steps) does
// not settle, and the last step tried stands.
std::vector<std::vector<double>> SteadyStepNs(const std::vector<BurstPhase>& phases,
                                              const BurstBudget& budget);

}  // namespace ppsearch::cost
