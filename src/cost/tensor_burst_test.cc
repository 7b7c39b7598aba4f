// The tensor budget by hand: spent, refilled and paid back.

#include "cost/tensor_burst.h"

#include <gtest/gtest.h>

namespace ppsearch::cost {
namespace {

// Compute-bound kernels: twice as fast in the burst, half again as slow in
// the payback.
KernelRates Compute(double sustained) { return {sustained, sustained / 2, sustained * 1.5}; }

BurstBudget Budget(double window, double payback = 0, double refill = 1) {
  BurstBudget b;
  b.window_ns = window;
  b.payback_ns = payback;
  b.refill_ratio = refill;
  return b;
}

TEST(RunPhase, CreditCoversTheFirstKernelsThenSplitsOne) {
  // 3 ns of credit, no payback. Kernel 0: 2 ns at the burst rate, 1 ns left.
  // Kernel 1: burst 2 ns, so half its work fits: 1 + 0.5 x 4 = 3 ns.
  // Kernel 2: sustained, 6 ns. Sum 11 ns against 14 ns sustained.
  BudgetState state{3, 0};
  const std::vector<double> out = RunPhase({Compute(4), Compute(4), Compute(6)}, Budget(3), &state);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_DOUBLE_EQ(out[0], 2);
  EXPECT_DOUBLE_EQ(out[1], 3);
  EXPECT_DOUBLE_EQ(out[2], 6);
  EXPECT_DOUBLE_EQ(state.credit_ns, 0);
  EXPECT_DOUBLE_EQ(state.debt_ns, 0);
}

TEST(RunPhase, NoCreditIsTheSustainedTime) {
  BudgetState state;
  const std::vector<double> out = RunPhase({Compute(4), Compute(5)}, Budget(3), &state);
  EXPECT_DOUBLE_EQ(out[0], 4);
  EXPECT_DOUBLE_EQ(out[1], 5);
}

TEST(RunPhase, CreditLongerThanThePhaseRunsItAllAtTheBurstRateAndKeepsTheRest) {
  BudgetState state{100, 0};
  const std::vector<double> out = RunPhase({Compute(4), Compute(5)}, Budget(100, 50), &state);
  EXPECT_DOUBLE_EQ(out[0] + out[1], 4.5);
  EXPECT_DOUBLE_EQ(state.credit_ns, 95.5);
  EXPECT_DOUBLE_EQ(state.debt_ns, 0) << "a budget not spent is not paid back";
}

TEST(RunPhase, AMemoryBoundKernelSpendsCreditWithoutGain) {
  // Kernel 0 is as fast at any rate (bandwidth-bound): it takes 3 of the 4
  // ns of credit; kernel 1 gets 1 ns of burst: 1 + (1 - 1/2) x 4 = 3 ns.
  BudgetState state{4, 0};
  const std::vector<double> out = RunPhase({{3, 3, 3}, Compute(4)}, Budget(4), &state);
  EXPECT_DOUBLE_EQ(out[0], 3);
  EXPECT_DOUBLE_EQ(out[1], 3);
}

TEST(RunPhase, SpendingTheBudgetStartsThePaybackInsideTheSameKernel) {
  // 1 ns of credit does half of a 4 ns kernel (2 ns at the burst rate); the
  // payback (2 ns long, the kernel 6 ns at its rate) then does a third, and
  // the last sixth runs sustained: 1 + 2 + 4/6 ns.
  BudgetState state{1, 0};
  const std::vector<double> out = RunPhase({Compute(4)}, Budget(1, 2), &state);
  EXPECT_NEAR(out[0], 1 + 2 + 4.0 / 6, 1e-12);
  EXPECT_DOUBLE_EQ(state.debt_ns, 0);
  EXPECT_DOUBLE_EQ(state.credit_ns, 0);
}

TEST(RunPhase, RunningDryAfterASliverCostsASliverOfThePayback) {
  // A 100 ns window whose whole spending costs 1,000 ns of payback. From 10
  // ns of credit (nothing else spent since it was last full) a 100 ns kernel
  // (50 at the burst rate, 150 in payback) runs 10 ns at the burst rate (a
  // fifth of its work) and runs dry: 10/100 of the payback, 100 ns, does
  // two thirds of it, and the last 2/15 runs sustained: 10 + 100 + 40/3.
  BudgetState state{10, 0, 0};
  const std::vector<double> out = RunPhase({Compute(100)}, Budget(100, 1000), &state);
  EXPECT_NEAR(out[0], 10 + 100 + 40.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(state.debt_ns, 0);
  EXPECT_DOUBLE_EQ(state.spent_ns, 0) << "running dry starts the count again";
}

TEST(RunPhase, ADebtSlowsTheNextPhaseUntilItIsRunOut) {
  BudgetState state{0, 3};
  const std::vector<double> out = RunPhase({Compute(4), Compute(4)}, Budget(8, 3), &state);
  // 3 ns of payback do half of kernel 0 (6 ns whole), the rest sustained.
  EXPECT_DOUBLE_EQ(out[0], 3 + 2);
  EXPECT_DOUBLE_EQ(out[1], 4) << "credit comes back only through idle";
}

TEST(AfterIdle, TheDebtRunsOutFirstThenTheWindowRefillsAtItsRatio) {
  const BurstBudget budget = Budget(10, 20, 0.5);
  BudgetState s = AfterIdle({0, 6}, 4, budget);
  EXPECT_DOUBLE_EQ(s.debt_ns, 2);
  EXPECT_DOUBLE_EQ(s.credit_ns, 0);
  s = AfterIdle({0, 6}, 10, budget);
  EXPECT_DOUBLE_EQ(s.debt_ns, 0);
  EXPECT_DOUBLE_EQ(s.credit_ns, 2) << "4 ns idle after the debt, at 0.5";
  s = AfterIdle({7, 0}, 100, budget);
  EXPECT_DOUBLE_EQ(s.credit_ns, 10) << "never above the full window";
}

TEST(AfterIdle, AFullBudgetForgetsWhatWasSpentBeforeIt) {
  EXPECT_DOUBLE_EQ(AfterIdle({5, 0, 30}, 2, Budget(10)).spent_ns, 30);
  EXPECT_DOUBLE_EQ(AfterIdle({5, 0, 30}, 5, Budget(10)).spent_ns, 0);
}

TEST(SteadyStepNs, AStageThatSettlesBelowFullKeepsItsBurst) {
  // Window 100 (payback 3,000 at half the rate). Phase A follows 50 ns of
  // idle and could spend 60; phase B follows 20 and could spend 5. From full
  // the budget settles at 55 after B and never runs dry: every step runs
  // both at the burst rate (60 and 5), however long a run dry would cost.
  const std::vector<BurstPhase> phases = {{50, {Compute(120)}}, {20, {Compute(10)}}};
  const auto t = SteadyStepNs(phases, Budget(100, 3000));
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0][0], 60);
  EXPECT_DOUBLE_EQ(t[1][0], 5);
}

TEST(SteadyStepNs, ALargeBudgetDrainedALittleEachStepIsCostedDry) {
  // A 1 ms window; each step spends 20 ns of burst and idles 10: it would
  // take 100,000 steps to run dry, after which each step bursts the 10 ns
  // its idle refills (a quarter of the kernel's work) and runs the rest
  // sustained: 10 + 0.5 x 40 = 30 ns.
  const auto t = SteadyStepNs({{10, {Compute(40)}}}, Budget(1e6));
  EXPECT_DOUBLE_EQ(t[0][0], 30);
}

TEST(AfterIdle, ARatioOfZeroNeverRefills) {
  EXPECT_DOUBLE_EQ(AfterIdle({1, 0}, 1e9, Budget(10, 0, 0)).credit_ns, 1);
}

}  // namespace
}  // namespace ppsearch::cost
