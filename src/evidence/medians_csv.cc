#include "evidence/medians_csv.h"

#include <filesystem>
#include <map>
#include <tuple>

#include "evidence/csv_cells.h"
#include "evidence/evidence.h"
#include "util/excerpt.h"

namespace ppsearch::evidence {
namespace {

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
  const std::pair<const char*, std::optional<double>*> optional[] = {
      {"input_tps_spread", &row.input_tps_spread},
      {"ttft_p50_s_median", &row.ttft_p50_s_median},
      {"ttft_p50_s_spread", &row.ttft_p50_s_spread},
      {"ttft_p95_s_median", &row.ttft_p95_s_median},
      {"peak_gpu_mib", &row.peak_gpu_mib},
      {"gpu_total_mib", &row.gpu_total_mib},
      {"headroom_mib", &row.headroom_mib},
      {"input_tps_vs_baseline", &row.input_tps_vs_baseline},
      {"ttft_p50_vs_baseline", &row.ttft_p50_vs_baseline},
      {"output_tps_median", &row.output_tps_median},
      {"output_tps_per_gpu_median", &row.output_tps_per_gpu_median},
      {"ttft_p99_s_median", &row.ttft_p99_s_median},
      {"tpot_p99_s_median", &row.tpot_p99_s_median},
      {"itl_p99_s_median", &row.itl_p99_s_median},
      {"e2e_p99_s_median", &row.e2e_p99_s_median},
      {"goodput_rps_median", &row.goodput_rps_median}};
  for (const auto& [column, field] : optional) {
    PPS_ASSIGN_OR_RETURN(*field, CsvOptional(t, r, column));
  }
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
  std::string out = CsvRow({"schema_version",
                            "pp",
                            "tp",
                            "ep",
                            "concurrency",
                            "repeats",
                            "valid_repeats",
                            "requests_completed",
                            "requests_total",
                            "input_tps_median",
                            "input_tps_spread",
                            "ttft_p50_s_median",
                            "ttft_p50_s_spread",
                            "ttft_p95_s_median",
                            "peak_gpu_mib",
                            "gpu_total_mib",
                            "headroom_mib",
                            "input_tps_vs_baseline",
                            "ttft_p50_vs_baseline",
                            "simulated",
                            "dp",
                            "output_tps_median",
                            "output_tps_per_gpu_median",
                            "ttft_p99_s_median",
                            "tpot_p99_s_median",
                            "itl_p99_s_median",
                            "e2e_p99_s_median",
                            "goodput_rps_median",
                            "instances"});
  for (const MedianRow& r : rows)
    out += CsvRow({"1",
                   std::to_string(r.layout.pp),
                   std::to_string(r.layout.tp),
                   std::to_string(r.layout.ep),
                   std::to_string(r.concurrency),
                   std::to_string(r.repeats.value_or(0)),
                   std::to_string(r.valid_repeats.value_or(0)),
                   std::to_string(r.requests_completed.value_or(0)),
                   std::to_string(r.requests_total.value_or(0)),
                   CsvFixed(r.input_tps_median, 2),
                   CsvFixed(r.input_tps_spread.value_or(0), 6),
                   CsvFixed(r.ttft_p50_s_median.value_or(0), 4),
                   CsvFixed(r.ttft_p50_s_spread.value_or(0), 6),
                   CsvFixed(r.ttft_p95_s_median.value_or(0), 4),
                   CsvFixed(r.peak_gpu_mib, 0),
                   CsvFixed(r.gpu_total_mib, 0),
                   CsvFixed(r.headroom_mib, 0),
                   CsvFixed(r.input_tps_vs_baseline, 6),
                   CsvFixed(r.ttft_p50_vs_baseline, 6),
                   r.simulated.value_or(false) ? "true" : "false",
                   std::to_string(r.layout.dp),
                   CsvFixed(r.output_tps_median, 2),
                   CsvFixed(r.output_tps_per_gpu_median, 2),
                   CsvFixed(r.ttft_p99_s_median, 4),
                   CsvFixed(r.tpot_p99_s_median, 6),
                   CsvFixed(r.itl_p99_s_median, 6),
                   CsvFixed(r.e2e_p99_s_median, 4),
                   CsvFixed(r.goodput_rps_median, 4),
                   std::to_string(r.layout.instances)});
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
