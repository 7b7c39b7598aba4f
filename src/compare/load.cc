#include "compare/load.h"

#include <filesystem>

#include "analysis/baseline.h"
#include "evidence/bench_summary.h"
#include "evidence/evidence.h"
#include "evidence/point_columns.h"
#include "inputs/search_inputs.h"
#include "nvidia_smi/gpu_memory.h"
#include "util/csv.h"
#include "util/files.h"
#include "util/sha256.h"

namespace ppsearch::compare {
namespace {

namespace fs = std::filesystem;

// The model config's digest and quantization (as the model reader describes
// it); empty when unreadable (moved since the run): then those settings are
// not recorded.
void ObserveModel(const spec::Spec& spec, Observed& seen) {
  Result<model::ModelDesc> model = inputs::LoadSpecModel(spec);
  if (!model.ok()) return;
  seen.model_quantization = model->quantization;
  Result<std::string> text = ReadFile(model->source_path);
  if (text.ok()) seen.model_config_sha256 = Sha256Hex(*text);
}

Observed ObserveEvidence(const analysis::RunEvidence& ev) {
  Observed seen;
  const evidence::RunPaths paths{ev.run_dir};
  for (const analysis::SampleAnalysis& s : ev.samples) {
    if (!s.completed()) continue;
    for (const auto& host : ev.spec.cluster.hosts) {
      Result<std::string> csv = ReadFile(paths.gpu(s.id, host.name));
      if (!csv.ok()) continue;  // the report names missing snapshots; here they record nothing
      Result<std::vector<nvidia_smi::GpuMemory>> gpus = nvidia_smi::ParseGpuMemoryCsv(*csv);
      if (!gpus.ok()) continue;
      for (const nvidia_smi::GpuMemory& g : *gpus) {
        if (!g.name.empty()) seen.gpu_names.insert(g.name);
        if (!g.driver_version.empty()) seen.driver_versions.insert(g.driver_version);
      }
    }
    // The report names an unreadable summary; here it records nothing.
    Result<evidence::BenchSummary> bench = evidence::ReadBenchSummary(paths, s.id);
    if (bench.ok() && bench->ready && !bench->ready->server_version.empty())
      seen.server_versions.insert(bench->ready->server_version);
  }
  ObserveModel(ev.spec, seen);
  // What the run read, where it recorded it: the file may have changed since.
  if (ev.metadata.inputs)
    for (const evidence::RunInput& i : *ev.metadata.inputs)
      if (i.key == "engine.model_config") seen.model_config_sha256 = i.sha256;
  return seen;
}

// summary.csv's `simulated` column when every row agrees.
std::optional<bool> CsvSimulated(const CsvTable& table) {
  const int col = table.Column("simulated");
  if (col < 0 || table.rows.empty()) return std::nullopt;
  const std::string first = table.rows[0][static_cast<size_t>(col)];
  for (const auto& row : table.rows)
    if (row[static_cast<size_t>(col)] != first) return std::nullopt;
  if (first == "true" || first == "1") return true;
  if (first == "false" || first == "0") return false;
  return std::nullopt;
}

Result<Side> LoadCsvSide(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(path));
  PPS_ASSIGN_OR_RETURN(std::vector<analysis::PointSummary> rows, analysis::ParseBaselineCsv(table));
  if (rows.empty())
    return MakeError(path +
                     ": no rows below the header (expected one row per layout and "
                     "concurrency)");
  Side side;
  side.points.points = rows;
  side.points.spreads_recorded =
      table.Column("input_tps_spread") >= 0 && table.Column("ttft_p50_s_spread") >= 0;
  // A run's summary.csv is described by the run it sits in.
  const std::string dir = DirName(fs::absolute(path).string());
  std::error_code ec;
  if (fs::is_regular_file(evidence::RunPaths{dir}.run_json(), ec)) {
    Result<analysis::RunEvidence> ev = analysis::LoadRunEvidence(dir);
    if (ev.ok()) {
      side.description = DescribeEvidence(*ev, path);
      side.description.what = "summary.csv of run " + ev->run_id;
      return side;
    }
  }
  side.description = DescribeCsv(rows, CsvSimulated(table), path);
  return side;
}

}  // namespace

RunDescription DescribeEvidence(const analysis::RunEvidence& ev, const std::string& source) {
  RunDescription d = DescribeRun(ev.spec, ev.metadata, ObserveEvidence(ev), source);
  d.what = "run " + ev.run_id;
  return d;
}

RunDescription DescribeImport(const spec::BaselineSpec& baseline,
                              const std::vector<analysis::PointSummary>& rows,
                              const std::string& source) {
  if (!baseline.import_run.empty()) {
    Result<analysis::RunEvidence> ev = analysis::LoadRunEvidence(baseline.import_run);
    if (ev.ok()) return DescribeEvidence(*ev, baseline.import_run);
  }
  return DescribeCsv(rows, std::nullopt, source);
}

Result<Side> LoadSide(const std::string& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status))
    return MakeError(path +
                     ": no such file or directory (expected a run directory, its summary.csv or "
                     "a CSV of medians)");
  if (!fs::is_directory(status)) return LoadCsvSide(path);
  PPS_ASSIGN_OR_RETURN(analysis::RunEvidence ev, analysis::LoadRunEvidence(path));
  Side side;
  side.description = DescribeEvidence(ev, path);
  // A point none of whose samples completed a request has no figure to
  // compare, as a CSV's row without medians.
  for (const analysis::PointSummary& p : ev.points)
    if (evidence::HasMedians(p)) side.points.points.push_back(p);
  return side;
}

}  // namespace ppsearch::compare
