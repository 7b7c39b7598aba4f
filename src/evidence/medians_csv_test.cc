#include "evidence/medians_csv.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

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
  EXPECT_EQ(a.point.layout.Label(), "PP1/TP32/EP4");
  EXPECT_EQ(a.line(), 2);
  EXPECT_TRUE(a.measured);
  EXPECT_DOUBLE_EQ(a.point.median.input_tps, 3257.96);
  EXPECT_EQ(a.Get(&stats::Figures::ttft_p50_s), 39.19);
  EXPECT_EQ(a.point.headroom_mib, 85651 - 81355);  // derived when not recorded
  EXPECT_TRUE(a.Holds(&PointSummary::headroom_mib));
  EXPECT_EQ(a.simulated, false);
  EXPECT_TRUE(a.point.imported);
  const MedianRow& b = csv->rows[1];
  EXPECT_FALSE(b.Get(&stats::Figures::ttft_p50_s));  // an empty cell: not recorded
  EXPECT_EQ(b.point.median.ttft_p50_s, 0);
  EXPECT_FALSE(b.point.peak_gpu_mib);
  EXPECT_EQ(b.point.valid_repeats, 2);
  EXPECT_FALSE(b.Holds(&PointSummary::input_tps_spread));  // no such column
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
    EXPECT_EQ(row.point.median.input_tps, 0);
    EXPECT_FALSE(row.Holds(&stats::Figures::input_tps));
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
            "m.csv:2: column 'input_tps_median': expected a positive number (tokens/s) in [1e-09, "
            "1e+12], "
            "got -1 "
            "(a point without valid repeats has valid_repeats = 0 or an empty cell)");
  EXPECT_EQ(Parse("pp,tp,ep,concurrency,input_tps_median\n1,32,4,8,0\n").error().message,
            "m.csv:2: column 'input_tps_median': expected a positive number (tokens/s) in [1e-09, "
            "1e+12], "
            "got 0 "
            "(a point without valid repeats has valid_repeats = 0 or an empty cell)");
  EXPECT_EQ(
      Parse("pp,tp,ep,concurrency,input_tps_median,repeats\n1,32,4,8,30,-2\n").error().message,
      "m.csv:2: column 'repeats': expected a count, got -2");
  // A measured figure below 0 or past a trillion is no measurement: a
  // negative TTFT entered the report as measured, 1e300 tokens/s printed
  // as 9,223,372,036,854,775,807.
  const std::string head = "pp,tp,ep,concurrency,input_tps_median,ttft_p50_s_median,peak_gpu_mib\n";
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,-39.19,80000\n").error().message,
            "m.csv:2: column 'ttft_p50_s_median': expected a number in [1e-09, 1e+12], got "
            "-39.19");
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,39.19,-81355\n").error().message,
            "m.csv:2: column 'peak_gpu_mib': expected a number in [0, 1e+12], got -81355");
  EXPECT_EQ(Parse(head + "1,32,4,8,1e300,39.19,80000\n").error().message,
            "m.csv:2: column 'input_tps_median': expected a positive number (tokens/s) in "
            "[1e-09, 1e+12], got 1e300 (a point without valid repeats has valid_repeats = 0 or an "
            "empty cell)");
  // Nor is one below a nanosecond's worth: 1e-300 tokens/s printed a
  // calibration error of +9,223,372,036,854,775,807%. The same bound as a
  // backtest case's inline points.
  EXPECT_EQ(Parse(head + "1,32,4,8,1e-300,39.19,80000\n").error().message,
            "m.csv:2: column 'input_tps_median': expected a positive number (tokens/s) in "
            "[1e-09, 1e+12], got 1e-300 (a point without valid repeats has valid_repeats = 0 or "
            "an empty cell)");
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,1e-300,80000\n").error().message,
            "m.csv:2: column 'ttft_p50_s_median': expected a number in [1e-09, 1e+12], got "
            "1e-300");
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,0,80000\n").error().message,
            "m.csv:2: column 'ttft_p50_s_median': expected a number in [1e-09, 1e+12], got 0");
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,1e308,80000\n").error().message,
            "m.csv:2: column 'ttft_p50_s_median': expected a number in [1e-09, 1e+12], got "
            "1e308");
  // A headroom below 0 is a GPU using more memory than it has.
  EXPECT_EQ(Parse("pp,tp,ep,concurrency,input_tps_median,headroom_mib\n1,32,4,8,3000,-20\n")
                .error()
                .message,
            "m.csv:2: column 'headroom_mib': expected a number in [0, 1e+12], got -20");
}

