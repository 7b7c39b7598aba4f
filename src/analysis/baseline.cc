#include "analysis/baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "evidence/evidence.h"
#include "evidence/medians_csv.h"
#include "util/files.h"
#include "util/sha256.h"

namespace ppsearch::analysis {
Result<std::vector<PointSummary>> ParseBaselineCsv(const CsvTable& table) {
  PPS_ASSIGN_OR_RETURN(evidence::MediansCsv csv, evidence::ParseMediansCsv(table));
  std::vector<PointSummary> out;
  for (const evidence::MedianRow& row : csv.rows)
    // A row with no valid repeat has nothing to take deltas against.
    if (row.measured) out.push_back(row.point);
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

Result<std::optional<std::string>> CopyBaselineInto(const spec::Spec& spec,
                                                    const std::string& run_dir) {
  std::string from, to;
  if (!spec.baseline.import_csv.empty()) {
    from = spec.baseline.import_csv;
    to = evidence::RunPaths{run_dir}.baseline_csv();
  } else if (!spec.baseline.import_run.empty()) {
    from = evidence::RunPaths{spec.baseline.import_run}.summary_csv();
    to = evidence::RunPaths{run_dir}.baseline_run_summary_csv();
  } else {
    return std::optional<std::string>();
  }
  Result<std::string> text = ReadFile(from);
  if (!text.ok())
    return MakeError("baseline not copied into " + to + ": " + text.error().message +
                     (spec.baseline.import_csv.empty()
                          ? " (run `ppsearch report " + spec.baseline.import_run + "` to write it)"
                          : ""));
  PPS_RETURN_IF_ERROR(WriteFileAtomic(to, *text));
  return std::optional<std::string>(Sha256Hex(*text));
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
