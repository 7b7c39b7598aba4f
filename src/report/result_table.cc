#include "report/result_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/format.h"

namespace ppsearch::report {
namespace {

std::string RowLabel(const ResultRow& r) {
  return LayoutCell(r.layout) + (r.imported ? " (imported)" : "");
}

}  // namespace

std::string LayoutCell(const spec::LayoutSpec& l) {
  return std::to_string(l.pp) + " / " + std::to_string(l.tp) + " / " + std::to_string(l.ep) +
         (l.dp > 1 ? " / DP" + std::to_string(l.dp) : "");
}

std::string WithInterval(double value, const std::optional<uncertainty::Interval>& interval,
                         int decimals, int interval_decimals, const std::string& unit) {
  std::string out = FormatNumber(value, decimals) + unit;
  if (interval)
    out += " [" + FormatNumber(interval->low, interval_decimals) + "\u2013" +
           FormatNumber(interval->high, interval_decimals) + "]";
  return out;
}

std::string TpsCell(double value, const std::optional<uncertainty::Interval>& interval) {
  return WithInterval(value, interval, 2, 0);
}

std::string SecondsCell(double value, const std::optional<uncertainty::Interval>& interval) {
  return WithInterval(value, interval, 2, 2, " s");
}

RowDelta DeltaAgainst(const ResultRow& row, const std::vector<ResultRow>& baseline_rows,
                      const std::optional<spec::LayoutSpec>& baseline) {
  RowDelta d;
  if (!baseline) return d;
  const bool imported = std::any_of(baseline_rows.begin(), baseline_rows.end(),
                                    [](const ResultRow& b) { return b.imported; });
  if (row.layout == *baseline && row.imported == imported) {
    d.is_baseline = true;
    return d;
  }
  for (const auto& b : baseline_rows) {
    if (!(b.layout == *baseline) || b.imported != imported || b.concurrency != row.concurrency)
      continue;
    if (b.input_tps > 0) d.input_tps = row.input_tps / b.input_tps - 1;
    if (b.ttft_p50_s > 0) d.ttft_p50 = row.ttft_p50_s / b.ttft_p50_s - 1;
  }
  return d;
}

text::Table ResultTable(const std::vector<ResultRow>& rows,
                        const std::vector<ResultRow>& baseline_rows,
                        const std::optional<spec::LayoutSpec>& baseline) {
  const std::string base = baseline ? "PP" + std::to_string(baseline->pp) : "baseline";
  text::Table t;
  t.header = {"PP / TP / EP",       "C",        "Input TPS",
              "TTFT p50",           "TTFT p95", "Input TPS vs " + base,
              "TTFT p50 vs " + base};
  t.left = {true, false, false, false, false, false, false};
  for (const auto& r : rows) {
    RowDelta d = DeltaAgainst(r, baseline_rows, baseline);
    auto delta = [&](const std::optional<double>& v) {
      return d.is_baseline ? std::string("baseline")
             : v           ? FormatSignedPercent(*v)
                           : std::string("-");
    };
    t.rows.push_back(
        {RowLabel(r), std::to_string(r.concurrency), TpsCell(r.input_tps, r.input_tps_interval),
         SecondsCell(r.ttft_p50_s, r.ttft_p50_interval),
         SecondsCell(r.ttft_p95_s, r.ttft_p95_interval), delta(d.input_tps), delta(d.ttft_p50)});
  }
  return t;
}

std::string RenderResultTable(const std::vector<ResultRow>& rows,
                              const std::vector<ResultRow>& baseline_rows,
                              const std::optional<spec::LayoutSpec>& baseline, bool markdown) {
  return text::RenderTable(ResultTable(rows, baseline_rows, baseline), markdown);
}

}  // namespace ppsearch::report