// A figure above the one that bounds it was not measured: more requests
// completed than sent, more valid repeats than repeats, a TTFT p95 below
// its p50.
TEST(MediansCsv, AFigureAboveItsBoundIsRefused) {
  const std::string head =
      "pp,tp,ep,concurrency,input_tps_median,repeats,valid_repeats,requests_completed,"
      "requests_total,ttft_p50_s_median,ttft_p95_s_median,ttft_p99_s_median\n";
  EXPECT_TRUE(Parse(head + "1,32,4,8,3000,3,3,40,40,9.5,9.5,12\n").ok());
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,3,3,80,40,9.5,11,12\n").error().message,
            "m.csv:2: column 'requests_completed' (80) is above column 'requests_total' (40); "
            "expected at most it");
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,3,4,40,40,9.5,11,12\n").error().message,
            "m.csv:2: column 'valid_repeats' (4) is above column 'repeats' (3); expected at most "
            "it");
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,3,3,40,40,9.5,8,12\n").error().message,
            "m.csv:2: column 'ttft_p50_s_median' (9.5) is above column 'ttft_p95_s_median' (8); "
            "expected at most it");
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,3,3,40,40,9.5,11,10\n").error().message,
            "m.csv:2: column 'ttft_p95_s_median' (11) is above column 'ttft_p99_s_median' (10); "
            "expected at most it");
  // Without the p95, the p99 still bounds the p50.
  EXPECT_EQ(Parse(head + "1,32,4,8,3000,3,3,40,40,9.5,,9\n").error().message,
            "m.csv:2: column 'ttft_p50_s_median' (9.5) is above column 'ttft_p99_s_median' (9); "
            "expected at most it");
  // A point no repeat of which was valid is checked too.
  EXPECT_EQ(Parse(head + "1,32,4,8,,3,0,50,40,,,\n").error().message,
            "m.csv:2: column 'requests_completed' (50) is above column 'requests_total' (40); "
            "expected at most it");
}

// A GPU uses at most the memory it has: a peak above the total (an edited
// baseline) fitted a workspace that left no layout fitting.
TEST(MediansCsv, AUsedMemoryAboveTheGpusTotalIsRefused) {
  const std::string head = "pp,tp,ep,concurrency,input_tps_median,peak_gpu_mib,gpu_total_mib\n";
  EXPECT_EQ(Parse(head + "1,32,4,8,3257.96,95000,85651\n").error().message,
            "m.csv:2: column 'peak_gpu_mib' (95000) is above column 'gpu_total_mib' (85651); "
            "expected at most it");
  Result<MediansCsv> full = Parse(head + "1,32,4,8,3257.96,85651,85651\n");
  ASSERT_TRUE(full.ok()) << full.error().message;
  EXPECT_EQ(full->rows[0].point.headroom_mib, 0);
  // A total of 0 is a snapshot without memory.total, as the runner writes
  // it: no reading, so neither a refusal nor a headroom of -peak.
  Result<MediansCsv> no_total = Parse(head + "1,32,4,8,3257.96,81355,0\n");
  ASSERT_TRUE(no_total.ok()) << no_total.error().message;
  EXPECT_FALSE(no_total->rows[0].point.headroom_mib);
}

