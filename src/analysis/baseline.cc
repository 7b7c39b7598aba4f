#include "analysis/baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/files.h"

namespace ppsearch::analysis {
namespace {

std::optional<double> OptionalNumber(const CsvTable& table, size_t row, const std::string& name,
                                     Error* error) {
  if (table.Column(name) < 0) return std::nullopt;
  const std::string& cell = table.rows[row][static_cast<size_t>(table.Column(name))];
  if (cell.empty()) return std::nullopt;
  Result<double> v = CsvNumber(table, row, name);
  if (!v.ok()) {
    *error = v.error();
    return std::nullopt;
  }
  return *v;
}

}  // namespace

Result<std::vector<PointSummary>> ParseBaselineCsv(const CsvTable& table) {
  for (const char* col : {"pp", "tp", "ep", "concurrency", "input_tps_median", "ttft_p50_s_median"})
    if (table.Column(col) < 0)
      return MakeError(
          table.path + ":1: missing column '" + col +
          "' in the header (a CSV of medians needs pp, tp, ep, concurrency, input_tps_median, "
          "ttft_p50_s_median)");
  std::vector<PointSummary> out;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    PointSummary p;
    PPS_ASSIGN_OR_RETURN(double pp, CsvNumber(table, i, "pp"));
    PPS_ASSIGN_OR_RETURN(double tp, CsvNumber(table, i, "tp"));
    PPS_ASSIGN_OR_RETURN(double ep, CsvNumber(table, i, "ep"));
    PPS_ASSIGN_OR_RETURN(double c, CsvNumber(table, i, "concurrency"));
    PPS_ASSIGN_OR_RETURN(p.input_tps_median, CsvNumber(table, i, "input_tps_median"));
    PPS_ASSIGN_OR_RETURN(p.ttft_p50_s_median, CsvNumber(table, i, "ttft_p50_s_median"));
    p.layout.pp = static_cast<int>(pp);
    p.layout.tp = static_cast<int>(tp);
    p.layout.ep = static_cast<int>(ep);
    p.layout.origin.file = table.path;
    p.layout.origin.line = table.row_lines[i];
    p.concurrency = static_cast<int>(c);
    Error error;
    p.repeats = static_cast<int>(OptionalNumber(table, i, "repeats", &error).value_or(0));
    p.valid_repeats = p.repeats;
    p.requests_completed =
        static_cast<int>(OptionalNumber(table, i, "requests_completed", &error).value_or(0));
    p.requests_total =
        static_cast<int>(OptionalNumber(table, i, "requests_total", &error).value_or(0));
    p.ttft_p95_s_median = OptionalNumber(table, i, "ttft_p95_s_median", &error).value_or(0);
    p.input_tps_spread = OptionalNumber(table, i, "input_tps_spread", &error).value_or(0);
    p.ttft_p50_s_spread = OptionalNumber(table, i, "ttft_p50_s_spread", &error).value_or(0);
    p.peak_gpu_mib = OptionalNumber(table, i, "peak_gpu_mib", &error);
    p.gpu_total_mib = OptionalNumber(table, i, "gpu_total_mib", &error);
    p.headroom_mib = OptionalNumber(table, i, "headroom_mib", &error);
    if (!p.headroom_mib && p.peak_gpu_mib && p.gpu_total_mib)
      p.headroom_mib = *p.gpu_total_mib - *p.peak_gpu_mib;
    if (!error.message.empty()) return error;
    p.imported = true;
    out.push_back(p);
  }
  return out;
}

Result<std::vector<PointSummary>> ReadBaselineCsv(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(path));
  return ParseBaselineCsv(table);
}

std::vector<std::string> CheckCsvComparability(const std::vector<PointSummary>& rows,
                                               const spec::LayoutSpec& baseline,
                                               const spec::Spec& spec, const std::string& source) {
  std::vector<std::string> out;
  std::vector<const PointSummary*> mine;
  for (const PointSummary& r : rows)
    if (r.layout == baseline) mine.push_back(&r);
  if (mine.empty()) {
    out.push_back(fmt::format("baseline CSV {} has no row for the baseline layout {}", source,
                              baseline.Label()));
    return out;
  }
  for (int c : spec.sweep.concurrency) {
    if (std::none_of(mine.begin(), mine.end(),
                     [c](const PointSummary* r) { return r->concurrency == c; }))
      out.push_back(
          fmt::format("baseline CSV {} has no {} row at concurrency {}: no deltas at C={}", source,
                      baseline.Label(), c, c));
  }
  return out;
}

Status CopyBaselineInto(const spec::Spec& spec, const std::string& run_dir) {
  std::string from, to;
  if (!spec.baseline.import_csv.empty()) {
    from = spec.baseline.import_csv;
    to = run_dir + "/metadata/" + kBaselineCsvCopy;
  } else if (!spec.baseline.import_run.empty()) {
    from = spec.baseline.import_run + "/summary.csv";
    to = run_dir + "/metadata/" + kBaselineRunSummaryCopy;
  } else {
    return Status::Ok();
  }
  Result<std::string> text = ReadFile(from);
  if (!text.ok())
    return MakeError("baseline not copied into " + to + ": " + text.error().message +
                     (spec.baseline.import_csv.empty()
                          ? " (run `ppsearch report " + spec.baseline.import_run + "` to write it)"
                          : ""));
  return WriteFileAtomic(to, *text);
}

LayoutMemory ImportedMemory(const std::vector<PointSummary>& rows, const spec::LayoutSpec& layout) {
  LayoutMemory m;
  m.layout = layout;
  m.imported = true;
  for (const PointSummary& r : rows) {
    if (!(r.layout == layout) || !r.peak_gpu_mib) continue;
    if (!m.peak_gpu_mib || *r.peak_gpu_mib > *m.peak_gpu_mib) {
      m.peak_gpu_mib = r.peak_gpu_mib;
      m.gpu_total_mib = r.gpu_total_mib;
    }
    if (r.headroom_mib && (!m.headroom_mib || *r.headroom_mib < *m.headroom_mib))
      m.headroom_mib = r.headroom_mib;
  }
  if (m.peak_gpu_mib && m.gpu_total_mib) m.remaining_mib = *m.gpu_total_mib - *m.peak_gpu_mib;
  return m;
}

}  // namespace ppsearch::analysis
