#include "analysis/run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "analysis/baseline.h"
#include "evidence/evidence.h"
#include "evidence/run_metadata.h"
#include "evidence/run_spec.h"
#include "evidence/spec_json.h"
#include "inputs/search_inputs.h"
#include "nvidia_smi/gpu_memory.h"
#include "spec/spec_parser.h"
#include "util/files.h"
#include "util/json_text.h"
#include "util/sha256.h"

namespace ppsearch::analysis {
namespace {

namespace fs = std::filesystem;

// Entries directly in `dir` whose names end with `ext`, sorted by name:
// every kind of entry, so a directory, link or FIFO named like evidence is
// refused when read rather than passed over in silence.
std::vector<fs::path> EntriesIn(const std::string& dir, const std::string& ext) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ext) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The folders a sample's files sit in must be folders of the run, not links
// to elsewhere: a read opens a file's last component without following a
// link, but would pass through a linked folder. False when one is not: the
// sample's files are then not read (and, completed, it is invalid evidence).
bool OwnFolders(const evidence::RunPaths& paths, const std::string& name, SampleInputs& in) {
  bool own = true;
  const evidence::RunPaths place;  // the same folders by their place in the run
  const std::pair<std::string, std::string> folders[] = {
      {paths.raw_dir(), place.raw_dir()},
      {paths.bench_dir(), place.bench_dir()},
      {paths.gpu_dir(), place.gpu_dir()},
      {paths.service_dir(), place.service_dir()},
      {paths.gpu_dir(name), place.gpu_dir(name)},
      {paths.service_dir(name), place.service_dir(name)}};
  for (const auto& [folder, rel] : folders) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(folder, ec);
    if (!fs::exists(st) || fs::is_directory(st)) continue;
    own = false;
    if (in.state == evidence::SampleState::kCompleted)
      in.invalid_evidence.push_back(
          {evidence::kNotARegularFile, rel + "/",
           std::string(fs::is_symlink(st) ? "is a symbolic link" : "is not a directory") +
               ", expected a directory of the run; nothing in it is read"});
  }
  return own;
}

