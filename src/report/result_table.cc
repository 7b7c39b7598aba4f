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
  std::string cell =
      std::to_string(l.pp) + " / " + std::to_string(l.tp) + " / " + std::to_string(l.ep);
  if (l.dp > 1) cell.append(" / DP").append(std::to_string(l.dp));
  if (l.instances > 1) return std::to_string(l.instances) + " x " + cell;
  return cell;
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

table::Table ResultTable(const std::vector<ResultRow>& rows,
                         const std::vector<ResultRow>& baseline_rows,
                         const std::optional<spec::LayoutSpec>& baseline) {
  const std::string base = baseline ? "PP" + std::to_string(baseline->pp) : "baseline";
  table::Table t;
  t.header = {"PP / TP / EP",       "C",        "Input TPS",
              "TTFT p50",           "TTFT p95", "Input TPS vs " + base,
              "TTFT p50 vs " + base};
  t.left = {true, false, false, false, false, false, false};
  // Decode columns only when a row has decode figures: a prefill-only table
  // keeps its shape.
  const bool decode = std::any_of(rows.begin(), rows.end(),
                                  [](const ResultRow& r) { return r.decode.has_value(); });
  constexpr size_t kDecodeAt = 5;  // after TTFT p95
  if (decode) {
    t.header.insert(t.header.begin() + kDecodeAt,
                    {"TPOT p50", "TPOT p99", "ITL p99", "Output TPS", "Output TPS/GPU"});
    t.left.insert(t.left.begin() + kDecodeAt, 5, false);
  }
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
    if (!decode) continue;
    std::vector<std::string> cells(5, "-");
    if (r.decode) {
      // A decode point's times are positive; 0 is a figure its source did
      // not record (TPOT p50 of a baseline imported from a summary.csv).
      const auto ms = [](double s) {
        return s > 0 ? FormatNumber(s * 1e3, 2) + " ms" : std::string("-");
      };
      cells = {ms(r.decode->tpot_p50_s), ms(r.decode->tpot_p99_s), ms(r.decode->itl_p99_s),
               FormatNumber(r.decode->output_tps, 2),
               FormatNumber(r.decode->output_tps_per_gpu, 2)};
    }
    auto& row = t.rows.back();
    row.insert(row.begin() + kDecodeAt, cells.begin(), cells.end());
  }
  return t;
}

std::string RenderResultTable(const std::vector<ResultRow>& rows,
                              const std::vector<ResultRow>& baseline_rows,
                              const std::optional<spec::LayoutSpec>& baseline, bool markdown) {
  return table::RenderTable(ResultTable(rows, baseline_rows, baseline), markdown);
}

}  // namespace ppsearch::report
