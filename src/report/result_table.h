#pragma once
// The result table every ppsearch report leads with: one row per layout and
// concurrency, with deltas against the baseline layout at the same
// concurrency, in the shape teams already write by hand.

#include <optional>
#include <string>
#include <vector>

#include "spec/spec.h"

namespace ppsearch::report {

struct ResultRow {
  spec::LayoutSpec layout;
  int concurrency = 0;
  double input_tps = 0;
  double ttft_p50_s = 0;
  double ttft_p95_s = 0;
  double peak_gpu_mib = 0;  // 0: unknown
  bool imported = false;    // from an earlier run or a CSV of medians; shown as "(imported)"
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

// The table style of every ppsearch table: fixed-width columns three spaces
// apart (markdown = false) or a GFM table; labels left-aligned (column i
// when left_aligned[i]), numbers right-aligned. Every row of `cells` has
// header.size() cells.
std::string RenderColumns(const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& cells, bool markdown,
                          const std::vector<bool>& left_aligned = {true});

// Fixed-width text (markdown = false) or a markdown table.
std::string RenderResultTable(const std::vector<ResultRow>& rows,
                              const std::vector<ResultRow>& baseline_rows,
                              const std::optional<spec::LayoutSpec>& baseline, bool markdown);

}  // namespace ppsearch::report
