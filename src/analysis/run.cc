#include "analysis/run.h"

#include <algorithm>
#include <filesystem>

#include "analysis/baseline.h"
#include "evidence/evidence.h"
#include "gpu/gpu_memory.h"
#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch::analysis {
namespace {

namespace fs = std::filesystem;

// Files directly in `dir` ending with `ext`, sorted by name.
std::vector<fs::path> FilesIn(const std::string& dir, const std::string& ext) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ext) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

int NodeIndex(const spec::Spec& spec, const std::string& host) {
  for (size_t i = 0; i < spec.cluster.hosts.size(); ++i)
    if (spec.cluster.hosts[i].name == host) return static_cast<int>(i);
  return -1;
}

SampleInputs ReadSample(const evidence::RunPaths& paths, const spec::Spec& spec,
                        const evidence::SampleId& id, evidence::SampleState state,
                        std::vector<std::string>& warnings) {
  SampleInputs in;
  in.id = id;
  in.state = state;
  in.requests_expected = spec.workload.requests;
  const bool completed = state == evidence::SampleState::kCompleted;
  const std::string name = id.str();
  Result<std::vector<workload::RequestRecord>> records = evidence::ReadRecords(paths.raw(id));
  if (records.ok()) {
    in.records = std::move(records).value();
  } else if (completed) {
    std::error_code ec;
    in.problems.push_back(fs::exists(paths.raw(id), ec) ? records.error().message
                                                        : "raw/" + name + ".jsonl is missing");
  }
  const std::vector<fs::path> logs = FilesIn(paths.root + "/service/" + name, ".log");
  for (const fs::path& log : logs) {
    Result<std::string> text = ReadFile(log.string());
    const std::string rel = "service/" + name + "/" + log.filename().string();
    if (text.ok())
      in.logs.push_back({rel, *text});
    else
      warnings.push_back(rel + ": " + text.error().message);
  }
  if (completed && logs.empty())
    warnings.push_back("sample " + name + " has no server log under service/" + name +
                       "/: its failures could not be audited");
  const std::vector<fs::path> csvs = FilesIn(paths.root + "/gpu/" + name, ".csv");
  for (const fs::path& csv : csvs) {
    const std::string rel = "gpu/" + name + "/" + csv.filename().string();
    Result<std::string> text = ReadFile(csv.string());
    Result<std::vector<gpu::GpuMemory>> gpus =
        text.ok() ? gpu::ParseGpuMemoryCsv(*text, rel)
                  : Result<std::vector<gpu::GpuMemory>>(text.error());
    if (!gpus.ok()) {
      warnings.push_back(gpus.error().message);
      continue;
    }
    const std::string host = csv.stem().string();
    in.gpu.push_back({host, NodeIndex(spec, host), std::move(gpus).value()});
  }
  if (completed && csvs.empty())
    warnings.push_back("sample " + name + " has no GPU memory snapshot under gpu/" + name + "/");
  return in;
}

std::string StringOr(const nlohmann::json& j, const char* key, const std::string& fallback) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

Result<spec::Spec> LoadRunSpec(const evidence::RunPaths& paths, const nlohmann::json& run_json) {
  const std::string spec_file = paths.metadata("spec.toml");
  Result<std::string> text = ReadFile(spec_file);
  if (!text.ok())
    return MakeError(paths.root +
                     ": not a complete run directory: metadata/spec.toml is missing (" +
                     text.error().message + ")");
  std::vector<std::string> overrides;
  if (run_json.contains("overrides") && run_json["overrides"].is_array())
    for (const auto& o : run_json["overrides"])
      if (o.is_string()) overrides.push_back(o.get<std::string>());
  // The original path, so relative paths in the spec resolve as they did in the run.
  const std::string spec_path = StringOr(run_json, "spec_path", spec_file);
  Result<spec::Spec> spec = spec::ParseSpec(*text, spec_path, overrides);
  if (!spec.ok()) return MakeError(spec_file + " (as " + spec_path + "): " + spec.error().message);
  return spec;
}

