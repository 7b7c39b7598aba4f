#include "evidence/medians_csv.h"

#include <filesystem>
#include <map>
#include <tuple>

#include "evidence/csv_cells.h"
#include "evidence/evidence.h"
#include "util/excerpt.h"

namespace ppsearch::evidence {
namespace {

// summary.csv's figure columns, each declared once: the header, the writer
// and the reader all read these tables. The file's columns are
// schema_version, the layout's pp, tp and ep, concurrency, the four counts,
// input_tps_median, kFiguresFirst, simulated, dp, kFiguresLater (added
// after dp: the decode and SLA figures), instances. An unset figure is an
// empty cell, except those `zero_when_unset` (schema 1's first columns,
// which wrote 0).
struct FigureColumn {
  const char* name;
  std::optional<double> MedianRow::*field;
  int decimals;
  bool zero_when_unset;
};
constexpr FigureColumn kFiguresFirst[] = {
    {"input_tps_spread", &MedianRow::input_tps_spread, 6, true},
    {"ttft_p50_s_median", &MedianRow::ttft_p50_s_median, 4, true},
    {"ttft_p50_s_spread", &MedianRow::ttft_p50_s_spread, 6, true},
    {"ttft_p95_s_median", &MedianRow::ttft_p95_s_median, 4, true},
    {"peak_gpu_mib", &MedianRow::peak_gpu_mib, 0, false},
    {"gpu_total_mib", &MedianRow::gpu_total_mib, 0, false},
    {"headroom_mib", &MedianRow::headroom_mib, 0, false},
    {"input_tps_vs_baseline", &MedianRow::input_tps_vs_baseline, 6, false},
    {"ttft_p50_vs_baseline", &MedianRow::ttft_p50_vs_baseline, 6, false}};
constexpr FigureColumn kFiguresLater[] = {
    {"output_tps_median", &MedianRow::output_tps_median, 2, false},
    {"output_tps_per_gpu_median", &MedianRow::output_tps_per_gpu_median, 2, false},
    {"ttft_p99_s_median", &MedianRow::ttft_p99_s_median, 4, false},
    {"tpot_p99_s_median", &MedianRow::tpot_p99_s_median, 6, false},
    {"itl_p99_s_median", &MedianRow::itl_p99_s_median, 6, false},
    {"e2e_p99_s_median", &MedianRow::e2e_p99_s_median, 4, false},
    {"goodput_rps_median", &MedianRow::goodput_rps_median, 4, false}};

template <size_t N>
void AddNames(const FigureColumn (&columns)[N], std::vector<std::string>& out) {
  for (const FigureColumn& c : columns) out.push_back(c.name);
}

template <size_t N>
void AddCells(const FigureColumn (&columns)[N], const MedianRow& r,
              std::vector<std::string>& out) {
  for (const FigureColumn& c : columns) {
    const std::optional<double>& v = r.*c.field;
    out.push_back(c.zero_when_unset ? CsvFixed(v.value_or(0), c.decimals)
                                    : CsvFixed(v, c.decimals));
  }
}

template <size_t N>
Status ReadFigures(const FigureColumn (&columns)[N], const CsvTable& t, size_t r, MedianRow& row) {
  for (const FigureColumn& c : columns) {
    PPS_ASSIGN_OR_RETURN(row.*c.field, CsvOptional(t, r, c.name));
  }
  return Status::Ok();
}

Status ReadRow(const CsvTable& t, size_t r, MedianRow& row) {
  PPS_ASSIGN_OR_RETURN(row.layout, CsvLayout(t, r));
  PPS_ASSIGN_OR_RETURN(row.concurrency, CsvPositiveInt(t, r, "concurrency"));
  PPS_ASSIGN_OR_RETURN(row.repeats, CsvOptionalCount(t, r, "repeats"));
  PPS_ASSIGN_OR_RETURN(row.valid_repeats, CsvOptionalCount(t, r, "valid_repeats"));
  PPS_ASSIGN_OR_RETURN(row.requests_completed, CsvOptionalCount(t, r, "requests_completed"));
  PPS_ASSIGN_OR_RETURN(row.requests_total, CsvOptionalCount(t, r, "requests_total"));
  row.simulated = CsvBool(t, r, "simulated");
  row.measured = row.valid_repeats != 0 && !CsvCell(t, r, "input_tps_median").empty();
  if (!row.measured) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(row.input_tps_median, CsvNumber(t, r, "input_tps_median"));
  if (!(row.input_tps_median > 0))
    return MakeError(CsvAt(t, r) +
                     ": column 'input_tps_median': expected a positive number (tokens/s), got " +
                     Excerpt(CsvCell(t, r, "input_tps_median")) +
                     " (a point without valid repeats has valid_repeats = 0 or an empty cell)");
  PPS_RETURN_IF_ERROR(ReadFigures(kFiguresFirst, t, r, row));
  PPS_RETURN_IF_ERROR(ReadFigures(kFiguresLater, t, r, row));
  if (!row.headroom_mib && row.peak_gpu_mib && row.gpu_total_mib)
    row.headroom_mib = *row.gpu_total_mib - *row.peak_gpu_mib;
  return Status::Ok();
}

}  // namespace

Result<MediansCsv> ParseMediansCsv(const CsvTable& table) {
  for (const char* col : {"pp", "tp", "ep", "concurrency", "input_tps_median"})
    if (table.Column(col) < 0)
      return MakeError(table.path + ":1: missing column '" + col +
                       "' in the header (a CSV of medians needs pp, tp, ep, concurrency, "
                       "input_tps_median)");
  MediansCsv out;
  out.path = table.path;
  // (instances, pp, tp, ep, dp, concurrency)
  std::map<std::tuple<int, int, int, int, int, int>, int> first_line;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    MedianRow row;
    PPS_RETURN_IF_ERROR(ReadRow(table, r, row));
    // Two rows for one point would leave which medians count to the reader.
    const auto [seen, added] =
        first_line.emplace(std::make_tuple(row.layout.instances, row.layout.pp, row.layout.tp,
                                           row.layout.ep, row.layout.dp, row.concurrency),
                           row.line());
    if (!added)
      return MakeError(CsvAt(table, r) + ": " + row.layout.Label() + " at concurrency " +
                       std::to_string(row.concurrency) + " appears twice (first at line " +
                       std::to_string(seen->second) +
                       "); expected one row per layout and concurrency");
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::string SummaryCsvText(const std::vector<MedianRow>& rows) {
  std::vector<std::string> header = {"schema_version",     "pp",
                                     "tp",                 "ep",
                                     "concurrency",        "repeats",
                                     "valid_repeats",      "requests_completed",
                                     "requests_total",     "input_tps_median"};
  AddNames(kFiguresFirst, header);
  header.insert(header.end(), {"simulated", "dp"});
  AddNames(kFiguresLater, header);
  header.push_back("instances");
  std::string out = CsvRow(header);
  for (const MedianRow& r : rows) {
    std::vector<std::string> cells = {"1",
                                      std::to_string(r.layout.pp),
                                      std::to_string(r.layout.tp),
                                      std::to_string(r.layout.ep),
                                      std::to_string(r.concurrency),
                                      std::to_string(r.repeats.value_or(0)),
                                      std::to_string(r.valid_repeats.value_or(0)),
                                      std::to_string(r.requests_completed.value_or(0)),
                                      std::to_string(r.requests_total.value_or(0)),
                                      CsvFixed(r.input_tps_median, 2)};
    AddCells(kFiguresFirst, r, cells);
    cells.push_back(r.simulated.value_or(false) ? "true" : "false");
    cells.push_back(std::to_string(r.layout.dp));
    AddCells(kFiguresLater, r, cells);
    cells.push_back(std::to_string(r.layout.instances));
    out += CsvRow(cells);
  }
  return out;
}

MedianRow MedianRowOf(const PointSummary& p, bool simulated) {
  MedianRow r;
  r.layout = p.layout;
  r.concurrency = p.concurrency;
  r.repeats = p.repeats;
  r.valid_repeats = p.valid_repeats;
  r.requests_completed = p.requests_completed;
  r.requests_total = p.requests_total;
  r.input_tps_median = p.input_tps_median;
  r.input_tps_spread = p.input_tps_spread;
  r.ttft_p50_s_median = p.ttft_p50_s_median;
  r.ttft_p50_s_spread = p.ttft_p50_s_spread;
  r.ttft_p95_s_median = p.ttft_p95_s_median;
  r.peak_gpu_mib = p.peak_gpu_mib;
  r.gpu_total_mib = p.gpu_total_mib;
  r.headroom_mib = p.headroom_mib;
  r.input_tps_vs_baseline = p.input_tps_vs_baseline;
  r.ttft_p50_vs_baseline = p.ttft_p50_vs_baseline;
  r.simulated = simulated;
  r.output_tps_median = p.output_tps_median;
  r.output_tps_per_gpu_median = p.output_tps_per_gpu_median;
  r.ttft_p99_s_median = p.ttft_p99_s_median;
  if (p.decode) {  // TPOT and ITL exist only where requests generated a second token
    r.tpot_p99_s_median = p.tpot_p99_s_median;
    r.itl_p99_s_median = p.itl_p99_s_median;
  }
  r.e2e_p99_s_median = p.e2e_p99_s_median;
  r.goodput_rps_median = p.goodput_rps_median;
  return r;
}

PointSummary PointSummaryOf(const MedianRow& row) {
  PointSummary p;
  p.layout = row.layout;
  p.concurrency = row.concurrency;
  p.repeats = row.repeats.value_or(0);
  p.valid_repeats = row.valid_repeats.value_or(p.repeats);
  p.requests_completed = row.requests_completed.value_or(0);
  p.requests_total = row.requests_total.value_or(0);
  p.input_tps_median = row.input_tps_median;
  p.input_tps_spread = row.input_tps_spread.value_or(0);
  p.ttft_p50_s_median = row.ttft_p50_s_median.value_or(0);
  p.ttft_p50_s_spread = row.ttft_p50_s_spread.value_or(0);
  p.ttft_p95_s_median = row.ttft_p95_s_median.value_or(0);
  p.peak_gpu_mib = row.peak_gpu_mib;
  p.gpu_total_mib = row.gpu_total_mib;
  p.headroom_mib = row.headroom_mib;
  p.output_tps_median = row.output_tps_median.value_or(0);
  p.output_tps_per_gpu_median = row.output_tps_per_gpu_median.value_or(0);
  p.ttft_p99_s_median = row.ttft_p99_s_median.value_or(0);
  p.decode = row.tpot_p99_s_median.has_value();
  p.tpot_p99_s_median = row.tpot_p99_s_median.value_or(0);
  p.itl_p99_s_median = row.itl_p99_s_median.value_or(0);
  p.e2e_p99_s_median = row.e2e_p99_s_median.value_or(0);
  p.goodput_rps_median = row.goodput_rps_median.value_or(0);
  p.imported = true;
  return p;
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
