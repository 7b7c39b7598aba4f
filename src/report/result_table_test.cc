#include "report/result_table.h"

#include <gtest/gtest.h>

namespace ppsearch::report {
namespace {

ResultRow Row(int pp, int tp, int c, double tps, double ttft, bool imported = false) {
  ResultRow r;
  r.layout.pp = pp;
  r.layout.tp = tp;
  r.layout.ep = 4;
  r.concurrency = c;
  r.input_tps = tps;
  r.ttft_p50_s = ttft;
  r.ttft_p95_s = ttft;
  r.imported = imported;
  return r;
}

TEST(RenderResultTable, ImportedBaselineRowsAreMarkedAndThisRunsRowsOfThatLayoutCompared) {
  const ResultRow base = Row(1, 32, 8, 3200, 40, /*imported=*/true);
  const ResultRow again = Row(1, 32, 8, 3520, 36);
  const ResultRow pp8 = Row(8, 4, 8, 4000, 30);
  std::optional<spec::LayoutSpec> baseline = base.layout;
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
  decode.decode = DecodeCells{0.0123, 0.0456, 0.0789, 2400, 300};
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
  // A baseline imported from a summary.csv has no TPOT p50: not 0 ms.
  ResultRow imported = Row(2, 4, 4, 880, 1.6, /*imported=*/true);
  imported.decode = DecodeCells{0, 0.0456, 0.0789, 2300, 287.5};
  EXPECT_EQ(ResultTable({imported}, {}, std::nullopt).rows[0][5], "-");
  EXPECT_EQ(ResultTable({imported}, {}, std::nullopt).rows[0][6], "45.60 ms");
  // Without decode figures the table keeps its prefill-only shape.
  EXPECT_EQ(ResultTable({prefill}, {}, std::nullopt).header.size(), 7u);
}

}  // namespace
}  // namespace ppsearch::report
