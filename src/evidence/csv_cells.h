#pragma once
// The cells of the CSVs ppsearch writes and reads back (summary.csv and the
// CSV of medians, results.csv): one rule per kind of cell for every reader,
// one number format for every writer.

#include <optional>
#include <string>

#include "spec/spec.h"
#include "util/csv.h"
#include "util/result.h"

namespace ppsearch::evidence {

// "FILE:LINE" of row `r`, for errors.
std::string CsvAt(const CsvTable& t, size_t r);
// The cell of row `r` in `column`, "" when the column is absent.
std::string CsvCell(const CsvTable& t, size_t r, const std::string& column);
// A positive integer (a layout's size, a concurrency).
Result<int> CsvPositiveInt(const CsvTable& t, size_t r, const std::string& column);
// An optional number: unset when the column is absent or the cell empty.
Result<std::optional<double>> CsvOptional(const CsvTable& t, size_t r, const std::string& column);
// The most a measured figure's cell may hold: a trillion (tokens/s, s,
// MiB). Past it a value is no measurement, and its rounding would overflow
// the integers the tables print.
inline constexpr double kMaxCsvFigure = 1e12;
// The least a measured throughput (tokens/s) or time (s) may be: a
// nanosecond, the simulator's tick. Below it a value is no measurement
// (1e-300 tokens/s printed a calibration error of +9,223,372,036,854,775,807%).
// Every reader of measured medians bounds them so: a CSV of medians and a
// backtest case's inline points.
inline constexpr double kMinMeasuredFigure = 1e-9;
// An optional measured figure: unset as CsvOptional, else a number in
// [`min`, kMaxCsvFigure].
Result<std::optional<double>> CsvOptionalFigure(const CsvTable& t, size_t r,
                                                const std::string& column, double min);
// An optional count (an integer >= 0).
Result<std::optional<int>> CsvOptionalCount(const CsvTable& t, size_t r, const std::string& column);
// The row's layout: pp, tp, ep (positive integers) and dp when the column is
// there (files written before DP attention have none: plain TP attention);
// a disaggregated deployment's from its `pools` cell (its name,
// spec::LayoutSpec::Slug), its size cells then empty. Its origin is the
// file and the row's line.
Result<spec::LayoutSpec> CsvLayout(const CsvTable& t, size_t r);
// A layout's cells as CsvLayout reads them: pp, tp, ep, dp, instances, and
// pools (empty for an aggregated layout; a deployment's sizes empty).
struct CsvLayoutCells {
  std::string pp, tp, ep, dp, instances, pools;
};
CsvLayoutCells LayoutCells(const spec::LayoutSpec& layout);
// "true" or "false"; unset for an absent column or any other text.
std::optional<bool> CsvBool(const CsvTable& t, size_t r, const std::string& column);

// `v` with `decimals` digits after the point; an unset value is an empty cell.
std::string CsvFixed(double v, int decimals);
std::string CsvFixed(const std::optional<double>& v, int decimals);

}  // namespace ppsearch::evidence
