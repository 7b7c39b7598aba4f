#include "decide/objective.h"

#include <gtest/gtest.h>

namespace ppsearch::decide {
namespace {

using K = Objective::Kind;

TEST(Objective, ParsesEveryNameItListsAndNothingElse) {
  EXPECT_EQ(Objective::Names(), (std::vector<std::string>{"input_tps", "ttft_p50", "output_tps",
                                                          "output_tps_per_gpu", "goodput"}));
  for (const std::string& name : Objective::Names()) {
    const std::optional<Objective> o = Objective::FromName(name);
    ASSERT_TRUE(o) << name;
    EXPECT_EQ(o->name(), name);
  }
  EXPECT_FALSE(Objective::FromName("throughput"));
  EXPECT_FALSE(Objective::FromName("TTFT_P50"));
  EXPECT_EQ(Objective(), Objective(K::kInputTps));  // the spec's default
}

TEST(Objective, KnowsItsDirectionAndLabel) {
  EXPECT_TRUE(Objective(K::kTtftP50).lower_is_better());
  EXPECT_TRUE(Objective(K::kTtftP50).Beats(0.5, 0.6));
  EXPECT_FALSE(Objective(K::kTtftP50).Beats(0.6, 0.5));
  for (K k : {K::kInputTps, K::kOutputTps, K::kOutputTpsPerGpu, K::kGoodput}) {
    EXPECT_FALSE(Objective(k).lower_is_better());
    EXPECT_TRUE(Objective(k).Beats(2, 1));
    EXPECT_FALSE(Objective(k).Beats(1, 1));  // a tie does not beat
  }
  EXPECT_EQ(Objective(K::kInputTps).label(), "input TPS");
  EXPECT_EQ(Objective(K::kTtftP50).label(), "TTFT p50");
  EXPECT_EQ(Objective(K::kOutputTpsPerGpu).label(), "output TPS per GPU");
  EXPECT_EQ(Objective(K::kGoodput).label(), "goodput");
}

// Intervals: everything the ensemble draws (goodput counts requests in one
// sample); the adaptive run: what every draw carries, input TPS and TTFT.
TEST(Objective, KnowsWhereItHasAnIntervalAndWhetherAnAdaptiveRunCanUseIt) {
  EXPECT_TRUE(Objective(K::kOutputTpsPerGpu).has_interval());
  EXPECT_FALSE(Objective(K::kGoodput).has_interval());
  EXPECT_TRUE(Objective(K::kInputTps).adaptive());
  EXPECT_TRUE(Objective(K::kTtftP50).adaptive());
  EXPECT_FALSE(Objective(K::kOutputTps).adaptive());
  EXPECT_FALSE(Objective(K::kGoodput).adaptive());
  EXPECT_EQ(Objective::AdaptiveChoices(), "input_tps or ttft_p50");
  EXPECT_EQ(Objective(K::kTtftP50).Drawn(), Objective(K::kTtftP50));
  EXPECT_EQ(Objective(K::kGoodput).Drawn(), Objective(K::kInputTps));
  EXPECT_TRUE(Objective(K::kGoodput).may_be_zero());
  EXPECT_FALSE(Objective(K::kOutputTps).may_be_zero());
  for (K k : {K::kInputTps, K::kOutputTps, K::kOutputTpsPerGpu})
    EXPECT_TRUE(Objective(k).token_throughput()) << Objective(k).name();
  for (K k : {K::kTtftP50, K::kGoodput})
    EXPECT_FALSE(Objective(k).token_throughput()) << Objective(k).name();
}

TEST(Objective, ReadsItsOwnFigure) {
  const ObjectiveFigures f{1000, 0.25, 300, 37.5, 4};
  EXPECT_EQ(Objective(K::kInputTps).Of(f), 1000);
  EXPECT_EQ(Objective(K::kTtftP50).Of(f), 0.25);
  EXPECT_EQ(Objective(K::kOutputTps).Of(f), 300);
  EXPECT_EQ(Objective(K::kOutputTpsPerGpu).Of(f), 37.5);
  EXPECT_EQ(Objective(K::kGoodput).Of(f), 4);
  const ObjectiveFields<std::optional<int>> partial{1, 2, std::nullopt, std::nullopt, 5};
  EXPECT_EQ(Objective(K::kTtftP50).Of(partial), 2);
  EXPECT_FALSE(Objective(K::kOutputTps).Of(partial));
}

}  // namespace
}  // namespace ppsearch::decide