// A median is over some repeat: a row of no repeats with medians was not
// written from a run. requests_completed is the fewest of one repeat, so 0
// beside medians is a run's own point (one repeat completed none).
TEST(MediansCsv, AMedianOverNoRepeatIsRefused) {
  const std::string head =
      "pp,tp,ep,concurrency,repeats,requests_completed,requests_total,input_tps_median\n";
  EXPECT_EQ(Parse(head + "1,32,4,8,0,40,40,3257.96\n").error().message,
            "m.csv:2: column 'repeats' is 0 beside column 'input_tps_median' (3257.96); expected "
            "a median over at least one repeat (a point without repeats has an empty "
            "input_tps_median)");
  EXPECT_EQ(Parse("pp,tp,ep,concurrency,repeats,valid_repeats,input_tps_median\n"
                  "1,32,4,8,0,0,3257.96\n")
                .error()
                .message,
            "m.csv:2: column 'repeats' is 0 beside column 'input_tps_median' (3257.96); expected "
            "a median over at least one repeat (a point without repeats has an empty "
            "input_tps_median)");
  Result<MediansCsv> none = Parse(head + "1,32,4,8,0,0,40,\n");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->rows[0].measured);
  Result<MediansCsv> one_lost = Parse(head + "1,32,4,8,3,0,40,3257.96\n");
  ASSERT_TRUE(one_lost.ok()) << one_lost.error().message;
  EXPECT_TRUE(one_lost->rows[0].measured);
}

// summary.csv of a point none of whose repeats completed a request (its
// medians forgotten: empty cells) reads back as a point without medians.
TEST(MediansCsv, APointWithoutCompletedRequestsReadsBack) {
  PointSummary p;
  p.layout = {4, 8, 4, {}};
  p.concurrency = 8;
  p.repeats = 3;
  p.requests_total = 40;
  p.peak_gpu_mib = 80000;
  p.gpu_total_mib = 85651;
  p.headroom_mib = 5651;
  ForgetMedians(p);
  Result<CsvTable> table = ParseCsv(SummaryCsvText({MedianRowOf(p, false)}), "summary.csv");
  ASSERT_TRUE(table.ok());
  Result<MediansCsv> back = ParseMediansCsv(*table);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->rows[0].measured);
  EXPECT_EQ(back->rows[0].point.repeats, 3);
}

// Two rows for one point: which one a reader took (the first, the last)
// would decide a comparison; neither is taken.
TEST(MediansCsv, ADuplicatePointIsRefusedNamingBothLines) {
  EXPECT_EQ(Parse("pp,tp,ep,concurrency,input_tps_median\n1,32,4,8,3000\n1,32,4,16,3100\n"
                  "1,32,4,8,3600\n")
                .error()
                .message,
            "m.csv:4: PP1/TP32/EP4 at concurrency 8 appears twice (first at line 2); expected "
            "one row per layout and concurrency");
  // Other EP or concurrency: other points.
  EXPECT_TRUE(Parse("pp,tp,ep,concurrency,input_tps_median\n1,32,4,8,3000\n1,32,8,8,3000\n"
                    "1,32,4,16,3000\n")
                  .ok());
}

