#include "report/result_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "evidence/point_columns.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

// A figure of the row's point where its source held it (evidence::ValueOf).
std::optional<double> Known(const evidence::PointSummary& p, double stats::Figures::*f) {
  return evidence::ValueOf(*evidence::ColumnOf(f), p);
}

std::string RowLabel(const ResultRow& r) {
  return LayoutCell(r.point.layout) + (r.point.imported ? " (imported)" : "");
}

}  // namespace

std::string LayoutCell(const spec::LayoutSpec& l) {
  // A deployment's pools are no PP / TP / EP of their own: its name says them.
  if (l.disaggregated()) return l.Label();
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
                                    [](const ResultRow& b) { return b.point.imported; });
  const evidence::PointSummary& p = row.point;
  if (p.layout == *baseline && p.imported == imported) {
    d.is_baseline = true;
    return d;
  }
  for (const auto& row_b : baseline_rows) {
    const evidence::PointSummary& b = row_b.point;
    if (!(b.layout == *baseline) || b.imported != imported || b.concurrency != p.concurrency)
      continue;
    // Against what both rows hold: an imported row may lack TTFT.
    const auto ratio = [&](double stats::Figures::*f) -> std::optional<double> {
      const std::optional<double> mine = Known(p, f), theirs = Known(b, f);
      if (!mine || !theirs || !(*theirs > 0)) return std::nullopt;
      return *mine / *theirs - 1;
    };
    if (const auto v = ratio(&stats::Figures::input_tps)) d.input_tps = v;
    if (const auto v = ratio(&stats::Figures::ttft_p50_s)) d.ttft_p50 = v;
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
                                  [](const ResultRow& r) { return r.point.median.decode; });
  constexpr size_t kDecodeAt = 5;  // after TTFT p95
  if (decode) {
    t.header.insert(t.header.begin() + kDecodeAt,
                    {"TPOT p50", "TPOT p99", "ITL p99", "Output TPS", "Output TPS/GPU"});
    t.left.insert(t.left.begin() + kDecodeAt, 5, false);
  }
  for (const auto& r : rows) {
    const evidence::PointSummary& p = r.point;
    RowDelta d = DeltaAgainst(r, baseline_rows, baseline);
    auto delta = [&](const std::optional<double>& v) {
      return d.is_baseline ? std::string("baseline")
             : v           ? FormatSignedPercent(*v)
                           : std::string("-");
    };
    // A figure the row's source did not hold (an imported CSV without TTFT) is "-".
    const auto cell = [&](double stats::Figures::*f, const auto& format,
                          const std::optional<uncertainty::Interval>& interval) {
      const std::optional<double> v = Known(p, f);
      return v ? format(*v, interval) : std::string("-");
    };
    t.rows.push_back({RowLabel(r), std::to_string(p.concurrency),
                      cell(&stats::Figures::input_tps, TpsCell, r.input_tps_interval),
                      cell(&stats::Figures::ttft_p50_s, SecondsCell, r.ttft_p50_interval),
                      cell(&stats::Figures::ttft_p95_s, SecondsCell, r.ttft_p95_interval),
                      delta(d.input_tps), delta(d.ttft_p50)});
    if (!decode) continue;
    std::vector<std::string> cells(5, "-");
    if (p.median.decode) {
      // A figure its source did not hold (TPOT p50 of a baseline imported
      // from a summary.csv) is "-"; so is a time of 0, which no decode
      // point has.
      const auto ms = [&](double stats::Figures::*figure) {
        const std::optional<double> s = Known(p, figure);
        return s && *s > 0 ? FormatNumber(*s * 1e3, 2) + " ms" : std::string("-");
      };
      const auto tps = [&](double stats::Figures::*figure) {
        const std::optional<double> v = Known(p, figure);
        return v ? FormatNumber(*v, 2) : std::string("-");
      };
      cells = {ms(&stats::Figures::tpot_p50_s), ms(&stats::Figures::tpot_p99_s),
               ms(&stats::Figures::itl_p99_s), tps(&stats::Figures::output_tps),
               tps(&stats::Figures::output_tps_per_gpu)};
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
