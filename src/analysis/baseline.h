#pragma once
// The baseline a search is compared against: a layout of this run, or rows
// imported from a CSV of medians (data/baseline/*.csv, or an earlier run's
// summary.csv) or from an earlier run directory. An import is only useful if
// it measured the same thing: what a CSV's rows can tell is checked here;
// two runs' settings are compared by compare/ (the report's confounder check).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/points.h"
#include "spec/spec.h"
#include "util/csv.h"
#include "util/result.h"

namespace ppsearch::analysis {

// The measured rows of a CSV of medians (evidence::ParseMediansCsv, whose
// rule leaves out a point without valid repeats), as imported points
// (imported = true).
Result<std::vector<PointSummary>> ParseBaselineCsv(const CsvTable& table);
Result<std::vector<PointSummary>> ReadBaselineCsv(const std::string& path);

// What a CSV can tell: whether it holds the baseline layout, every swept
// concurrency level, and samples of workload.requests requests.
std::vector<std::string> CheckCsvComparability(const std::vector<PointSummary>& rows,
                                               const spec::LayoutSpec& baseline,
                                               const spec::Spec& spec, const std::string& source);

// Copies what `spec` imports as its baseline into `run_dir`/metadata/
// (atomically) and returns the copy's SHA-256, which run.json records so
// that a report reads the copy only as it was made; nullopt when it imports
// none. The runner calls it at run start. Errors name the file that could
// not be read or written (an imported run directory without a summary.csv
// is one: run `ppsearch report` on it first); the caller decides whether
// that stops the run.
Result<std::optional<std::string>> CopyBaselineInto(const spec::Spec& spec,
                                                    const std::string& run_dir);

// Memory of the baseline layout as a CSV of medians states it (peak_gpu_mib,
// gpu_total_mib); no stage split.
LayoutMemory ImportedMemory(const std::vector<PointSummary>& rows, const spec::LayoutSpec& layout);

}  // namespace ppsearch::analysis