// summary.csv as the runner writes it reads back as the same rows: the
// writer and the reader of the format agree on every column.
TEST(MediansCsv, SummaryCsvReadsBackAsWritten) {
  PointSummary p;
  p.layout = {8, 4, 4, {}};
  p.layout.instances = 2;  // two copies behind the router: read back, not lost
  p.concurrency = 16;
  p.repeats = 3;
  p.valid_repeats = 3;
  p.requests_completed = 40;
  p.requests_total = 40;
  p.median.input_tps = 9641.63;
  p.input_tps_spread = 0.0012;
  p.median.ttft_p50_s = 24.5;
  p.ttft_p50_s_spread = 0.001;
  p.median.ttft_p95_s = 26.25;
  p.median.ttft_p99_s = 27.5;
  p.peak_gpu_mib = 80000;
  p.gpu_total_mib = 85651;
  p.headroom_mib = 5651;
  p.input_tps_vs_baseline = 1.95;
  p.ttft_p50_vs_baseline = -0.66;
  p.median.decode = true;
  p.median.tpot_p99_s = 0.0415;
  p.median.goodput_rps = 3.25;
  p.median.e2e_p99_s = 41.5;  // a time is at least a nanosecond (kMinMeasuredFigure)
  p.held.assign(PointColumns().size(), true);
  p.held[IndexOf(*ColumnOf(&stats::Figures::itl_p99_s))] = false;  // unknown: empty cell
  const MedianRow a = MedianRowOf(p, /*simulated=*/true);
  PointSummary failed = p;  // every repeat failed: no medians
  failed.concurrency = 8;
  failed.valid_repeats = 0;
  failed.median.input_tps = 0;
  const std::string text = SummaryCsvText({a, MedianRowOf(failed, true)});
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "schema_version,pp,tp,ep,concurrency,repeats,valid_repeats,requests_completed,"
            "requests_total,input_tps_median,input_tps_spread,ttft_p50_s_median,"
            "ttft_p50_s_spread,ttft_p95_s_median,peak_gpu_mib,gpu_total_mib,headroom_mib,"
            "input_tps_vs_baseline,ttft_p50_vs_baseline,simulated,dp,output_tps_median,"
            "output_tps_per_gpu_median,ttft_p99_s_median,tpot_p99_s_median,itl_p99_s_median,"
            "e2e_p99_s_median,goodput_rps_median,instances,pools");
  Result<CsvTable> table = ParseCsv(text, "summary.csv");
  ASSERT_TRUE(table.ok());
  Result<MediansCsv> back = ParseMediansCsv(*table);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->rows.size(), 2u);
  const MedianRow& r = back->rows[0];
  EXPECT_EQ(r.point.layout, p.layout);
  EXPECT_EQ(r.point.layout.instances, 2);
  EXPECT_EQ(r.point.concurrency, 16);
  EXPECT_DOUBLE_EQ(r.point.median.input_tps, 9641.63);
  EXPECT_EQ(r.point.median.ttft_p95_s, 26.25);
  EXPECT_EQ(r.point.headroom_mib, 5651);
  EXPECT_NE(text.find(",1.950000,-0.660000,"), std::string::npos) << text;
  // Deltas against the writer's baseline: the reader derives its own.
  EXPECT_FALSE(r.point.input_tps_vs_baseline);
  EXPECT_FALSE(r.point.ttft_p50_vs_baseline);
  EXPECT_EQ(r.simulated, true);
  EXPECT_EQ(r.point.median.tpot_p99_s, 0.0415);
  EXPECT_EQ(r.point.median.goodput_rps, 3.25);
  EXPECT_FALSE(r.Holds(&stats::Figures::itl_p99_s));  // an empty cell: not measured
  EXPECT_FALSE(back->rows[1].measured);

  // A disaggregated deployment's row: its name in `pools`, no sizes of its own.
  spec::LayoutSpec prefill, decode;
  prefill.tp = decode.tp = 8;
  decode.instances = 3;
  PointSummary pd = p;
  pd.layout = spec::DeploymentLayout(prefill, decode, {});
  const std::string pd_text = SummaryCsvText({MedianRowOf(pd, true)});
  EXPECT_NE(pd_text.find("\n1,,,,16,"), std::string::npos) << pd_text;
  EXPECT_NE(pd_text.find(",,1p3d-pp1-tp8-ep1+3x-pp1-tp8-ep1\n"), std::string::npos) << pd_text;
  Result<CsvTable> pd_table = ParseCsv(pd_text, "summary.csv");
  ASSERT_TRUE(pd_table.ok());
  Result<MediansCsv> pd_back = ParseMediansCsv(*pd_table);
  ASSERT_TRUE(pd_back.ok()) << pd_back.error().message;
  EXPECT_EQ(pd_back->rows.at(0).point.layout, pd.layout);
  std::string bad = pd_text;
  bad.replace(bad.rfind("1p3d"), 4, "2p3d");
  Result<MediansCsv> refused = ParseMediansCsv(*ParseCsv(bad, "summary.csv"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "summary.csv:2: column 'pools': expected a disaggregated deployment's name, e.g. "
            "1p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8, got 2p3d-pp1-tp8-ep1+3x-pp1-tp8-ep1");
}

