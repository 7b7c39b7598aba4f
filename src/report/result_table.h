#pragma once
// The result table every ppsearch report leads with: one row per layout and
// concurrency, with deltas against the baseline layout at the same
// concurrency, in the shape teams already write by hand.

#include <optional>
#include <string>
#include <vector>

#include "evidence/run_summary.h"
#include "report/document.h"
#include "spec/spec.h"
#include "uncertainty/propagate.h"

namespace ppsearch::report {

// A row: the point's figures in the one record of a point
// (evidence::PointSummary: a run's medians, an imported row, or a
// prediction written as one) and, for a prediction, its intervals. When any
// row is a decode point (PointSummary::decode), the table adds the decode
// columns after TTFT p95.
struct ResultRow {
  evidence::PointSummary point;
  // A prediction's 10th-90th percentile intervals, shown after the values.
  std::optional<uncertainty::Interval> input_tps_interval{}, ttft_p50_interval{},
      ttft_p95_interval{};
};

struct RowDelta {
  bool is_baseline = false;
  std::optional<double> input_tps;  // fraction, +0.12 = 12% more throughput
  std::optional<double> ttft_p50;   // fraction, -0.3 = 30% lower TTFT
};

// Deltas of `row` against the row of `baseline` at the same concurrency in
// `rows` (nullopt when there is none). When the baseline rows are imported,
// only imported rows of the baseline layout are the baseline; this run's rows
// of that layout are compared with them.
RowDelta DeltaAgainst(const ResultRow& row, const std::vector<ResultRow>& baseline_rows,
                      const std::optional<spec::LayoutSpec>& baseline);

// "2 / 16 / 4", the first cell of every layout table; a disaggregated
// deployment's is its label ("1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8/DP8").
std::string LayoutCell(const spec::LayoutSpec& l);

// "8,892.12 [7,951–9,610]": a value with its interval, when there is one
// (the interval with `interval_decimals`), then `unit` ("8.12 s [7.90–8.40]").
std::string WithInterval(double value, const std::optional<uncertainty::Interval>& interval,
                         int decimals, int interval_decimals, const std::string& unit = "");
// The input TPS and TTFT cells of every table that shows predictions.
std::string TpsCell(double value, const std::optional<uncertainty::Interval>& interval);
std::string SecondsCell(double value, const std::optional<uncertainty::Interval>& interval);

// The table's cells: the layout, C, the medians and the deltas, formatted.
table::Table ResultTable(const std::vector<ResultRow>& rows,
                         const std::vector<ResultRow>& baseline_rows,
                         const std::optional<spec::LayoutSpec>& baseline);

// Fixed-width text (markdown = false) or a markdown table.
std::string RenderResultTable(const std::vector<ResultRow>& rows,
                              const std::vector<ResultRow>& baseline_rows,
                              const std::optional<spec::LayoutSpec>& baseline, bool markdown);

}  // namespace ppsearch::report
