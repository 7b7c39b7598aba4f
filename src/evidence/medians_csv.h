#pragma once
// A CSV of medians: one row per layout x concurrency, as a run's summary.csv
// holds them and as a measured baseline is kept (data/baseline/*.csv). The
// writer of summary.csv and the one reader of the format, with one rule for
// every caller (the baseline import, calibrate, compare, backtest):
//   - required columns: pp, tp, ep, concurrency (positive integers) and
//     input_tps_median;
//   - a row without medians (valid_repeats = 0, or an empty
//     input_tps_median: every repeat of that point failed) says nothing
//     about speed: it is read with `measured` false and its figures unset;
//   - a measured row's input_tps_median is a positive number; the other
//     columns are optional, and an empty cell is "not recorded";
//   - no figure is out of the order FigureOutOfOrder states, and a median
//     is over some repeat.
// Column meanings: docs/formats.md.

#include <optional>
#include <string>
#include <vector>

#include "evidence/point_columns.h"
#include "evidence/run_summary.h"
#include "spec/spec.h"
#include "util/csv.h"
#include "util/result.h"

namespace ppsearch::evidence {

// A row of a CSV of medians: the point it stands for, in the one record of
// a point's figures (PointSummary, whose `held` says which columns of
// PointColumns() the row holds), and what only the file says of it.
struct MedianRow {
  PointSummary point;             // its layout's origin: the file and the row's line
  bool measured = true;           // false: no valid repeat, no medians
  std::optional<bool> simulated;  // the `simulated` column, when present

  // Whether the row holds the column (ValueOf is set).
  bool Holds(const PointColumn* column) const;
  // ... the column of one of PointSummary's fields.
  template <class Field>
  bool Holds(Field PointSummary::*field) const {
    return Holds(ColumnOf(field));
  }
  bool Holds(double stats::Figures::*median) const { return Holds(ColumnOf(median)); }
  // A figure of the point where the row holds it.
  std::optional<double> Get(double PointSummary::*figure) const {
    return Holds(figure) ? std::optional<double>(point.*figure) : std::nullopt;
  }
  std::optional<double> Get(double stats::Figures::*median) const {
    return Holds(median) ? std::optional<double>(point.median.*median) : std::nullopt;
  }
  int line() const { return point.layout.origin.line; }
};

struct MediansCsv {
  std::string path;  // the file read (a run directory's summary.csv)
  std::vector<MedianRow> rows;
};

Result<MediansCsv> ParseMediansCsv(const CsvTable& table);

// Two figures of a point, the first at most the second.
struct FigureOrder {
  const PointColumn* low;
  const PointColumn* high;
};
// The first pair of figures that `p` holds (ValueOf) out of their order,
// nullopt when none is: a sample completes at most the requests it sent,
// the valid repeats are some of the repeats, each repeat's TTFT p50 <= p95
// <= p99 (so are their medians), and a GPU uses at most the memory it has
// (a total of 0 is no reading: nvidia-smi gave none). A point that breaks
// one was not measured. Every reader of measured medians applies it: this
// one to each row, a backtest case to its inline points.
std::optional<FigureOrder> FigureOutOfOrder(const PointSummary& p);

// A point's row of summary.csv: every column whose value is set
// (ValueOf). Read back, the row's point is the same point with `imported`
// and `held` set; what the file does not hold (TPOT p50, e2e p50, the
// per-user rate) is unknown, and its deltas against its own run's baseline
// are left to the reader's baseline.
MedianRow MedianRowOf(const PointSummary& p, bool simulated);

// summary.csv's text (schema version 1): the header, then one row per
// element of `rows`, every column written (one the row does not hold as an
// empty cell, or as 0 for a count and schema 1's first medians).
std::string SummaryCsvText(const std::vector<MedianRow>& rows);
// `path` is the CSV, or a run directory whose summary.csv is read.
Result<MediansCsv> ReadMediansCsv(const std::string& path);

}  // namespace ppsearch::evidence