// Whether anything (a dangling link included) is at `path`.
bool Present(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

// One evidence file of a sample, read as evidence is read
// (evidence::ReadEvidenceFile); a file that is there but cannot be read is
// invalid evidence of a completed sample, and nullopt comes back.
std::optional<std::string> ReadSampleFile(const std::string& path, const std::string& rel,
                                          SampleInputs& in) {
  Result<std::string> text = evidence::ReadEvidenceFile(path);
  if (text.ok()) return std::move(text).value();
  if (in.state == evidence::SampleState::kCompleted)
    in.invalid_evidence.push_back(evidence::UnreadableEvidence(path, rel, text.error().message));
  return std::nullopt;
}

int NodeIndex(const spec::Spec& spec, const std::string& host) {
  for (size_t i = 0; i < spec.cluster.hosts.size(); ++i)
    if (spec.cluster.hosts[i].name == host) return static_cast<int>(i);
  return -1;
}

// Distinct GPU indices of a snapshot (a file may repeat the GPUs per snapshot).
size_t DistinctGpus(const std::vector<nvidia_smi::GpuMemory>& gpus) {
  std::vector<int> seen;
  for (const nvidia_smi::GpuMemory& g : gpus)
    if (std::find(seen.begin(), seen.end(), g.index) == seen.end()) seen.push_back(g.index);
  return seen.size();
}

void ReadRawRecords(const evidence::RunPaths& paths, const std::string& name,
                    const evidence::SampleId& id, bool completed, SampleInputs& in) {
  const std::string rel = evidence::RunPaths{}.raw(name);
  if (!Present(paths.raw(id))) {
    if (completed) in.problems.push_back(rel + " is missing: the sample has no request record");
    return;
  }
  std::optional<std::string> text = ReadSampleFile(paths.raw(id), rel, in);
  if (!text) return;
  Result<std::vector<workload::RequestRecord>> records = evidence::ParseRecords(*text, rel);
  if (!records.ok()) {
    if (completed) in.problems.push_back(records.error().message);
    return;
  }
  in.records = std::move(records).value();
  if (completed && in.records.empty())
    in.problems.push_back(rel + " is empty: the sample has no request record");
}

// The benchmark's summary is written last: a completed sample without a
// whole one has evidence that is not whole either.
// A summary that says the sample was (or was not) simulated where run.json
// says the opposite of the run was edited on one side, and the report
// cannot tell a measurement from a prediction.
void ReadBenchSummary(const evidence::RunPaths& paths, const std::string& name,
                      const evidence::SampleId& id, std::optional<bool> run_simulated,
                      SampleInputs& in) {
  const std::string rel = evidence::RunPaths{}.bench(name);
  if (!Present(paths.bench(id))) {
    in.invalid_evidence.push_back(
        {evidence::kBenchSummaryMissing, rel,
         "the sample is recorded as completed, but its benchmark summary, written last, is not "
         "there"});
    return;
  }
  std::optional<std::string> text = ReadSampleFile(paths.bench(id), rel, in);
  if (!text) return;
  evidence::BenchSummary bench;
  for (auto& p : evidence::CheckBenchSummary(*text, name, rel, &bench))
    in.invalid_evidence.push_back(std::move(p));
  if (bench.simulated && run_simulated && *bench.simulated != *run_simulated)
    in.invalid_evidence.push_back(
        {evidence::kSimulatedContradictsRun, rel,
         fmt::format("the sample says it was {}simulated, but {} says the run was {}: one of "
                     "them was changed, so the sample is neither a measurement nor a prediction",
                     *bench.simulated ? "" : "not ", evidence::RunPaths{}.run_json(),
                     *run_simulated ? "simulated" : "measured")});
  if (bench.ready && bench.ready->ready_s >= 0) in.ready_s = bench.ready->ready_s;
  in.noise_factor = bench.noise_factor;
  in.synthesized = bench.synthesis.has_value();
  if (bench.synthesis) {
    in.figures_from_file = bench.synthesis->figures_from_file;
    if (in.figures_from_file.empty())
      in.figures_from_file = {"input_tps", "ttft_p50_s", "ttft_p95_s"};
  }
  in.disaggregation = bench.disaggregation;
}

// The hosts a sample runs servers on (spec::ServerNodes).
std::vector<spec::HostSpec> ServerHosts(const spec::Spec& spec, const evidence::SampleId& id) {
  std::vector<spec::HostSpec> out;
  for (int node : spec::ServerNodes(spec, id.layout)) out.push_back(spec.cluster.hosts[node]);
  return out;
}

// Every host that runs a server leaves a server log per sample; files of
// other hosts found there are scanned too.
void ReadLogs(const evidence::RunPaths& paths, const spec::Spec& spec, const std::string& name,
              const evidence::SampleId& id, bool completed, SampleInputs& in) {
  for (const spec::HostSpec& host : ServerHosts(spec, id)) {
    if (!completed || Present(paths.service(id, host.name))) continue;
    ++in.logs_missing;
    in.problems.push_back(evidence::RunPaths{}.service(name, host.name) + " is missing: node " +
                          host.name + "'s failures could not be audited");
  }
  for (const fs::path& log : EntriesIn(paths.service_dir(name), ".log")) {
    const std::string rel = evidence::RunPaths{}.service_dir(name) + "/" + log.filename().string();
    if (std::optional<std::string> text = ReadSampleFile(log.string(), rel, in))
      in.logs.push_back({rel, std::move(*text)});
    else if (completed)
      ++in.logs_missing;  // not scanned: the checks must not say every log was
  }
}

// Every host that runs a server leaves an nvidia-smi snapshot of all its GPUs.
void ReadSnapshots(const evidence::RunPaths& paths, const spec::Spec& spec, const std::string& name,
                   const evidence::SampleId& id, bool completed, SampleInputs& in) {
  for (const spec::HostSpec& host : ServerHosts(spec, id)) {
    if (!completed || Present(paths.gpu(id, host.name))) continue;
    in.problems.push_back(evidence::RunPaths{}.gpu(name, host.name) + " is missing: node " +
                          host.name + "'s memory is not in the headroom check");
  }
  for (const fs::path& csv : EntriesIn(paths.gpu_dir(name), ".csv")) {
    const std::string rel = evidence::RunPaths{}.gpu_dir(name) + "/" + csv.filename().string();
    const std::string host = csv.stem().string();
    std::optional<std::string> text = ReadSampleFile(csv.string(), rel, in);
    if (!text) continue;
    Result<std::vector<nvidia_smi::GpuMemory>> gpus = nvidia_smi::ParseGpuMemoryCsv(*text, rel);
    if (!gpus.ok()) {
      if (completed) in.problems.push_back(gpus.error().message);
      continue;
    }
    const int node = NodeIndex(spec, host);
    const size_t found = DistinctGpus(*gpus);
    if (completed && node >= 0 && found < static_cast<size_t>(spec.cluster.gpus_per_node))
      in.problems.push_back(fmt::format(
          "{}: holds {} of the node's {} GPUs (cluster.gpus_per_node): a truncated snapshot; "
          "the missing GPUs are not in the headroom check",
          rel, found, spec.cluster.gpus_per_node));
    in.gpu.push_back({host, node, std::move(gpus).value()});
  }
}

SampleInputs ReadSample(const evidence::RunPaths& paths, const RunEvidence& ev,
                        const evidence::ManifestEntry& entry, const evidence::SampleId& id) {
  const spec::Spec& spec = ev.spec;
  SampleInputs in = SampleInputsFor(spec, id);
  in.state = entry.state;
  in.engine_verdict = entry.verdict;
  in.engine_detail = entry.detail;
  for (const std::string& conflict : entry.conflicts)
    in.invalid_evidence.push_back({evidence::kConflictingVerdicts, "manifest.jsonl", conflict});
  const bool completed = entry.state == evidence::SampleState::kCompleted;
  const std::string name = id.str();
  if (!OwnFolders(paths, name, in)) return in;
  ReadRawRecords(paths, name, id, completed, in);
  if (completed) ReadBenchSummary(paths, name, id, ev.metadata.simulated, in);
  ReadLogs(paths, spec, name, id, completed, in);
  ReadSnapshots(paths, spec, name, id, completed, in);
  return in;
}

bool InSweep(const spec::SweepSpec& sweep, const evidence::SampleId& id) {
  return std::find(sweep.layouts.begin(), sweep.layouts.end(), id.layout) != sweep.layouts.end() &&
         std::find(sweep.concurrency.begin(), sweep.concurrency.end(), id.concurrency) !=
             sweep.concurrency.end() &&
         id.repeat >= 1 && id.repeat <= sweep.repeats;
}

}  // namespace

