#include "evidence/medians_csv.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "evidence/csv_cells.h"
#include "evidence/evidence.h"
#include "stats/point_figures.h"
#include "util/excerpt.h"

namespace ppsearch::evidence {
namespace {

void AddNames(CsvPlace place, std::vector<std::string>& out) {
  for (const PointColumn& c : PointColumns())
    if (c.csv == place) out.push_back(c.name);
}

void AddCells(CsvPlace place, const MedianRow& r, std::vector<std::string>& out) {
  for (const PointColumn& c : PointColumns()) {
    if (c.csv != place) continue;
    const std::optional<double> v = ValueOf(c, r.point);
    if (c.count != nullptr) {
      out.push_back(std::to_string(v ? r.point.*c.count : 0));
    } else {
      out.push_back(CsvFixed(v, c.decimals));
    }
  }
}

// A median of a time (s).
bool IsTime(const PointColumn& c) { return c.median != nullptr && stats::IsTime(c.median); }

// The columns of `place` that the row has a cell for.
Status ReadColumns(CsvPlace place, const CsvTable& t, size_t r, MedianRow& row) {
  for (const PointColumn& c : PointColumns()) {
    if (c.csv != place || c.median == &stats::Figures::input_tps || c.against_baseline) continue;
    std::optional<double> v;
    if (c.count != nullptr) {
      PPS_ASSIGN_OR_RETURN(std::optional<int> n, CsvOptionalCount(t, r, c.name));
      if (n) v = *n;
    } else {
      // A measured figure is >= 0 (a time >= kMinMeasuredFigure) and at
      // most kMaxCsvFigure; a headroom below 0 would be a GPU using more
      // memory than it has.
      PPS_ASSIGN_OR_RETURN(v, CsvOptionalFigure(t, r, c.name, IsTime(c) ? kMinMeasuredFigure : 0));
    }
    if (!v) continue;
    SetValue(c, *v, row.point);
    row.point.held[IndexOf(c)] = true;
  }
  return Status::Ok();
}

// A row that breaks FigureOutOfOrder's order, named by its two columns.
Status CheckOrder(const CsvTable& t, size_t r, const MedianRow& row) {
  const std::optional<FigureOrder> broken = FigureOutOfOrder(row.point);
  if (!broken) return Status::Ok();
  return MakeError(CsvAt(t, r) + fmt::format(": column '{}' ({}) is above column '{}' ({}); "
                                             "expected at most it",
                                             broken->low->name, CsvCell(t, r, broken->low->name),
                                             broken->high->name,
                                             CsvCell(t, r, broken->high->name)));
}

Status ReadRow(const CsvTable& t, size_t r, MedianRow& row) {
  PointSummary& p = row.point;
  p.held.assign(PointColumns().size(), false);
  p.imported = true;
  PPS_ASSIGN_OR_RETURN(p.layout, CsvLayout(t, r));
  PPS_ASSIGN_OR_RETURN(p.concurrency, CsvPositiveInt(t, r, "concurrency"));
  PPS_RETURN_IF_ERROR(ReadColumns(CsvPlace::kCounts, t, r, row));
  const bool no_valid_repeat = row.Holds(&PointSummary::valid_repeats) && p.valid_repeats == 0;
  // A file without valid_repeats counts every repeat as valid.
  if (!row.Holds(&PointSummary::valid_repeats)) {
    p.valid_repeats = p.repeats;
    p.held[IndexOf(*ColumnOf(&PointSummary::valid_repeats))] = row.Holds(&PointSummary::repeats);
  }
  row.simulated = CsvBool(t, r, "simulated");
  // A median is over the repeats that measured it; the runner leaves a
  // point without repeats without medians. (requests_completed 0 beside
  // medians is the fewest of one repeat: the others measured them.)
  const std::string median_cell = CsvCell(t, r, "input_tps_median");
  if (row.Holds(&PointSummary::repeats) && p.repeats == 0 && !median_cell.empty())
    return MakeError(CsvAt(t, r) + ": column 'repeats' is 0 beside column 'input_tps_median' (" +
                     Excerpt(median_cell) +
                     "); expected a median over at least one repeat (a point without "
                     "repeats has an empty input_tps_median)");
  row.measured = !no_valid_repeat && !median_cell.empty();
  if (!row.measured) return CheckOrder(t, r, row);
  PPS_ASSIGN_OR_RETURN(p.median.input_tps, CsvNumber(t, r, "input_tps_median"));
  if (!(p.median.input_tps >= kMinMeasuredFigure && p.median.input_tps <= kMaxCsvFigure))
    return MakeError(CsvAt(t, r) +
                     fmt::format(": column 'input_tps_median': expected a positive number "
                                 "(tokens/s) in [{:g}, {:g}], got ",
                                 kMinMeasuredFigure, kMaxCsvFigure) +
                     Excerpt(CsvCell(t, r, "input_tps_median")) +
                     " (a point without valid repeats has valid_repeats = 0 or an empty cell)");
  p.held[IndexOf(*ColumnOf(&stats::Figures::input_tps))] = true;
  PPS_RETURN_IF_ERROR(ReadColumns(CsvPlace::kFirst, t, r, row));
  PPS_RETURN_IF_ERROR(ReadColumns(CsvPlace::kLater, t, r, row));
  if (!p.headroom_mib && p.peak_gpu_mib && p.gpu_total_mib && *p.gpu_total_mib > 0)
    p.headroom_mib = *p.gpu_total_mib - *p.peak_gpu_mib;
  // TPOT exists only where requests generated a second token.
  p.median.decode = p.held[IndexOf(*ColumnOf(&stats::Figures::tpot_p99_s))];
  return CheckOrder(t, r, row);
}

}  // namespace

std::optional<FigureOrder> FigureOutOfOrder(const PointSummary& p) {
  using F = stats::Figures;
  const PointColumn* total = ColumnOf(&PointSummary::gpu_total_mib);
  const FigureOrder pairs[] = {
      {ColumnOf(&PointSummary::requests_completed), ColumnOf(&PointSummary::requests_total)},
      {ColumnOf(&PointSummary::valid_repeats), ColumnOf(&PointSummary::repeats)},
      {ColumnOf(&F::ttft_p50_s), ColumnOf(&F::ttft_p95_s)},
      {ColumnOf(&F::ttft_p95_s), ColumnOf(&F::ttft_p99_s)},
      {ColumnOf(&F::ttft_p50_s), ColumnOf(&F::ttft_p99_s)},
      {ColumnOf(&PointSummary::peak_gpu_mib), total},
  };
  for (const FigureOrder& pair : pairs) {
    const std::optional<double> low = ValueOf(*pair.low, p), high = ValueOf(*pair.high, p);
    if (!low || !high || (pair.high == total && *high == 0)) continue;
    if (*low > *high) return pair;
  }
  return std::nullopt;
}

bool MedianRow::Holds(const PointColumn* column) const {
  return column != nullptr && ValueOf(*column, point).has_value();
}

Result<MediansCsv> ParseMediansCsv(const CsvTable& table) {
  for (const char* col : {"pp", "tp", "ep", "concurrency", "input_tps_median"})
    if (table.Column(col) < 0)
      return MakeError(table.path + ":1: missing column '" + col +
                       "' in the header (a CSV of medians needs pp, tp, ep, concurrency, "
                       "input_tps_median)");
  MediansCsv out;
  out.path = table.path;
  // (the layout's name, concurrency)
  std::map<std::pair<std::string, int>, int> first_line;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    MedianRow row;
    PPS_RETURN_IF_ERROR(ReadRow(table, r, row));
    // Two rows for one point would leave which medians count to the reader.
    const auto [seen, added] = first_line.emplace(
        std::make_pair(row.point.layout.Slug(), row.point.concurrency), row.line());
    if (!added)
      return MakeError(CsvAt(table, r) + ": " + row.point.layout.Label() + " at concurrency " +
                       std::to_string(row.point.concurrency) + " appears twice (first at line " +
                       std::to_string(seen->second) +
                       "); expected one row per layout and concurrency");
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::string SummaryCsvText(const std::vector<MedianRow>& rows) {
  std::vector<std::string> header = {"schema_version", "pp", "tp", "ep", "concurrency"};
  AddNames(CsvPlace::kCounts, header);
  AddNames(CsvPlace::kFirst, header);
  header.insert(header.end(), {"simulated", "dp"});
  AddNames(CsvPlace::kLater, header);
  header.insert(header.end(), {"instances", "pools"});
  std::string out = CsvRow(header);
  for (const MedianRow& r : rows) {
    const CsvLayoutCells l = LayoutCells(r.point.layout);
    std::vector<std::string> cells = {"1", l.pp, l.tp, l.ep, std::to_string(r.point.concurrency)};
    AddCells(CsvPlace::kCounts, r, cells);
    AddCells(CsvPlace::kFirst, r, cells);
    cells.push_back(r.simulated.value_or(false) ? "true" : "false");
    cells.push_back(l.dp);
    AddCells(CsvPlace::kLater, r, cells);
    cells.insert(cells.end(), {l.instances, l.pools});
    out += CsvRow(cells);
  }
  return out;
}

MedianRow MedianRowOf(const PointSummary& p, bool simulated) {
  MedianRow r;
  r.point = p;
  r.simulated = simulated;
  return r;
}

Result<MediansCsv> ReadMediansCsv(const std::string& path) {
  std::string file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    file = RunPaths{path}.summary_csv();
    if (!std::filesystem::exists(file, ec))
      return MakeError(path + ": a directory without summary.csv (expected a run directory)");
  }
  PPS_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(file));
  return ParseMediansCsv(table);
}

}  // namespace ppsearch::evidence
