#include "analysis/baseline.h"

#include <gtest/gtest.h>

#include "analysis/analysis_testing.h"
#include "ppsearch_source_dir.h"

namespace ppsearch::analysis {
namespace {

using testing::Layout;
using testing::SmallSweepSpec;

const std::string kCsv = std::string(PPSEARCH_SOURCE_DIR) + "/data/baseline/pp1-tp32-ep4.csv";

TEST(ReadBaselineCsv, ReadsTheShippedPp1Medians) {
  Result<std::vector<PointSummary>> rows = ReadBaselineCsv(kCsv);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  const PointSummary& c8 = (*rows)[0];
  EXPECT_EQ(c8.layout, Layout(1, 32, 4));
  EXPECT_EQ(c8.concurrency, 8);
  EXPECT_EQ(c8.repeats, 3);
  EXPECT_EQ(c8.requests_total, 40);
  EXPECT_DOUBLE_EQ(c8.median.input_tps, 3257.96);
  EXPECT_DOUBLE_EQ(c8.median.ttft_p50_s, 39.19);
  EXPECT_DOUBLE_EQ(c8.median.ttft_p95_s, 41.62);
  EXPECT_DOUBLE_EQ(*c8.headroom_mib, 4296);
  EXPECT_TRUE(c8.imported);
  EXPECT_EQ((*rows)[1].concurrency, 16);

  LayoutMemory m = ImportedMemory(*rows, Layout(1, 32, 4));
  EXPECT_DOUBLE_EQ(*m.peak_gpu_mib, 81355);
  EXPECT_DOUBLE_EQ(*m.remaining_mib, 4296);
}

// A different sample size is a setting difference: the confounder check
// (compare/) names it, once; this check is only about the rows present.
TEST(CheckCsvComparability, ASampleSizeDifferenceIsLeftToTheConfounderCheck) {
  Result<std::vector<PointSummary>> rows = ReadBaselineCsv(kCsv);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(CheckCsvComparability(*rows, Layout(1, 32, 4), SmallSweepSpec(), "pp1.csv").empty());
}

TEST(CheckCsvComparability, TheExampleSpecMatchesTheShippedCsvAndMissingLevelsAreNamed) {
  Result<spec::Spec> spec = spec::LoadSpec(testing::ExampleSpecPath(),
                                           {"workload.requests=40", "sweep.concurrency=[8,16]"});
  ASSERT_TRUE(spec.ok());
  Result<std::vector<PointSummary>> rows = ReadBaselineCsv(kCsv);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(CheckCsvComparability(*rows, Layout(1, 32, 4), *spec, "pp1.csv").empty());
  spec->sweep.concurrency = {8, 32};
  EXPECT_EQ(CheckCsvComparability(*rows, Layout(1, 32, 4), *spec, "pp1.csv"),
            std::vector<std::string>{"baseline CSV pp1.csv has no PP1/TP32/EP4 row at concurrency "
                                     "32: no deltas at C=32"});
  EXPECT_EQ(CheckCsvComparability(*rows, Layout(2, 16, 4), *spec, "pp1.csv"),
            std::vector<std::string>{
                "baseline CSV pp1.csv has no row for the baseline layout PP2/TP16/EP4"});
}

TEST(ParseBaselineCsv, MissingColumnIsNamed) {
  Result<CsvTable> table =
      ParseCsv("pp,tp,ep,concurrency,ttft_p50_s_median\n1,32,4,8,30\n", "b.csv");
  ASSERT_TRUE(table.ok());
  Result<std::vector<PointSummary>> rows = ParseBaselineCsv(*table);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().message,
            "b.csv:1: missing column 'input_tps_median' in the header (a CSV of medians needs "
            "pp, tp, ep, concurrency, input_tps_median)");
}

// A point whose every repeat failed has no medians to take deltas against:
// the same rule as calibrate's.
TEST(ParseBaselineCsv, APointWithoutValidRepeatsIsLeftOut) {
  Result<CsvTable> table = ParseCsv(
      "pp,tp,ep,concurrency,valid_repeats,input_tps_median,ttft_p50_s_median\n"
      "1,32,4,8,3,3000,39\n1,32,4,16,0,,\n",
      "b.csv");
  ASSERT_TRUE(table.ok());
  Result<std::vector<PointSummary>> rows = ParseBaselineCsv(*table);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].concurrency, 8);
  EXPECT_EQ((*rows)[0].layout.origin.line, 2);
}

}  // namespace
}  // namespace ppsearch::analysis
