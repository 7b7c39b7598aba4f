#include "report/result_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/format.h"

namespace ppsearch::report {
namespace {

std::string LayoutCell(const ResultRow& r) {
  const spec::LayoutSpec& l = r.layout;
  return std::to_string(l.pp) + " / " + std::to_string(l.tp) + " / " + std::to_string(l.ep) +
         (r.imported ? " (imported)" : "");
}

}  // namespace

std::string RenderColumns(const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& cells, bool markdown,
                          const std::vector<bool>& left_aligned) {
  auto left = [&](size_t i) { return i < left_aligned.size() && left_aligned[i]; };
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) {
    // A markdown delimiter cell needs a hyphen besides its colon (GFM).
    width[i] = std::max(header[i].size(), markdown ? size_t{3} : size_t{1});
    for (const auto& row : cells) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = markdown ? "|" : "";
    for (size_t i = 0; i < row.size(); ++i) {
      // Numbers right-aligned, labels left-aligned.
      std::string cell = left(i) ? fmt::format("{:<{}}", row[i], width[i])
                                 : fmt::format("{:>{}}", row[i], width[i]);
      s += markdown ? " " + cell + " |" : (i ? "   " : "") + cell;
    }
    if (!markdown) s.erase(s.find_last_not_of(' ') + 1);  // a padded last label column
    out += s + "\n";
  };
  line(header);
  if (markdown) {
    std::string sep = "|";
    for (size_t i = 0; i < header.size(); ++i)
      sep += (left(i) ? " :" : " ") + std::string(width[i] - 1, '-') + (left(i) ? "" : ":") + " |";
    out += sep + "\n";
  }
  for (const auto& row : cells) line(row);
  return out;
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

std::string RenderResultTable(const std::vector<ResultRow>& rows,
                              const std::vector<ResultRow>& baseline_rows,
                              const std::optional<spec::LayoutSpec>& baseline, bool markdown) {
  const std::string base = baseline ? "PP" + std::to_string(baseline->pp) : "baseline";
  std::vector<std::string> header = {"PP / TP / EP",       "C",        "Input TPS",
                                     "TTFT p50",           "TTFT p95", "Input TPS vs " + base,
                                     "TTFT p50 vs " + base};
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    RowDelta d = DeltaAgainst(r, baseline_rows, baseline);
    auto delta = [&](const std::optional<double>& v) {
      return d.is_baseline ? std::string("baseline")
             : v           ? FormatSignedPercent(*v)
                           : std::string("-");
    };
    cells.push_back({LayoutCell(r), std::to_string(r.concurrency), FormatNumber(r.input_tps, 2),
                     FormatNumber(r.ttft_p50_s, 2) + " s", FormatNumber(r.ttft_p95_s, 2) + " s",
                     delta(d.input_tps), delta(d.ttft_p50)});
  }
  return RenderColumns(header, cells, markdown);
}

}  // namespace ppsearch::report
