#include "evidence/point_columns.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "evidence/csv_cells.h"
#include "evidence/medians_csv.h"
#include "evidence/summary_json.h"

namespace ppsearch::evidence {
namespace {

// A decode point with a distinct value in every column (column i: i + 1,
// plus a fraction where the column has decimals to keep).
PointSummary EveryColumnDistinct() {
  PointSummary p;
  p.layout = {2, 8, 4, {}};
  p.concurrency = 32;
  p.median.decode = true;
  int i = 0;
  for (const PointColumn& c : PointColumns()) {
    ++i;
    SetValue(c, c.count != nullptr || c.decimals == 0 ? i : i + 0.25, p);
  }
  // Distinct, and as a measurement bounds them: valid repeats are some of
  // the repeats (the reader refuses more).
  std::swap(p.repeats, p.valid_repeats);
  return p;
}

// The one table is what both files read: each column's value reaches
// summary.json under its name, and summary.csv's columns read back into the
// same field of the point.
TEST(PointColumns, EachColumnReachesBothFilesUnderItsNameFromItsField) {
  const PointSummary p = EveryColumnDistinct();
  RunSummary run;
  run.points = {p};
  const nlohmann::json point = SummaryJson(run)["points"][0];
  std::set<std::string> names;
  for (const PointColumn& c : PointColumns()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name << " is declared twice";
    ASSERT_TRUE(point.contains(c.name)) << c.name;
    EXPECT_DOUBLE_EQ(point[c.name].get<double>(), *ValueOf(c, p)) << c.name;
  }
  Result<CsvTable> table = ParseCsv(SummaryCsvText({MedianRowOf(p, false)}), "summary.csv");
  ASSERT_TRUE(table.ok());
  Result<MediansCsv> back = ParseMediansCsv(*table);
  ASSERT_TRUE(back.ok()) << back.error().message;
  const MedianRow& row = back->rows.front();
  for (const PointColumn& c : PointColumns()) {
    EXPECT_EQ(table->Column(c.name) >= 0, c.csv != CsvPlace::kNone) << c.name;
    if (c.csv == CsvPlace::kNone) continue;
    // Written, but derived again by a reader against its own baseline.
    EXPECT_EQ(CsvCell(*table, 0, c.name), CsvFixed(*ValueOf(c, p), c.decimals)) << c.name;
    if (c.against_baseline) continue;
    EXPECT_TRUE(row.Holds(&c)) << c.name;
    EXPECT_DOUBLE_EQ(*ValueOf(c, row.point), *ValueOf(c, p)) << c.name;
  }
}

// A decode figure is unset where requests generated one token: null in
// summary.json, an empty cell in summary.csv.
TEST(PointColumns, DecodeFiguresAreUnsetForAPrefillOnlyPoint) {
  PointSummary p = EveryColumnDistinct();
  p.median.decode = false;
  RunSummary run;
  run.points = {p};
  const nlohmann::json point = SummaryJson(run)["points"][0];
  Result<CsvTable> table = ParseCsv(SummaryCsvText({MedianRowOf(p, false)}), "summary.csv");
  ASSERT_TRUE(table.ok());
  for (const PointColumn& c : PointColumns()) {
    EXPECT_EQ(point[c.name].is_null(), DecodeOnly(c)) << c.name;
    if (c.csv != CsvPlace::kNone) {
      EXPECT_EQ(CsvCell(*table, 0, c.name).empty(), DecodeOnly(c)) << c.name;
    }
  }
}

}  // namespace
}  // namespace ppsearch::evidence