// A point's summary.csv row and back through the file: every column the file
// holds comes back, the decode and SLA ones too (a baseline imported from a
// run's summary.csv used to lose them), and a prefill-only point stays one.
TEST(MediansCsv, APointSummaryRoundTripsThroughItsRow) {
  PointSummary p;
  p.layout = {2, 16, 4, {}};
  p.concurrency = 64;
  p.repeats = 3;
  p.valid_repeats = 2;
  p.requests_completed = 128;
  p.requests_total = 128;
  p.median.input_tps = 5120.5;
  p.input_tps_spread = 0.02;
  p.median.ttft_p50_s = 0.42;
  p.ttft_p50_s_spread = 0.03;
  p.median.ttft_p95_s = 0.61;
  p.median.ttft_p99_s = 0.74;
  p.median.e2e_p99_s = 35.5;
  p.median.goodput_rps = 1.75;
  p.median.decode = true;
  p.median.output_tps = 1830.25;
  p.median.output_tps_per_gpu = 57.2;
  p.median.tpot_p99_s = 0.041;
  p.median.itl_p99_s = 0.052;
  p.peak_gpu_mib = 80000;
  p.gpu_total_mib = 85651;
  p.headroom_mib = 5651;
  PointSummary prefill = p;
  prefill.concurrency = 8;
  prefill.median.decode = false;
  Result<CsvTable> table =
      ParseCsv(SummaryCsvText({MedianRowOf(p, false), MedianRowOf(prefill, false)}), "summary.csv");
  ASSERT_TRUE(table.ok());
  Result<MediansCsv> back = ParseMediansCsv(*table);
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->rows.size(), 2u);
  const PointSummary q = back->rows[0].point;
  EXPECT_EQ(q.layout, p.layout);
  EXPECT_EQ(q.concurrency, 64);
  EXPECT_EQ(q.repeats, 3);
  EXPECT_EQ(q.valid_repeats, 2);
  EXPECT_EQ(q.requests_completed, 128);
  for (const auto& [got, want] : std::vector<std::pair<double, double>>{
           {q.median.input_tps, p.median.input_tps},
           {q.input_tps_spread, p.input_tps_spread},
           {q.median.ttft_p50_s, p.median.ttft_p50_s},
           {q.ttft_p50_s_spread, p.ttft_p50_s_spread},
           {q.median.ttft_p95_s, p.median.ttft_p95_s},
           {q.median.ttft_p99_s, p.median.ttft_p99_s},
           {q.median.e2e_p99_s, p.median.e2e_p99_s},
           {q.median.goodput_rps, p.median.goodput_rps},
           {q.median.output_tps, p.median.output_tps},
           {q.median.output_tps_per_gpu, p.median.output_tps_per_gpu},
           {q.median.tpot_p99_s, p.median.tpot_p99_s},
           {q.median.itl_p99_s, p.median.itl_p99_s}})
    EXPECT_DOUBLE_EQ(got, want);
  EXPECT_TRUE(q.median.decode);
  EXPECT_EQ(q.headroom_mib, p.headroom_mib);
  EXPECT_TRUE(q.imported);
  const PointSummary r = back->rows[1].point;
  EXPECT_FALSE(r.median.decode);  // no TPOT written for a prefill-only point
  EXPECT_EQ(r.median.tpot_p99_s, 0);
  // Output throughput is a decode figure, as in results.csv: not written.
  EXPECT_FALSE(back->rows[1].Holds(&stats::Figures::output_tps));
  EXPECT_EQ(r.median.output_tps, 0);
}

}  // namespace
}  // namespace ppsearch::evidence