// The sweep the run actually ran, when metadata/spec.resolved.json records it
// (a run narrowed with --layout or --concurrency); else the spec's own.
void ApplyResolvedSweep(const evidence::RunPaths& paths, spec::Spec& spec) {
  Result<std::string> text = ReadFile(paths.metadata("spec.resolved.json"));
  if (!text.ok()) return;
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("sweep") || !j["sweep"].is_object()) return;
  const nlohmann::json& sweep = j["sweep"];
  if (sweep.contains("layouts") && sweep["layouts"].is_array() && !sweep["layouts"].empty()) {
    std::vector<spec::LayoutSpec> layouts;
    for (const auto& l : sweep["layouts"]) {
      for (const char* key : {"pp", "tp", "ep"})
        if (!l.is_object() || !l.contains(key) || !l[key].is_number_integer()) return;
      spec::LayoutSpec layout;
      layout.pp = l["pp"].get<int>();
      layout.tp = l["tp"].get<int>();
      layout.ep = l["ep"].get<int>();
      for (const spec::LayoutSpec& written : spec.sweep.layouts)
        if (written == layout) layout = written;  // keep where it was written
      layouts.push_back(layout);
    }
    spec.sweep.layouts = layouts;
  }
  if (sweep.contains("concurrency") && sweep["concurrency"].is_array() &&
      !sweep["concurrency"].empty()) {
    std::vector<int> levels;
    for (const auto& c : sweep["concurrency"])
      if (c.is_number_integer()) levels.push_back(c.get<int>());
    if (!levels.empty()) spec.sweep.concurrency = levels;
  }
  if (sweep.contains("repeats") && sweep["repeats"].is_number_integer())
    spec.sweep.repeats = sweep["repeats"].get<int>();
}

}  // namespace

Result<RunEvidence> LoadRunEvidence(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec))
    return MakeError(run_dir +
                     ": no such run directory (expected results/<RUN_ID>/ with "
                     "metadata/run.json, metadata/spec.toml and manifest.jsonl)");
  RunEvidence ev;
  ev.run_dir = run_dir;
  const evidence::RunPaths paths{run_dir};
  Result<std::string> run_text = ReadFile(paths.metadata("run.json"));
  if (!run_text.ok())
    return MakeError(run_dir + ": not a ppsearch run directory: metadata/run.json is missing");
  ev.run_json = nlohmann::json::parse(*run_text, nullptr, /*allow_exceptions=*/false);
  if (ev.run_json.is_discarded() || !ev.run_json.is_object())
    return MakeError(paths.metadata("run.json") + ": not a JSON object");
  const auto simulated = ev.run_json.find("simulated");
  ev.simulated =
      simulated != ev.run_json.end() && simulated->is_boolean() && simulated->get<bool>();
  ev.run_id =
      StringOr(ev.run_json, "run_id", fs::path(run_dir).lexically_normal().filename().string());
  if (ev.run_id.empty())
    ev.run_id = fs::path(run_dir).lexically_normal().parent_path().filename().string();
  ev.engine = StringOr(ev.run_json, "engine", "");
  ev.command_line = StringOr(ev.run_json, "command_line", "");
  PPS_ASSIGN_OR_RETURN(ev.spec, LoadRunSpec(paths, ev.run_json));
  ApplyResolvedSweep(paths, ev.spec);
  PPS_ASSIGN_OR_RETURN(auto manifest, evidence::ReadManifest(paths));
  std::error_code exists_ec;
  if (!fs::exists(paths.manifest(), exists_ec))
    ev.warnings.push_back(paths.manifest() + " is missing: no sample is recorded as completed");
  for (const auto& [name, state] : manifest) {
    Result<evidence::SampleId> id = evidence::ParseSampleId(name);
    if (!id.ok()) {
      ev.warnings.push_back(paths.manifest() + ": " + id.error().message);
      continue;
    }
    ev.samples.push_back(AnalyseSample(ReadSample(paths, ev.spec, *id, state, ev.warnings)));
  }
  for (const spec::LayoutSpec& layout : ev.spec.sweep.layouts)
    for (int c : ev.spec.sweep.concurrency)
      for (int r = 1; r <= ev.spec.sweep.repeats; ++r) {
        evidence::SampleId id{layout, c, r};
        auto it = std::find_if(ev.samples.begin(), ev.samples.end(),
                               [&](const SampleAnalysis& s) { return s.id == id; });
        if (it == ev.samples.end())
          ev.missing.push_back({id.str(), "not run"});
        else if (!it->completed())
          ev.missing.push_back({id.str(), evidence::SampleStateName(it->state)});
      }
  ev.points = AggregatePoints(ev.samples, ev.spec.sweep.layouts, ev.spec.sweep.concurrency);
  return ev;
}