Result<RunEvidence> LoadRunEvidence(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec))
    return MakeError(run_dir + ": no such run directory (expected results/<RUN_ID>/ with " +
                     evidence::RunPaths{}.run_json() + ", " + evidence::RunPaths{}.spec_toml() +
                     " and " + evidence::RunPaths{}.manifest() + ")");
  RunEvidence ev;
  ev.run_dir = run_dir;
  const evidence::RunPaths paths{run_dir};
  PPS_ASSIGN_OR_RETURN(ev.metadata, evidence::ReadRunMetadata(paths));
  ev.simulated = ev.metadata.simulated.value_or(false);
  ev.run_id = ev.metadata.run_id.empty() ? fs::path(run_dir).lexically_normal().filename().string()
                                         : ev.metadata.run_id;
  if (ev.run_id.empty())
    ev.run_id = fs::path(run_dir).lexically_normal().parent_path().filename().string();
  ev.engine = ev.metadata.engine;
  ev.command_line = ev.metadata.command_line;
  PPS_ASSIGN_OR_RETURN(ev.spec, evidence::ReadRunSpec(paths, ev.metadata));
  evidence::ApplyRecordedSweep(paths, ev.spec);
  PPS_ASSIGN_OR_RETURN(evidence::Manifest manifest, evidence::ReadManifestEntries(paths));
  if (!manifest.exists)
    ev.warnings.push_back(paths.manifest() + " is missing: no sample is recorded as completed");
  ev.problems = manifest.problems;
  ev.warnings.insert(ev.warnings.end(), manifest.warnings.begin(), manifest.warnings.end());
  for (const evidence::ManifestEntry& entry : manifest.entries) {
    const std::string where = "manifest.jsonl:" + std::to_string(entry.line);
    Result<evidence::SampleId> id = evidence::ParseSampleId(entry.sample);
    if (!id.ok()) {
      ev.problems.push_back(where + ": " + id.error().message + "; the sample was skipped");
      continue;
    }
    if (!InSweep(ev.spec.sweep, *id)) {
      ev.problems.push_back(where + ": sample " + entry.sample +
                            " is not in the sweep of metadata/spec.toml (" +
                            std::to_string(ev.spec.sweep.sample_count()) +
                            " samples); it was left out of the results");
      continue;
    }
    ev.samples.push_back(AnalyseSample(ReadSample(paths, ev, entry, *id)));
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
  if (ev.metadata.adaptive) {
    Result<evidence::Trajectory> trajectory = evidence::ReadTrajectory(
        paths, ev.spec.sweep.layouts.size() * ev.spec.sweep.concurrency.size());
    std::set<std::string> seen;
    std::vector<std::string> ran;  // in run order, each once
    for (const SampleAnalysis& s : ev.samples)
      if (seen.insert(s.name).second) ran.push_back(s.name);
    Status steps = trajectory.ok() ? evidence::CheckTrajectorySteps(
                                         *trajectory, ev.spec.sweep.layouts,
                                         ev.spec.sweep.concurrency, ev.spec.sweep.repeats, ran)
                                   : Status(trajectory.error());
    if (!steps.ok()) {
      ev.warnings.push_back(steps.error().message + "; the adaptive run's trajectory is left out");
    } else {
      ev.trajectory = std::move(trajectory).value();
      if (ev.trajectory->stop && ev.trajectory->stop->reason != "budget") {
        std::vector<MissingSample> kept;
        for (MissingSample& m : ev.missing) {
          if (m.state == "not run")
            ev.not_needed.push_back(m.name);
          else
            kept.push_back(std::move(m));
        }
        ev.missing = std::move(kept);
      }
    }
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

// metadata/<name> of the run when the runner copied the baseline there;
// nullopt when it holds none, and `source` (what the spec imports) is read
// instead. An error when what would be read is no longer what run.json
// hashed at start: its rows would change every delta of the run.
Result<std::optional<std::string>> BaselineCopy(const RunAnalysis& a,
                                                std::string (evidence::RunPaths::*file)() const,
                                                const std::string& source) {
  const std::string path = (evidence::RunPaths{a.evidence.run_dir}.*file)();
  const std::string name = (evidence::RunPaths{}.*file)();
  std::error_code ec;
  const bool copied = fs::is_regular_file(path, ec);
  const std::optional<std::string>& then = a.evidence.metadata.baseline_sha256;
  if (then) {
    const Result<std::string> now = Sha256File(copied ? path : source);
    if (!now.ok() || *now != *then)
      return MakeError(
          fmt::format("{} is not what the run copied at start (SHA-256 {} then, {} now, {}'s "
                      "baseline_sha256): its rows were not imported",
                      copied ? name : source + " (" + name + ", the run's copy, is missing)",
                      then->substr(0, 12), now.ok() ? now->substr(0, 12) : now.error().message,
                      evidence::RunPaths{}.run_json()));
  }
  return copied ? std::optional<std::string>(path) : std::nullopt;
}

void ImportBaselineCsv(RunAnalysis& a) {
  const spec::Spec& spec = a.spec();
  a.baseline_source = spec.baseline.import_csv;
  a.baseline_file = spec.baseline.import_csv;
  const Result<std::optional<std::string>> copied =
      BaselineCopy(a, &evidence::RunPaths::baseline_csv, spec.baseline.import_csv);
  if (!copied.ok()) {
    a.comparability.push_back("baseline CSV not imported: " + copied.error().message);
    return;
  }
  if (const std::optional<std::string>& copy = *copied) {
    a.baseline_file = *copy;
    a.baseline_note = "baseline rows read from " + evidence::RunPaths{}.baseline_csv() +
                      ", the copy of " + spec.baseline.import_csv + " made at run start";
  } else {
    a.baseline_note = "baseline rows read from " + spec.baseline.import_csv +
                      " (baseline.import_csv; the run holds no copy in metadata/)";
  }
  Result<std::vector<PointSummary>> read = ReadBaselineCsv(a.baseline_file);
  if (!read.ok()) {
    a.comparability.push_back("baseline CSV not imported: " + read.error().message);
    return;
  }
  std::vector<PointSummary> rows = RowsOf(*read, a.baseline_layout);
  if (!a.baseline_layout) {
    a.comparability.push_back("baseline CSV " + a.baseline_source + " holds no row");
    return;
  }
  a.comparability = CheckCsvComparability(*read, *a.baseline_layout, spec, a.baseline_source);
  a.baseline_imported = true;
  a.baseline_rows = rows;
}

void ImportBaselineRun(RunAnalysis& a) {
  const spec::Spec& spec = a.spec();
  a.baseline_source = spec.baseline.import_run;
  const Result<std::optional<std::string>> copied =
      BaselineCopy(a, &evidence::RunPaths::baseline_run_summary_csv,
                   evidence::RunPaths{spec.baseline.import_run}.summary_csv());
  if (!copied.ok()) {
    a.comparability.push_back("baseline run not imported: " + copied.error().message);
    return;
  }
  const std::optional<std::string>& copy = *copied;
  Result<RunEvidence> other = LoadRunEvidence(spec.baseline.import_run);
  if (!other.ok() && !copy) {
    a.comparability.push_back("baseline run not imported: " + other.error().message);
    return;
  }
  std::vector<PointSummary> all;
  if (copy) {
    a.baseline_file = *copy;
    a.baseline_note = "baseline rows read from " + evidence::RunPaths{}.baseline_run_summary_csv() +
                      ", the copy of " +
                      evidence::RunPaths{spec.baseline.import_run}.summary_csv() +
                      " made at run start";
    Result<std::vector<PointSummary>> read = ReadBaselineCsv(*copy);
    if (!read.ok()) {
      a.comparability.push_back("baseline run not imported: " + read.error().message);
      return;
    }
    all = *read;
  } else {
    const std::string summary = evidence::RunPaths{spec.baseline.import_run}.summary_csv();
    Result<std::vector<PointSummary>> read = ReadBaselineCsv(summary);
    all = read.ok() ? *read : other->points;
    a.baseline_file = read.ok() ? summary : spec.baseline.import_run;
    a.baseline_note = read.ok() ? "baseline rows read from " + summary +
                                      " (baseline.import_run; the run holds no copy in metadata/)"
                                : "baseline rows re-analysed from the evidence of " +
                                      spec.baseline.import_run + " (it has no summary.csv)";
  }
  for (PointSummary& p : all) p.imported = true;
  std::vector<PointSummary> rows = RowsOf(all, a.baseline_layout);
  if (!a.baseline_layout) {
    a.comparability.push_back("baseline run " + a.baseline_source + " holds no completed sample");
    return;
  }
  if (rows.empty())
    a.comparability.push_back("baseline run " + a.baseline_source + " has no completed sample of " +
                              a.baseline_layout->Label());
  // The two runs' settings are compared by the confounder check of the report (compare/).
  if (!other.ok()) {
    a.comparability.push_back("baseline run " + a.baseline_source + " could not be read (" +
                              other.error().message + "): its rows come from " +
                              evidence::RunPaths{}.baseline_run_summary_csv() +
                              ", and the two runs' settings were not compared");
  }
  a.baseline_imported = true;
  a.baseline_rows = rows;
}

// A baseline of this run: its rows of the baseline layout.
void BaselineOfThisRun(RunAnalysis& a) {
  a.baseline_source = "this run";
  for (const PointSummary& p : a.points)
    if (p.layout == *a.baseline_layout) a.baseline_rows.push_back(p);
}

// Says plainly at which of this run's concurrencies the baseline, which
// has rows, gives no medians to compare with: a row where no repeat
// completed a request (evidence::HasMedians), or no row (which an imported
// CSV's check already says, CheckCsvComparability). Empty when it gives
// them at every one.
std::string BaselineGaps(const RunAnalysis& a) {
  const bool rows_checked = !a.spec().baseline.import_csv.empty();
  std::set<int> no_row, no_medians;
  for (const PointSummary& p : a.points) {
    // The baseline's own points, and points with no medians of their own,
    // have no delta to miss.
    if ((p.layout == *a.baseline_layout && !a.baseline_imported) || !evidence::HasMedians(p))
      continue;
    const auto row =
        std::find_if(a.baseline_rows.begin(), a.baseline_rows.end(), [&](const PointSummary& b) {
          return b.layout == *a.baseline_layout && b.concurrency == p.concurrency;
        });
    if (row == a.baseline_rows.end()) {
      if (!rows_checked) no_row.insert(p.concurrency);
    } else if (!evidence::HasMedians(*row)) {
      no_medians.insert(p.concurrency);
    }
  }
  std::vector<std::string> why;
  if (!no_medians.empty())
    why.push_back(
        fmt::format("no repeat of it completed a request at C={}", fmt::join(no_medians, ", C=")));
  if (!no_row.empty())
    why.push_back(fmt::format("it has no row at C={}", fmt::join(no_row, ", C=")));
  if (why.empty()) return "";
  return fmt::format("the baseline {} gives no medians where {}; the deltas there are '-'",
                     a.baseline_layout->Label(), fmt::join(why, ", and "));
}

// Says plainly when the baseline gives no row to compare with, or none at
// some of this run's concurrencies.
void NoteMissingBaseline(RunAnalysis& a) {
  if (!a.baseline_layout) return;
  if (!a.baseline_rows.empty()) {
    const std::string gaps = BaselineGaps(a);
    if (!gaps.empty()) a.comparability.push_back(gaps);
    return;
  }
  const spec::Spec& spec = a.spec();
  const std::string label = a.baseline_layout->Label();
  std::string why;
  if (a.baseline_imported || !spec.baseline.import_csv.empty() ||
      !spec.baseline.import_run.empty()) {
    why = "the import (" + a.baseline_source + ") holds no row of it";
  } else if (std::find(spec.sweep.layouts.begin(), spec.sweep.layouts.end(), *a.baseline_layout) ==
             spec.sweep.layouts.end()) {
    why =
        "it is not in this run's sweep and no baseline is imported (set baseline.import_csv or "
        "baseline.import_run, or sweep it)";
  } else {
    why = "no sample of it completed in this run";
  }
  a.baseline_note = "the baseline " + label + " has no rows: " + why + "; every delta is '-'";
  a.comparability.push_back(a.baseline_note);
}

void PlanLayouts(RunAnalysis& a) {
  const spec::Spec& spec = a.spec();
  Result<inputs::SearchInputs> in =
      inputs::LoadSearchInputs(spec, {}, {}, inputs::Deployments::kPlan);
  if (!in.ok()) {
    a.warnings.push_back("communication-domain analysis and per-stage memory skipped: " +
                         in.error().message);
    return;
  }
  a.inputs = std::move(in).value();
  // A disaggregated baseline is not planned as a layout: its pools are.
  if (a.baseline_imported && a.baseline_layout && !a.baseline_layout->disaggregated() &&
      std::find(spec.sweep.layouts.begin(), spec.sweep.layouts.end(), *a.baseline_layout) ==
          spec.sweep.layouts.end())
    a.baseline_plan =
        plan::PlanLayout(*a.baseline_layout, spec, a.inputs->model, a.inputs->hardware);
}

}  // namespace

Result<RunAnalysis> AnalyseRun(const std::string& run_dir) {
  RunAnalysis a;
  PPS_ASSIGN_OR_RETURN(a.evidence, LoadRunEvidence(run_dir));
  a.warnings = a.evidence.warnings;
  const spec::Spec& spec = a.spec();
  a.baseline_layout = spec.baseline.layout;
  a.points = a.evidence.points;
  if (!spec.baseline.import_csv.empty())
    ImportBaselineCsv(a);
  else if (!spec.baseline.import_run.empty())
    ImportBaselineRun(a);
  else if (a.baseline_layout)
    BaselineOfThisRun(a);
  NoteMissingBaseline(a);
  if (a.baseline_layout) {
    ApplyBaseline(a.points, a.baseline_rows, *a.baseline_layout);
    ApplyBaseline(a.baseline_rows, a.baseline_rows, *a.baseline_layout);
  }
  PlanLayouts(a);
  // The plan, the memory tables and the predictions read the model config
  // and hardware profile as they are now, not as the run read them.
  if (a.evidence.metadata.inputs)
    for (const std::string& changed : evidence::ChangedInputs(*a.evidence.metadata.inputs))
      a.warnings.push_back(changed +
                           ": the plan, the per-stage memory and the predictions here "
                           "read it as it is now, not as the run did");
  for (const spec::LayoutSpec& layout : spec.sweep.layouts) {
    const plan::LayoutPlan* lp = nullptr;
    if (a.inputs) lp = a.inputs->Find(layout);
    a.memory.push_back(AnalyseLayoutMemory(layout, a.evidence.samples, lp));
  }
  if (a.baseline_imported && a.baseline_layout)
    a.memory.push_back(ImportedMemory(a.baseline_rows, *a.baseline_layout));
  // Warnings about engine settings (args, env, version) are the flags not to
  // carry into the next run; the rest are about this spec's workload.
  std::vector<std::string> flags;
  if (a.inputs)
    for (const plan::Diagnostic& w : a.inputs->plan.warnings)
      (w.location.key.rfind("engine.", 0) == 0 ? flags : a.spec_warnings).push_back(w.message);
  a.decision = Decide(spec, a.evidence.samples, a.points, a.memory, flags);
  const std::string calibration = evidence::RunPaths{run_dir}.calibration_json();
  a.prediction = PredictRun(a.inputs ? &*a.inputs : nullptr, a.evidence.simulated,
                            std::filesystem::exists(calibration) ? calibration : "");
  return a;
}

}  // namespace ppsearch::analysis
