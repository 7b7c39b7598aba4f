#include "adaptive/policy.h"

#include <gtest/gtest.h>

namespace ppsearch::adaptive {
namespace {

// A candidate at two load points: measured medians, or a prediction with a
// model-form sigma and no parameter ensemble.
CandidateState Measured(const std::string& id, double c8, double c16) {
  CandidateState c;
  c.id = id;
  c.label = id;
  c.gpus = 32;
  for (double v : {c8, c16}) {
    PointState p;
    p.central = v;
    p.measured = v;
    p.measured_sigma = 0.005;
    p.sample_s = 200;
    c.points.push_back(p);
  }
  return c;
}

CandidateState Predicted(const std::string& id, double c8, double c16, double sigma) {
  CandidateState c = Measured(id, c8, c16);
  for (PointState& p : c.points) {
    p.measured.reset();
    p.sigma = sigma;
  }
  return c;
}

Problem TwoPoints() {
  Problem pr;
  pr.load_points = {8, 16};
  pr.repeats = 3;
  pr.server_start_s = 600;
  return pr;
}

TEST(AdaptivePolicyTest, SettledWhenTheMeasuredTopTwoLeaveTheRestFarBehind) {
  Problem pr = TwoPoints();
  pr.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900),
                   Predicted("c", 500, 500, 0.05), Predicted("d", 400, 400, 0.05)};
  const Assessment a = Assess(pr);
  EXPECT_EQ(a.primary, 0);
  EXPECT_EQ(a.fallback, 1);
  EXPECT_LT(a.p_change, 0.01);
  EXPECT_TRUE(a.settled);
}

TEST(AdaptivePolicyTest, AnUnmeasuredRivalWithinItsModelErrorKeepsTheRunGoing) {
  Problem pr = TwoPoints();
  // c is predicted a little below a, with a 15% model error: it could well
  // be the best.
  pr.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900),
                   Predicted("c", 950, 950, 0.15), Predicted("d", 400, 400, 0.05)};
  const Assessment a = Assess(pr);
  EXPECT_GT(a.p_change, 0.2);
  EXPECT_FALSE(a.settled);
  const std::optional<Choice> next = ChooseNext(pr, a);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->candidate, 2) << next->reason;
  EXPECT_GT(next->value_of_information, 0.05) << next->reason;
  EXPECT_LT(next->p_wrong_expected_after, a.p_wrong);
}

TEST(AdaptivePolicyTest, TheSameModelErrorFarBelowTheTopTwoDoesNot) {
  Problem pr = TwoPoints();
  pr.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900),
                   Predicted("c", 500, 500, 0.15)};
  EXPECT_TRUE(Assess(pr).settled);
}

TEST(AdaptivePolicyTest, DrawsThatOverflowNeverSettleTheChoice) {
  // A model-form sigma of 1e5 sends every unmeasured draw to 0 or infinity:
  // a ranking of such draws is certainty about nothing.
  Problem pr = TwoPoints();
  pr.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900),
                   Predicted("c", 1500, 1500, 1e5), Predicted("d", 400, 400, 1e5)};
  const Assessment a = Assess(pr);
  EXPECT_EQ(a.degenerate_draws, pr.draws);
  EXPECT_FALSE(a.settled);
  const std::optional<Choice> next = ChooseNext(pr, a);
  ASSERT_TRUE(next.has_value());
  EXPECT_GE(next->candidate, 2) << next->reason;
  // Once measured, the same candidates settle.
  Problem measured = TwoPoints();
  measured.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900),
                         Measured("c", 500, 500), Measured("d", 400, 400)};
  const Assessment after = Assess(measured);
  EXPECT_EQ(after.degenerate_draws, 0);
  EXPECT_TRUE(after.settled);
}

TEST(AdaptivePolicyTest, NotSettledUntilTheEstimatedFallbackIsMeasuredEverywhere) {
  Problem pr = TwoPoints();
  CandidateState b = Measured("b", 900, 900);
  b.points[1].measured.reset();
  b.points[1].sigma = 0.05;
  pr.candidates = {Measured("a", 1000, 1000), b, Predicted("c", 300, 300, 0.05)};
  const Assessment a = Assess(pr);
  EXPECT_EQ(a.fallback, 1);
  EXPECT_FALSE(a.settled);
  const std::optional<Choice> next = ChooseNext(pr, a);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->candidate, 1);
  EXPECT_EQ(next->point, 1);
}

TEST(AdaptivePolicyTest, AMeasuredPointMovesTheLayoutsOtherPointsWithIt) {
  Problem pr = TwoPoints();
  // c's prediction is 1000 at both points, but at C=8 it measured 20% lower:
  // its C=16 is then believed lower too, within the within-layout miss.
  CandidateState c = Predicted("c", 1000, 1000, 0.2);
  c.points[0].measured = 800;
  pr.candidates = {Measured("a", 900, 900), c};
  pr.within_sigma = 0.03;
  const Assessment a = Assess(pr);
  EXPECT_EQ(a.primary, 0);
  EXPECT_GT(a.p_best[0], 0.95);
}

TEST(AdaptivePolicyTest, ExcludedCandidatesAreNeitherRankedNorChosen) {
  Problem pr = TwoPoints();
  CandidateState c = Predicted("c", 2000, 2000, 0.05);
  c.excluded = true;
  pr.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900), c};
  const Assessment a = Assess(pr);
  EXPECT_EQ(a.primary, 0);
  EXPECT_EQ(a.p_best[2], 0);
  EXPECT_TRUE(a.settled);
  EXPECT_FALSE(ChooseNext(pr, a).has_value());
}