namespace {

// Rows of `layout` in `rows`; when no layout is named, the rows of the one
// layout the import holds.
std::vector<PointSummary> RowsOf(const std::vector<PointSummary>& rows,
                                 std::optional<spec::LayoutSpec>& layout) {
  if (!layout && !rows.empty()) layout = rows[0].layout;
  std::vector<PointSummary> out;
  for (const PointSummary& r : rows)
    if (r.layout == *layout) out.push_back(r);
  return out;
}

void ImportBaseline(RunAnalysis& a) {
  const spec::Spec& spec = a.spec();
  std::vector<PointSummary> rows;
  if (!spec.baseline.import_csv.empty()) {
    a.baseline_source = spec.baseline.import_csv;
    Result<std::vector<PointSummary>> read = ReadBaselineCsv(spec.baseline.import_csv);
    if (!read.ok()) {
      a.comparability.push_back("baseline CSV not imported: " + read.error().message);
      return;
    }
    rows = RowsOf(*read, a.baseline_layout);
    if (!a.baseline_layout) {
      a.comparability.push_back("baseline CSV " + a.baseline_source + " holds no row");
      return;
    }
    a.comparability = CheckCsvComparability(*read, *a.baseline_layout, spec, a.baseline_source);
  } else {
    a.baseline_source = spec.baseline.import_run;
    Result<RunEvidence> other = LoadRunEvidence(spec.baseline.import_run);
    if (!other.ok()) {
      a.comparability.push_back("baseline run not imported: " + other.error().message);
      return;
    }
    std::vector<PointSummary> all = other->points;
    Result<std::vector<PointSummary>> summary =
        ReadBaselineCsv(evidence::RunPaths{spec.baseline.import_run}.file("summary.csv"));
    if (summary.ok()) all = *summary;
    for (PointSummary& p : all) p.imported = true;
    rows = RowsOf(all, a.baseline_layout);
    if (!a.baseline_layout) {
      a.comparability.push_back("baseline run " + a.baseline_source + " holds no completed sample");
      return;
    }
    if (rows.empty())
      a.comparability.push_back("baseline run " + a.baseline_source +
                                " has no completed sample of " + a.baseline_layout->Label());
    std::vector<std::string> diffs = CheckRunComparability(spec, a.evidence.run_json, other->spec,
                                                           other->run_json, a.baseline_source);
    a.comparability.insert(a.comparability.end(), diffs.begin(), diffs.end());
  }
  a.baseline_imported = true;
  a.baseline_rows = rows;
}

void PlanLayouts(RunAnalysis& a) {
  const spec::Spec& spec = a.spec();
  Result<model::ModelDesc> model = model::LoadModel(spec.engine.model_config);
  Result<hardware::HardwareProfile> hw = hardware::LoadHardwareProfile(spec.cluster.hardware);
  if (!model.ok() || !hw.ok()) {
    a.warnings.push_back("communication-domain analysis and per-stage memory skipped: " +
                         (model.ok() ? hw.error().message : model.error().message));
    return;
  }
  a.plan = plan::PlanSearch(spec, *model, *hw);
  if (a.baseline_imported && a.baseline_layout &&
      std::find(spec.sweep.layouts.begin(), spec.sweep.layouts.end(), *a.baseline_layout) ==
          spec.sweep.layouts.end())
    a.baseline_plan = plan::PlanLayout(*a.baseline_layout, spec, *model, *hw);
}

}  // namespace

Result<RunAnalysis> AnalyseRun(const std::string& run_dir) {
  RunAnalysis a;
  PPS_ASSIGN_OR_RETURN(a.evidence, LoadRunEvidence(run_dir));
  a.warnings = a.evidence.warnings;
  const spec::Spec& spec = a.spec();
  a.baseline_layout = spec.baseline.layout;
  a.points = a.evidence.points;
  if (!spec.baseline.import_csv.empty() || !spec.baseline.import_run.empty()) {
    ImportBaseline(a);
  } else if (a.baseline_layout) {
    a.baseline_source = "this run";
    for (const PointSummary& p : a.points)
      if (p.layout == *a.baseline_layout) a.baseline_rows.push_back(p);
  }
  if (a.baseline_layout) {
    ApplyBaseline(a.points, a.baseline_rows, *a.baseline_layout);
    ApplyBaseline(a.baseline_rows, a.baseline_rows, *a.baseline_layout);
  }
  PlanLayouts(a);
  for (const spec::LayoutSpec& layout : spec.sweep.layouts) {
    const plan::LayoutPlan* lp = nullptr;
    if (a.plan)
      for (const plan::LayoutPlan& candidate : a.plan->layouts)
        if (candidate.layout == layout) lp = &candidate;
    a.memory.push_back(AnalyseLayoutMemory(layout, a.evidence.samples, lp));
  }
  if (a.baseline_imported && a.baseline_layout)
    a.memory.push_back(ImportedMemory(a.baseline_rows, *a.baseline_layout));
  // Warnings about engine settings (args, env, version) are the flags not to
  // carry into the next run; the rest are about this spec's workload.
  std::vector<std::string> flags;
  if (a.plan)
    for (const plan::Diagnostic& w : a.plan->warnings)
      (w.location.key.rfind("engine.", 0) == 0 ? flags : a.spec_warnings).push_back(w.message);
  a.decision = Decide(spec, a.evidence.samples, a.points, a.memory, flags);
  return a;
}

}  // namespace ppsearch::analysis
