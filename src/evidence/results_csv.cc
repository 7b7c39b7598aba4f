#include "evidence/results_csv.h"

#include "evidence/csv_cells.h"
#include "util/excerpt.h"

namespace ppsearch::evidence {
namespace {

std::string Count(const std::optional<int>& v) { return v ? std::to_string(*v) : std::string(); }

Status ReadRow(const CsvTable& t, size_t r, ResultRow& row) {
  row.sample = CsvCell(t, r, "sample");
  PPS_ASSIGN_OR_RETURN(row.layout, CsvLayout(t, r));  // the header check requires dp
  PPS_ASSIGN_OR_RETURN(row.concurrency, CsvPositiveInt(t, r, "concurrency"));
  PPS_ASSIGN_OR_RETURN(row.repeat, CsvPositiveInt(t, r, "repeat"));
  PPS_ASSIGN_OR_RETURN(row.requests_completed, CsvOptionalCount(t, r, "requests_completed"));
  PPS_ASSIGN_OR_RETURN(row.requests_total, CsvOptionalCount(t, r, "requests_total"));
  PPS_ASSIGN_OR_RETURN(row.request_errors, CsvOptionalCount(t, r, "request_errors"));
  const std::pair<const char*, std::optional<double>*> figures[] = {
      {"input_tps", &row.input_tps},       {"ttft_mean_s", &row.ttft_mean_s},
      {"ttft_p50_s", &row.ttft_p50_s},     {"ttft_p95_s", &row.ttft_p95_s},
      {"ttft_p99_s", &row.ttft_p99_s},     {"e2e_p50_s", &row.e2e_p50_s},
      {"peak_gpu_mib", &row.peak_gpu_mib}, {"gpu_total_mib", &row.gpu_total_mib},
      {"output_tps", &row.output_tps},     {"output_tps_per_gpu", &row.output_tps_per_gpu},
      {"tpot_p50_s", &row.tpot_p50_s},     {"tpot_p99_s", &row.tpot_p99_s},
      {"itl_p50_s", &row.itl_p50_s},       {"itl_p99_s", &row.itl_p99_s},
      {"goodput_rps", &row.goodput_rps}};
  for (const auto& [column, field] : figures) {
    PPS_ASSIGN_OR_RETURN(*field, CsvOptional(t, r, column));
  }
  PPS_ASSIGN_OR_RETURN(std::optional<int> findings, CsvOptionalCount(t, r, "findings"));
  row.findings = findings.value_or(0);
  const std::optional<bool> simulated = CsvBool(t, r, "simulated");
  if (!simulated)
    return MakeError(CsvAt(t, r) + ": column 'simulated': expected true or false, got " +
                     Excerpt(CsvCell(t, r, "simulated")));
  row.simulated = *simulated;
  const std::optional<Verdict> verdict = ParseVerdict(CsvCell(t, r, "verdict"));
  if (!verdict) {
    std::string names;
    for (const std::string& name : VerdictNames()) names += (names.empty() ? "" : ", ") + name;
    return MakeError(CsvAt(t, r) + ": column 'verdict': expected one of " + names + ", got " +
                     Excerpt(CsvCell(t, r, "verdict")));
  }
  row.verdict = *verdict;
  return Status::Ok();
}

}  // namespace

std::string ResultsCsvText(const std::vector<ResultRow>& rows) {
  std::string out = CsvRow({"schema_version",
                            "sample",
                            "pp",
                            "tp",
                            "ep",
                            "concurrency",
                            "repeat",
                            "requests_completed",
                            "requests_total",
                            "request_errors",
                            "input_tps",
                            "ttft_mean_s",
                            "ttft_p50_s",
                            "ttft_p95_s",
                            "ttft_p99_s",
                            "e2e_p50_s",
                            "peak_gpu_mib",
                            "gpu_total_mib",
                            "findings",
                            "simulated",
                            "verdict",
                            "output_tps",
                            "output_tps_per_gpu",
                            "tpot_p50_s",
                            "tpot_p99_s",
                            "itl_p50_s",
                            "itl_p99_s",
                            "dp",
                            "goodput_rps",
                            "instances"});
  for (const ResultRow& r : rows)
    out += CsvRow({std::to_string(kResultsSchemaVersion),
                   r.sample,
                   std::to_string(r.layout.pp),
                   std::to_string(r.layout.tp),
                   std::to_string(r.layout.ep),
                   std::to_string(r.concurrency),
                   std::to_string(r.repeat),
                   Count(r.requests_completed),
                   Count(r.requests_total),
                   Count(r.request_errors),
                   CsvFixed(r.input_tps, 2),
                   CsvFixed(r.ttft_mean_s, 4),
                   CsvFixed(r.ttft_p50_s, 4),
                   CsvFixed(r.ttft_p95_s, 4),
                   CsvFixed(r.ttft_p99_s, 4),
                   CsvFixed(r.e2e_p50_s, 4),
                   CsvFixed(r.peak_gpu_mib, 0),
                   CsvFixed(r.gpu_total_mib, 0),
                   std::to_string(r.findings),
                   r.simulated ? "true" : "false",
                   VerdictName(r.verdict),
                   CsvFixed(r.output_tps, 2),
                   CsvFixed(r.output_tps_per_gpu, 2),
                   CsvFixed(r.tpot_p50_s, 6),
                   CsvFixed(r.tpot_p99_s, 6),
                   CsvFixed(r.itl_p50_s, 6),
                   CsvFixed(r.itl_p99_s, 6),
                   std::to_string(r.layout.dp),
                   CsvFixed(r.goodput_rps, 4),
                   std::to_string(r.layout.instances)});
  return out;
}

Result<std::vector<ResultRow>> ParseResultsCsv(const CsvTable& table) {
  for (const char* col : {"schema_version", "sample", "pp", "tp", "ep", "dp", "concurrency",
                          "repeat", "simulated", "verdict"})
    if (table.Column(col) < 0)
      return MakeError(table.path + ":1: missing column '" + col +
                       "' in the header (expected results.csv of schema version " +
                       std::to_string(kResultsSchemaVersion) + ")");
  std::vector<ResultRow> out;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (CsvCell(table, r, "schema_version") != std::to_string(kResultsSchemaVersion))
      return MakeError(CsvAt(table, r) + ": column 'schema_version': expected " +
                       std::to_string(kResultsSchemaVersion) + ", got " +
                       Excerpt(CsvCell(table, r, "schema_version")));
    ResultRow row;
    PPS_RETURN_IF_ERROR(ReadRow(table, r, row));
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<ResultRow>> ReadResultsCsv(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(path));
  return ParseResultsCsv(table);
}

}  // namespace ppsearch::evidence
