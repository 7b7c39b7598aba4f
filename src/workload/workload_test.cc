// Seeded plans: output lengths fixed, uniform or from a lengths file, the
// same for the same seed; the lengths file's errors name file:line:column.

#include "workload/workload.h"

#include <gtest/gtest.h>

#include <set>

#include "workload/lengths_file.h"

namespace ppsearch::workload {
namespace {

WorkloadParams Base() {
  WorkloadParams p;
  p.num_requests = 200;
  p.input_tokens = 1000;
  p.output_tokens = 256;
  p.seed = 7;
  return p;
}

TEST(PlanRequests, FixedOutputLengthsByDefault) {
  for (const PlannedRequest& r : PlanRequests(Base())) {
    EXPECT_EQ(r.input_tokens, 1000);
    EXPECT_EQ(r.output_tokens, 256);
  }
}

TEST(PlanRequests, UniformOutputLengthsStayInRangeAndRepeatForTheSeed) {
  WorkloadParams p = Base();
  p.output_range_ratio = 0.5;
  const auto plan = PlanRequests(p);
  std::set<int64_t> seen;
  for (const PlannedRequest& r : plan) {
    EXPECT_GE(r.output_tokens, 128);
    EXPECT_LE(r.output_tokens, 256);
    EXPECT_EQ(r.input_tokens, 1000);
    seen.insert(r.output_tokens);
  }
  EXPECT_GT(seen.size(), 50u);  // 200 draws over 129 values
  const auto again = PlanRequests(p);
  for (size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(again[i].output_tokens, plan[i].output_tokens);
  p.seed = 8;
  const auto other = PlanRequests(p);
  int differ = 0;
  for (size_t i = 0; i < plan.size(); ++i)
    differ += other[i].output_tokens != plan[i].output_tokens;
  EXPECT_GT(differ, 100);
}

TEST(PlanRequests, LengthsFileRowsAreDrawnWithTheSeed) {
  WorkloadParams p = Base();
  p.lengths = {{100, 10}, {2000, 300}, {50, 1}};
  const auto plan = PlanRequests(p);
  int count[3] = {0, 0, 0};
  for (const PlannedRequest& r : plan) {
    int row = -1;
    for (int i = 0; i < 3; ++i)
      if (r.input_tokens == p.lengths[i].input_tokens &&
          r.output_tokens == p.lengths[i].output_tokens)
        row = i;
    ASSERT_GE(row, 0) << r.input_tokens << "," << r.output_tokens;
    ++count[row];
  }
  for (int c : count) EXPECT_GT(c, 40);  // about 67 each
  const auto again = PlanRequests(p);
  for (size_t i = 0; i < plan.size(); ++i) EXPECT_EQ(again[i].input_tokens, plan[i].input_tokens);
}

TEST(LengthsFile, ReadsPairsAndIgnoresOtherColumns) {
  auto pairs = ParseLengthsCsv("conversation,input_tokens,output_tokens\na,812,211\nb,4096,37\n",
                               "lengths.csv", 1 << 24);
  ASSERT_TRUE(pairs.ok()) << pairs.error().message;
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[1].input_tokens, 4096);
  EXPECT_EQ((*pairs)[1].output_tokens, 37);
}

TEST(LengthsFile, ErrorsNameFileLineAndColumn) {
  auto error = [](const std::string& text) {
    auto r = ParseLengthsCsv(text, "lengths.csv", 100000);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(error("input,output\n1,2\n"),
            "lengths.csv:1: no column 'input_tokens' (expected a header row "
            "'input_tokens,output_tokens')");
  EXPECT_EQ(error("input_tokens,output_tokens\n"),
            "lengths.csv: no rows after the header (expected length pairs)");
  EXPECT_EQ(error("input_tokens,output_tokens\n10,2\n10,0\n"),
            "lengths.csv:3: column 'output_tokens': expected a whole number of tokens in [1, "
            "100000], got 0");
  EXPECT_EQ(error("input_tokens,output_tokens\n1.5,2\n"),
            "lengths.csv:2: column 'input_tokens': expected a whole number of tokens in [1, "
            "100000], got 1.5");
  EXPECT_EQ(error("input_tokens,output_tokens\nten,2\n"),
            "lengths.csv:2: column 'input_tokens': expected a number, got \"ten\"");
}

}  // namespace
}  // namespace ppsearch::workload
