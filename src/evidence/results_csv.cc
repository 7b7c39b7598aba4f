#include "evidence/results_csv.h"

#include <algorithm>

#include "evidence/csv_cells.h"
#include "util/excerpt.h"

namespace ppsearch::evidence {
namespace {

// results.csv's columns in the file's order, each declared once: the
// header, the writer and the reader all read this table. A count, a figure
// of the sample (stats::Figures, named as stats::FigureFields names it) or
// a memory reading is an optional cell (empty: not measured); the other
// columns are written by `write` and read by ReadRow.
struct ResultsColumn {
  const char* name;
  std::string (*write)(const ResultRow&) = nullptr;
  std::optional<int> ResultRow::*count = nullptr;
  double stats::Figures::*figure = nullptr;
  std::optional<double> ResultRow::*memory = nullptr;
  int decimals = 0;
};

using R = ResultRow;
using F = stats::Figures;

const ResultsColumn kResultsColumns[] = {
    {"schema_version", [](const R&) { return std::to_string(kResultsSchemaVersion); }},
    {"sample", [](const R& r) { return r.sample; }},
    {"pp", [](const R& r) { return LayoutCells(r.layout).pp; }},
    {"tp", [](const R& r) { return LayoutCells(r.layout).tp; }},
    {"ep", [](const R& r) { return LayoutCells(r.layout).ep; }},
    {"concurrency", [](const R& r) { return std::to_string(r.concurrency); }},
    {"repeat", [](const R& r) { return std::to_string(r.repeat); }},
    {"requests_completed", nullptr, &R::requests_completed},
    {"requests_total", nullptr, &R::requests_total},
    {"request_errors", nullptr, &R::request_errors},
    {"input_tps", nullptr, nullptr, &F::input_tps, nullptr, 2},
    {"ttft_mean_s", nullptr, nullptr, &F::ttft_mean_s, nullptr, 4},
    {"ttft_p50_s", nullptr, nullptr, &F::ttft_p50_s, nullptr, 4},
    {"ttft_p95_s", nullptr, nullptr, &F::ttft_p95_s, nullptr, 4},
    {"ttft_p99_s", nullptr, nullptr, &F::ttft_p99_s, nullptr, 4},
    {"e2e_p50_s", nullptr, nullptr, &F::e2e_p50_s, nullptr, 4},
    {"peak_gpu_mib", nullptr, nullptr, nullptr, &R::peak_gpu_mib, 0},
    {"gpu_total_mib", nullptr, nullptr, nullptr, &R::gpu_total_mib, 0},
    {"findings", [](const R& r) { return std::to_string(r.findings); }},
    {"simulated", [](const R& r) { return std::string(r.simulated ? "true" : "false"); }},
    {"verdict", [](const R& r) { return std::string(VerdictName(r.verdict)); }},
    {"output_tps", nullptr, nullptr, &F::output_tps, nullptr, 2},
    {"output_tps_per_gpu", nullptr, nullptr, &F::output_tps_per_gpu, nullptr, 2},
    {"tpot_p50_s", nullptr, nullptr, &F::tpot_p50_s, nullptr, 6},
    {"tpot_p99_s", nullptr, nullptr, &F::tpot_p99_s, nullptr, 6},
    {"itl_p50_s", nullptr, nullptr, &F::itl_p50_s, nullptr, 6},
    {"itl_p99_s", nullptr, nullptr, &F::itl_p99_s, nullptr, 6},
    {"dp", [](const R& r) { return LayoutCells(r.layout).dp; }},
    {"goodput_rps", nullptr, nullptr, &F::goodput_rps, nullptr, 4},
    {"instances", [](const R& r) { return LayoutCells(r.layout).instances; }},
    {"pools", [](const R& r) { return LayoutCells(r.layout).pools; }},
    {"synthesized", [](const R& r) { return std::string(r.synthesized ? "true" : "false"); }},
};

bool Held(const ResultsColumn& c, const ResultRow& r) {
  const std::string name = stats::FieldOf(c.figure)->name;
  return std::find(r.figures_held.begin(), r.figures_held.end(), name) != r.figures_held.end();
}

// Whether the row has the figure: a sample that measured something, for a
// decode figure (stats::FigureField::decode_only) a decode sample, and for
// a synthesized sample a figure its file held.
bool Has(const ResultsColumn& c, const ResultRow& r) {
  return r.figures && (r.figures->decode || !stats::FieldOf(c.figure)->decode_only) &&
         (!r.synthesized || Held(c, r));
}

std::string Cell(const ResultsColumn& c, const ResultRow& r) {
  if (c.write != nullptr) return c.write(r);
  if (c.count != nullptr) return r.*c.count ? std::to_string(*(r.*c.count)) : std::string();
  if (c.memory != nullptr) return CsvFixed(r.*c.memory, c.decimals);
  return Has(c, r) ? CsvFixed(r.figures.value().*c.figure, c.decimals) : std::string();
}

Status ReadRow(const CsvTable& t, size_t r, ResultRow& row) {
  row.sample = CsvCell(t, r, "sample");
  PPS_ASSIGN_OR_RETURN(row.layout, CsvLayout(t, r));  // the header check requires dp
  PPS_ASSIGN_OR_RETURN(row.concurrency, CsvPositiveInt(t, r, "concurrency"));
  PPS_ASSIGN_OR_RETURN(row.repeat, CsvPositiveInt(t, r, "repeat"));
  // A sample measured something where it has an input TPS, and decoded
  // where it has a TPOT p50; it then has every figure the writer writes for
  // it, and no other, except that a synthesized one has only those its file
  // held. A column the file's header lacks (a file written before it was
  // added) is unknown, read as 0; a file without `synthesized` has none.
  if (t.Column("synthesized") >= 0) {
    const std::optional<bool> synthesized = CsvBool(t, r, "synthesized");
    if (!synthesized)
      return MakeError(CsvAt(t, r) + ": column 'synthesized': expected true or false, got " +
                       Excerpt(CsvCell(t, r, "synthesized")));
    row.synthesized = *synthesized;
  }
  if (!CsvCell(t, r, "input_tps").empty()) {
    row.figures.emplace();
    row.figures->decode = !CsvCell(t, r, "tpot_p50_s").empty();
  }
  if (row.synthesized && row.figures)
    for (const ResultsColumn& c : kResultsColumns)
      if (c.figure != nullptr && t.Column(c.name) >= 0 && !CsvCell(t, r, c.name).empty())
        row.figures_held.push_back(stats::FieldOf(c.figure)->name);
  for (const ResultsColumn& c : kResultsColumns) {
    if (c.count != nullptr) {
      PPS_ASSIGN_OR_RETURN(row.*c.count, CsvOptionalCount(t, r, c.name));
    } else if (c.memory != nullptr) {
      PPS_ASSIGN_OR_RETURN(row.*c.memory, CsvOptional(t, r, c.name));
    } else if (c.figure != nullptr && t.Column(c.name) >= 0) {
      PPS_ASSIGN_OR_RETURN(const std::optional<double> v, CsvOptional(t, r, c.name));
      if (Has(c, row) != v.has_value())
        return MakeError(CsvAt(t, r) + ": column '" + c.name + "': expected " +
                         (v ? std::string("an empty cell (the sample has no ") +
                                  (row.figures ? "decode figures: tpot_p50_s is empty)"
                                               : "figures: input_tps is empty)")
                            : std::string("a number, as the sample's other figures")));
      if (v) row.figures.value().*c.figure = *v;
    }
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
  std::vector<std::string> cells;
  for (const ResultsColumn& c : kResultsColumns) cells.push_back(c.name);
  std::string out = CsvRow(cells);
  for (const ResultRow& r : rows) {
    cells.clear();
    for (const ResultsColumn& c : kResultsColumns) cells.push_back(Cell(c, r));
    out += CsvRow(cells);
  }
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
