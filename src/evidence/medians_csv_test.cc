#include "evidence/medians_csv.h"

#include <gtest/gtest.h>

namespace ppsearch::evidence {
namespace {

Result<MediansCsv> Parse(const std::string& text) {
  Result<CsvTable> table = ParseCsv(text, "m.csv");
  EXPECT_TRUE(table.ok());
  return ParseMediansCsv(*table);
}

TEST(MediansCsv, ReadsMeasuredRowsWithTheirLinesAndOptionalColumns) {
  Result<MediansCsv> csv = Parse(
      "pp,tp,ep,concurrency,repeats,valid_repeats,input_tps_median,ttft_p50_s_median,"
      "peak_gpu_mib,gpu_total_mib,simulated\n"
      "1,32,4,8,3,3,3257.96,39.19,81355,85651,false\n"
      "2,16,4,8,3,2,5100.5,,,,false\n");
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  ASSERT_EQ(csv->rows.size(), 2u);
  const MedianRow& a = csv->rows[0];
  EXPECT_EQ(a.layout.Label(), "PP1/TP32/EP4");
  EXPECT_EQ(a.line(), 2);
  EXPECT_TRUE(a.measured);
  EXPECT_DOUBLE_EQ(a.input_tps_median, 3257.96);
  EXPECT_EQ(a.ttft_p50_s_median, 39.19);
  EXPECT_EQ(a.headroom_mib, 85651 - 81355);  // derived when not recorded
  EXPECT_EQ(a.simulated, false);
  const MedianRow& b = csv->rows[1];
  EXPECT_FALSE(b.ttft_p50_s_median);  // an empty cell: not recorded
  EXPECT_FALSE(b.peak_gpu_mib);
  EXPECT_EQ(b.valid_repeats, 2);
}

// One rule: no valid repeat (valid_repeats 0, or no median) means no medians.
TEST(MediansCsv, ARowWithoutValidRepeatsIsUnmeasured) {
  Result<MediansCsv> csv = Parse(
      "pp,tp,ep,concurrency,valid_repeats,input_tps_median\n"
      "2,16,4,8,0,\n"
      "2,16,4,16,0,123\n"
      "4,8,4,8,,\n");
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  for (const MedianRow& row : csv->rows) {
    EXPECT_FALSE(row.measured) << row.line();
    EXPECT_EQ(row.input_tps_median, 0);
  }
}

TEST(MediansCsv, BadValuesNameFileLineAndColumn) {
  EXPECT_EQ(Parse("pp,tp,ep,c,input_tps_median\n1,32,4,8,3000\n").error().message,
            "m.csv:1: missing column 'concurrency' in the header (a CSV of medians needs pp, tp, "
            "ep, concurrency, input_tps_median)");
  EXPECT_EQ(Parse("pp,tp,ep,concurrency,input_tps_median\n1,32,4,0,3000\n").error().message,
            "m.csv:2: column 'concurrency': expected a positive integer, got 0");
  EXPECT_EQ(Parse("pp,tp,ep,concurrency,input_tps_median\n1.5,32,4,8,3000\n").error().message,
            "m.csv:2: column 'pp': expected a positive integer, got 1.5");
  EXPECT_EQ(Parse("pp,tp,ep,concurrency,input_tps_median\n1,32,4,8,-1\n").error().message,
            "m.csv:2: column 'input_tps_median': expected a positive number");
  EXPECT_EQ(
      Parse("pp,tp,ep,concurrency,input_tps_median,repeats\n1,32,4,8,30,-2\n").error().message,
      "m.csv:2: column 'repeats': expected a count, got -2");
}

}  // namespace
}  // namespace ppsearch::evidence
