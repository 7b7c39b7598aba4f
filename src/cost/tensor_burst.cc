#include "cost/tensor_burst.h"

#include <algorithm>
#include <cmath>

namespace ppsearch::cost {

BudgetState AfterIdle(const BudgetState& state, double idle_ns, const BurstBudget& budget) {
  BudgetState out = state;
  double idle = std::max(idle_ns, 0.0);
  const double repaid = std::min(out.debt_ns, idle);
  out.debt_ns -= repaid;
  idle -= repaid;
  if (out.debt_ns <= 0) {
    out.debt_ns = 0;
    const double full = std::max(budget.window_ns, 0.0);
    out.credit_ns = std::min(full, out.credit_ns + budget.refill_ratio * idle);
    if (out.credit_ns >= full) out.spent_ns = 0;
  }
  return out;
}

namespace {

// Runs the `*left` share of a kernel's work still to run, at `whole_ns` for
// the whole kernel, for at most `*budget_ns`; returns the time it ran and
// takes it off the budget (0 once the budget, rather than the work, ran out).
double RunWithin(double whole_ns, double* budget_ns, double* left) {
  const double need = *left * whole_ns;
  if (need < *budget_ns) {
    *budget_ns -= need;
    *left = 0;
    return need;
  }
  const double ran = *budget_ns;
  *left -= ran / whole_ns;
  *budget_ns = 0;
  return ran;
}

}  // namespace

std::vector<double> RunPhase(const std::vector<KernelRates>& kernels, const BurstBudget& budget,
                             BudgetState* state) {
  std::vector<double> out;
  out.reserve(kernels.size());
  for (const KernelRates& k : kernels) {
    const double sustained = k.sustained_ns;
    const double burst = std::min(k.burst_ns, sustained);
    const double payback = std::max(k.payback_ns, sustained);
    double left = 1;  // the share of the kernel's work still to run
    double ns = 0;
    // At most three stretches: debt, credit (which may end in new debt),
    // then that debt; each either finishes the kernel or ends its state.
    for (int stretch = 0; stretch < 4 && left > 0; ++stretch) {
      if (state->debt_ns > 0 && payback > 0) {
        ns += RunWithin(payback, &state->debt_ns, &left);
      } else if (state->credit_ns > 0 && burst > 0) {
        const double ran = RunWithin(burst, &state->credit_ns, &left);
        ns += ran;
        state->spent_ns += ran;
        if (state->credit_ns <= 0) {
          const double share = budget.window_ns > 0 ? state->spent_ns / budget.window_ns : 1.0;
          state->debt_ns = std::max(budget.payback_ns, 0.0) * std::min(share, 1.0);
          state->spent_ns = 0;
        }
      } else {
        ns += left * sustained;
        left = 0;
      }
    }
    out.push_back(ns);
  }
  return out;
}

std::vector<std::vector<double>> SteadyStepNs(const std::vector<BurstPhase>& phases,
                                              const BurstBudget& budget) {
  std::vector<std::vector<double>> out(phases.size());
  auto run_step = [&](BudgetState state) {
    for (size_t p = 0; p < phases.size(); ++p) {
      state = AfterIdle(state, phases[p].idle_before_ns, budget);
      out[p] = RunPhase(phases[p].kernels, budget, &state);
    }
    return state;
  };
  auto same = [](const BudgetState& a, const BudgetState& b) {
    return std::abs(a.credit_ns - b.credit_ns) < 1 && std::abs(a.debt_ns - b.debt_ns) < 1 &&
           std::abs(a.spent_ns - b.spent_ns) < 1;
  };
  constexpr int kMaxSteps = 8;
  auto settle = [&](BudgetState state) {
    for (int step = 0; step < kMaxSteps; ++step) {
      const BudgetState start = state;
      state = run_step(state);
      if (same(state, start)) return true;
    }
    return false;
  };
  if (!settle(BudgetState{std::max(budget.window_ns, 0.0), 0, 0})) settle(BudgetState{});
  return out;
}

}  // namespace ppsearch::cost
