// A point's figures: FiguresOf copies each of a sample's metrics into its
// one field, Derive computes the per-GPU and per-user figures, and the
// field table names every field once.

#include "stats/point_figures.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace ppsearch::stats {
namespace {

SampleMetrics Distinct() {
  SampleMetrics m;
  m.input_tps = 8000;
  m.output_tps = 1600;
  m.request_throughput = 1.5;
  m.goodput_rps = 1.25;
  m.ttft_s = {.mean = 0.31, .p50 = 0.32, .p90 = 0.33, .p95 = 0.34, .p99 = 0.35, .max = 0.36};
  m.e2e_s = {.mean = 10.1, .p50 = 10.2, .p90 = 10.3, .p95 = 10.4, .p99 = 10.5, .max = 10.6};
  m.tpot_requests = 12;
  m.tpot_s = {.mean = 0.021, .p50 = 0.025, .p90 = 0.023, .p95 = 0.024, .p99 = 0.05, .max = 0.06};
  m.itl_values = 100;
  m.itl_s = {.mean = 0.011, .p50 = 0.012, .p90 = 0.013, .p95 = 0.014, .p99 = 0.075, .max = 0.1};
  m.first_token_pace = 0.875;
  return m;
}

TEST(Figures, EachMetricLandsInItsOneFieldAndTheDerivedOnesFollow) {
  const Figures f = FiguresOf(Distinct(), 16);
  const std::map<std::string, double> want = {
      {"input_tps", 8000},         {"output_tps", 1600},        {"request_rps", 1.5},
      {"goodput_rps", 1.25},       {"ttft_mean_s", 0.31},       {"ttft_p50_s", 0.32},
      {"ttft_p95_s", 0.34},        {"ttft_p99_s", 0.35},        {"e2e_p50_s", 10.2},
      {"e2e_p99_s", 10.5},         {"tpot_p50_s", 0.025},       {"tpot_p99_s", 0.05},
      {"itl_p50_s", 0.012},        {"itl_p99_s", 0.075},        {"input_tps_per_gpu", 500},
      {"output_tps_per_gpu", 100}, {"output_tps_per_user", 40}, {"first_token_pace", 0.875}};
  ASSERT_EQ(FigureFields().size(), want.size());
  for (const FigureField& field : FigureFields()) {
    ASSERT_TRUE(want.count(field.name)) << field.name;
    EXPECT_DOUBLE_EQ(f.*field.member, want.at(field.name)) << field.name;
  }
  EXPECT_TRUE(f.decode);
}

TEST(Figures, APrefillOnlySampleHasNoDecodeFiguresAndNoGpusNoPerGpuFigures) {
  SampleMetrics m = Distinct();
  m.tpot_requests = 0;
  m.itl_values = 0;
  m.tpot_s = {};
  m.itl_s = {};
  const Figures f = FiguresOf(m, 0);
  EXPECT_FALSE(f.decode);
  EXPECT_EQ(f.output_tps_per_user, 0);  // no TPOT: no speed a user sees
  EXPECT_EQ(f.input_tps_per_gpu, 0);
  EXPECT_EQ(f.output_tps_per_gpu, 0);
  EXPECT_EQ(f.tpot_p50_s, 0);
  EXPECT_EQ(f.itl_p99_s, 0);
  // Output throughput is still what arrived (first tokens); a reporter
  // leaves it out by FigureField::decode_only.
  EXPECT_EQ(f.output_tps, 1600);
  EXPECT_TRUE(FieldOf(&Figures::output_tps)->decode_only);
}

TEST(Figures, TheTableNamesEveryFieldOnceAndFindsItByMember) {
  std::set<std::string> names;
  for (const FigureField& field : FigureFields()) {
    EXPECT_TRUE(names.insert(field.name).second) << field.name;
    EXPECT_EQ(FieldOf(field.member), &field) << field.name << " is named twice";
  }
  // Each field set to a distinct value is read back by exactly its entry:
  // no member of Figures is missing from the table.
  Figures f;
  double v = 1;
  for (const FigureField& field : FigureFields()) f.*field.member = v++;
  v = 1;
  for (const FigureField& field : FigureFields()) EXPECT_EQ(f.*field.member, v++) << field.name;
  EXPECT_EQ(sizeof(Figures), sizeof(double) * (FigureFields().size() + 1))
      << "a double member of Figures is not in FigureFields() (the +1 is `decode`, padded)";
}

// A file names a figure by the table, a time in milliseconds with "_ms"
// for "_s", and converts only the value it is given.
TEST(Figures, AKeyIsTheFieldsNameInTheFilesUnit) {
  EXPECT_EQ(FigureKey(&Figures::tpot_p50_s), "tpot_p50_s");
  EXPECT_EQ(FigureKey(&Figures::tpot_p50_s, TimeUnit::kMilliseconds), "tpot_p50_ms");
  EXPECT_EQ(FigureKey(&Figures::itl_p99_s, TimeUnit::kMilliseconds), "itl_p99_ms");
  EXPECT_EQ(FigureKey(&Figures::input_tps), "input_tps");
  EXPECT_DOUBLE_EQ(FigureIn(0.025, TimeUnit::kMilliseconds), 25);
  EXPECT_DOUBLE_EQ(FigureIn(0.025, TimeUnit::kSeconds), 0.025);
}

}  // namespace
}  // namespace ppsearch::stats
