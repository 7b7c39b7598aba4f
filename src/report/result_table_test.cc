#include "report/result_table.h"

#include <gtest/gtest.h>

#include "evidence/point_columns.h"

namespace ppsearch::report {
namespace {

ResultRow Row(int pp, int tp, int c, double tps, double ttft, bool imported = false) {
  ResultRow r;
  r.point.layout.pp = pp;
  r.point.layout.tp = tp;
  r.point.layout.ep = 4;
  r.point.concurrency = c;
  r.point.median.input_tps = tps;
  r.point.median.ttft_p50_s = ttft;
  r.point.median.ttft_p95_s = ttft;
  r.point.imported = imported;
  return r;
}

void SetDecode(ResultRow& r, double tpot_p50_s, double tpot_p99_s, double itl_p99_s,
               double output_tps, double output_tps_per_gpu) {
  r.point.median.decode = true;
  r.point.median.tpot_p50_s = tpot_p50_s;
  r.point.median.tpot_p99_s = tpot_p99_s;
  r.point.median.itl_p99_s = itl_p99_s;
  r.point.median.output_tps = output_tps;
  r.point.median.output_tps_per_gpu = output_tps_per_gpu;
}

TEST(RenderResultTable, ImportedBaselineRowsAreMarkedAndThisRunsRowsOfThatLayoutCompared) {
  const ResultRow base = Row(1, 32, 8, 3200, 40, /*imported=*/true);
  const ResultRow again = Row(1, 32, 8, 3520, 36);
  const ResultRow pp8 = Row(8, 4, 8, 4000, 30);
  std::optional<spec::LayoutSpec> baseline = base.point.layout;
  EXPECT_TRUE(DeltaAgainst(base, {base}, baseline).is_baseline);
  RowDelta d = DeltaAgainst(again, {base}, baseline);
  EXPECT_FALSE(d.is_baseline);
  EXPECT_NEAR(*d.input_tps, 0.1, 1e-12);
  EXPECT_NEAR(*d.ttft_p50, -0.1, 1e-12);
  const std::string table = RenderResultTable({base, again, pp8}, {base}, baseline, true);
  EXPECT_EQ(table,
            "| PP / TP / EP          |   C | Input TPS | TTFT p50 | TTFT p95 | Input TPS vs PP1 | "
            "TTFT p50 vs PP1 |\n"
            "| :-------------------- | --: | --------: | -------: | -------: | ---------------: | "
            "--------------: |\n"
            "| 1 / 32 / 4 (imported) |   8 |  3,200.00 |  40.00 s |  40.00 s |         baseline | "
            "       baseline |\n"
            "| 1 / 32 / 4            |   8 |  3,520.00 |  36.00 s |  36.00 s |          +10.00% | "
            "        -10.00% |\n"
            "| 8 / 4 / 4             |   8 |  4,000.00 |  30.00 s |  30.00 s |          +25.00% | "
            "        -25.00% |\n");
}

// Decode figures add their columns after TTFT p95; a row without them (an
// imported prefill-only baseline) shows "-" there.
TEST(RenderResultTable, DecodeColumnsFollowTtftWhenARowHasThem) {
  const ResultRow prefill = Row(1, 8, 4, 1000, 2);
  ResultRow decode = Row(2, 4, 4, 900, 1.5);
  SetDecode(decode, 0.0123, 0.0456, 0.0789, 2400, 300);
  const table::Table t = ResultTable({prefill, decode}, {}, std::nullopt);
  EXPECT_EQ(t.header, (std::vector<std::string>{"PP / TP / EP", "C", "Input TPS", "TTFT p50",
                                                "TTFT p95", "TPOT p50", "TPOT p99", "ITL p99",
                                                "Output TPS", "Output TPS/GPU",
                                                "Input TPS vs baseline", "TTFT p50 vs baseline"}));
  EXPECT_EQ(t.left.size(), t.header.size());
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"1 / 8 / 4", "4", "1,000.00", "2.00 s", "2.00 s",
                                                 "-", "-", "-", "-", "-", "-", "-"}));
  EXPECT_EQ(t.rows[1],
            (std::vector<std::string>{"2 / 4 / 4", "4", "900.00", "1.50 s", "1.50 s", "12.30 ms",
                                      "45.60 ms", "78.90 ms", "2,400.00", "300.00", "-", "-"}));
  // A baseline imported from a summary.csv holds no TPOT p50 (the file has
  // no such column): "-", not 0 ms; what the file held shows.
  ResultRow imported = Row(2, 4, 4, 880, 1.6, /*imported=*/true);
  SetDecode(imported, 0, 0.0456, 0.0789, 2300, 287.5);
  imported.point.held.assign(evidence::PointColumns().size(), true);
  imported.point.held[evidence::IndexOf(*evidence::ColumnOf(&stats::Figures::tpot_p50_s))] = false;
  imported.point.median.tpot_p50_s = 0.0123;  // not held: never shown
  EXPECT_EQ(ResultTable({imported}, {}, std::nullopt).rows[0][5], "-");
  EXPECT_EQ(ResultTable({imported}, {}, std::nullopt).rows[0][6], "45.60 ms");
  // An imported row without TTFT: "-" and no TTFT delta, not 0.00 s and -100%.
  ResultRow no_ttft = Row(2, 4, 4, 880, 0, /*imported=*/true);
  no_ttft.point.held.assign(evidence::PointColumns().size(), true);
  for (auto f : {&stats::Figures::ttft_p50_s, &stats::Figures::ttft_p95_s})
    no_ttft.point.held[evidence::IndexOf(*evidence::ColumnOf(f))] = false;
  const ResultRow base = Row(1, 8, 4, 800, 2, /*imported=*/true);
  const table::Table u = ResultTable({base, no_ttft}, {base}, base.point.layout);
  EXPECT_EQ(u.rows[1], (std::vector<std::string>{"2 / 4 / 4 (imported)", "4", "880.00", "-", "-",
                                                 "+10.00%", "-"}));
  // Without decode figures the table keeps its prefill-only shape.
  EXPECT_EQ(ResultTable({prefill}, {}, std::nullopt).header.size(), 7u);
}

}  // namespace
}  // namespace ppsearch::report
