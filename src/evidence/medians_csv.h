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
//     columns are optional, and an empty cell is "not recorded".
// Column meanings: docs/formats.md.

#include <optional>
#include <string>
#include <vector>

#include "evidence/run_summary.h"
#include "spec/spec.h"
#include "util/csv.h"
#include "util/result.h"

namespace ppsearch::evidence {

struct MedianRow {
  spec::LayoutSpec layout;  // origin: the file and the row's line
  int concurrency = 0;
  bool measured = true;  // false: no valid repeat, no medians
  std::optional<int> repeats, valid_repeats, requests_completed, requests_total;
  double input_tps_median = 0;  // positive when measured
  std::optional<double> input_tps_spread, ttft_p50_s_median, ttft_p50_s_spread, ttft_p95_s_median,
      peak_gpu_mib, gpu_total_mib, headroom_mib;
  // Against the run's baseline at the same concurrency: value / baseline - 1.
  std::optional<double> input_tps_vs_baseline, ttft_p50_vs_baseline;
  std::optional<bool> simulated;  // the `simulated` column, when present
  // Columns after `dp`: output throughput, the SLA figures (medians over
  // repeats of each repeat's p99) and goodput; empty where not measured
  // (TPOT and ITL of a prefill-only point).
  std::optional<double> output_tps_median, output_tps_per_gpu_median, ttft_p99_s_median,
      tpot_p99_s_median, itl_p99_s_median, e2e_p99_s_median, goodput_rps_median;

  int line() const { return layout.origin.line; }
};

struct MediansCsv {
  std::string path;  // the file read (a run directory's summary.csv)
  std::vector<MedianRow> rows;
};

Result<MediansCsv> ParseMediansCsv(const CsvTable& table);

// A point's row of summary.csv and back: the one mapping between a run's
// point summary and the file's columns (report/ writes it, a baseline
// import reads it). A column the row leaves unset stays unset.
MedianRow MedianRowOf(const PointSummary& p, bool simulated);
// The point a measured row stands for, every column the file holds carried
// (the decode and SLA figures too); what the file does not hold (TPOT p50,
// e2e p50, the per-user rate) stays 0, and its deltas against its own run's
// baseline are left to the reader's baseline. `imported` is set.
PointSummary PointSummaryOf(const MedianRow& row);

// summary.csv's text (schema version 1): the header, then one row per
// element of `rows`, every column written (an unset figure as an empty
// cell, an unset count or median as 0).
std::string SummaryCsvText(const std::vector<MedianRow>& rows);
// `path` is the CSV, or a run directory whose summary.csv is read.
Result<MediansCsv> ReadMediansCsv(const std::string& path);

}  // namespace ppsearch::evidence