TEST(AdaptivePolicyTest, LowerIsBetterRanksTheFastestFirst) {
  Problem pr = TwoPoints();
  pr.lower_is_better = true;
  pr.candidates = {Measured("slow", 10, 20), Measured("fast", 5, 10)};
  const Assessment a = Assess(pr);
  EXPECT_EQ(a.primary, 1);
  EXPECT_EQ(a.fallback, 0);
}

TEST(AdaptivePolicyTest, CostsCountServerStartsAsTheLifecycleRunsThem) {
  Problem pr = TwoPoints();
  pr.candidates = {Predicted("a", 1000, 1000, 0.1)};
  // 32 GPUs x (3 x 200 s + one 600 s start) = 10.67 GPU-hours.
  pr.reuse_server = true;
  bool start = false;
  EXPECT_NEAR(PointCost(pr, 0, 0, &start), 32 * 1200.0 / 3600, 1e-9);
  EXPECT_TRUE(start);
  pr.running = pr.candidates[0].id;
  EXPECT_NEAR(PointCost(pr, 0, 0, &start), 32 * 600.0 / 3600, 1e-9);
  EXPECT_FALSE(start);
  // Without reuse every sample starts its own server.
  pr.reuse_server = false;
  EXPECT_NEAR(PointCost(pr, 0, 0), 32 * (600.0 + 3 * 600) / 3600, 1e-9);
  // The full sweep: 2 points x 3 repeats x (200 s + 600 s start) on 32 GPUs.
  EXPECT_NEAR(FullSweepGpuHours(pr), 32 * 6 * 800.0 / 3600, 1e-9);
  pr.reuse_server = true;
  EXPECT_NEAR(FullSweepGpuHours(pr), 32 * (600 + 6 * 200.0) / 3600, 1e-9);
}

TEST(AdaptivePolicyTest, AtEqualInformationTheRunningServerIsCheaper) {
  Problem pr = TwoPoints();
  pr.reuse_server = true;
  // Two rivals predicted alike, as likely as each other to beat a; b's
  // server is up, so measuring b costs no start.
  pr.candidates = {Measured("a", 1000, 1000), Predicted("b", 980, 980, 0.1),
                   Predicted("c", 980, 980, 0.1)};
  pr.running = pr.candidates[1].id;
  const Assessment a = Assess(pr);
  const std::optional<Choice> next = ChooseNext(pr, a);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->candidate, 1) << next->reason;
  EXPECT_FALSE(next->server_start);
}

// The belief is the interval ensemble: a prediction whose central value is
// well behind but whose parameter members reach past the fallback keeps the
// run going even with no model-form term.
TEST(AdaptivePolicyTest, TheParameterEnsembleWidensAnUnmeasuredLayoutsBelief) {
  Problem pr = TwoPoints();
  CandidateState c = Predicted("c", 800, 800, 0);
  for (PointState& p : c.points) p.members = {700, 750, 800, 850, 950, 1050};
  pr.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900), c};
  const Assessment a = Assess(pr);
  EXPECT_GT(a.p_change, 0.2);  // 2 of 6 members put c above b
  EXPECT_FALSE(a.settled);
  const std::optional<Choice> next = ChooseNext(pr, a);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->candidate, 2);
  EXPECT_GT(next->value_of_information, 0.1) << next->reason;
  // The central value alone would have settled it.
  for (PointState& p : pr.candidates[2].points) p.members.clear();
  EXPECT_TRUE(Assess(pr).settled);
}

// The stop rule's threshold is the problem's ([decision] stop_probability):
// the same belief settles under a threshold above P(change), not under one
// below it.
TEST(AdaptivePolicyTest, TheStopThresholdDecidesWhetherARemoteRivalStillCounts) {
  Problem pr = TwoPoints();
  pr.candidates = {Measured("a", 1000, 1000), Measured("b", 900, 900),
                   Predicted("c", 820, 820, 0.05)};
  const Assessment a = Assess(pr);
  ASSERT_GT(a.p_change, 0.005);  // ln(900/820)/0.05 = 1.9 sigma: about 3%
  ASSERT_LT(a.p_change, 0.1);
  pr.stop_probability = a.p_change + 0.002;
  EXPECT_TRUE(Assess(pr).settled);
  pr.stop_probability = a.p_change - 0.002;
  EXPECT_FALSE(Assess(pr).settled);
}

// What a point costs decides between equally informative points; with a
// server that has to start for every sample the cheaper layout wins.
TEST(AdaptivePolicyTest, AtEqualInformationFewerGpusAreCheaper) {
  Problem pr = TwoPoints();
  pr.candidates = {Measured("a", 1000, 1000), Predicted("b", 980, 980, 0.1),
                   Predicted("c", 980, 980, 0.1)};
  pr.candidates[1].gpus = 64;
  const Assessment a = Assess(pr);
  const std::optional<Choice> next = ChooseNext(pr, a);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->candidate, 2) << next->reason;
  EXPECT_NEAR(next->cost_gpu_hours, PointCost(pr, 2, next->point), 1e-12);
}

TEST(AdaptivePolicyTest, TheSameSeedGivesTheSameAnswer) {
  Problem pr = TwoPoints();
  pr.candidates = {Measured("a", 1000, 1000), Predicted("b", 990, 950, 0.1),
                   Predicted("c", 970, 1010, 0.1)};
  const Assessment x = Assess(pr), y = Assess(pr);
  EXPECT_EQ(x.p_wrong, y.p_wrong);
  EXPECT_EQ(x.p_best, y.p_best);
  pr.seed = 2;
  EXPECT_NE(Assess(pr).p_best, x.p_best);
}

}  // namespace
}  // namespace ppsearch::adaptive
