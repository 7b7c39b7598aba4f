#include "run/replay_sample.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "analysis/run.h"
#include "compare/confounders.h"
#include "compare/description.h"
#include "evidence/evidence.h"
#include "evidence/run_metadata.h"
#include "run/replay_medians.h"
#include "run/runner.h"
#include "util/files.h"
#include "util/sha256.h"

namespace ppsearch::run {
namespace {

namespace fs = std::filesystem;

// The file at `path`, read as evidence is; "" when there is none.
Result<std::string> OptionalEvidence(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return std::string();
  return evidence::ReadEvidenceFile(path);
}

// A past run's samples, each given back as that run wrote it.
class RunReplayEngine : public SampleEngine {
 public:
  RunReplayEngine(const spec::Spec& spec, std::string dir, evidence::RunMetadata source,
                  std::map<std::string, evidence::ManifestEntry> entries, std::string sha256)
      : spec_(spec),
        paths_{std::move(dir)},
        source_(std::move(source)),
        entries_(std::move(entries)),
        sha256_(std::move(sha256)) {}

  const char* kind() const override { return "replay"; }
  bool simulated() const override { return source_.simulated.value_or(false); }
  std::optional<evidence::ReplaySource> replayed() const override {
    return evidence::ReplaySource{paths_.root, "run", sha256_};
  }

  Result<SampleOutput> Run(const SampleContext& ctx) override {
    const std::string name = ctx.id.str();
    const evidence::ManifestEntry& entry = entries_.at(name);
    if (entry.state != evidence::SampleState::kCompleted)
      return MakeError(fmt::format("sample {} {} in the replayed run {} (manifest.jsonl:{})", name,
                                   evidence::SampleStateName(entry.state), paths_.root,
                                   entry.line));
    SampleOutput out;
    PPS_ASSIGN_OR_RETURN(out.records, evidence::ReadRecords(paths_.raw(ctx.id)));
    PPS_ASSIGN_OR_RETURN(out.bench, evidence::ReadBenchSummary(paths_, ctx.id));
    out.bench.replayed_from = evidence::BenchReplayedFrom{paths_.root, name, "", 0};
    // Node i of the replayed run answers for the spec's host i.
    for (size_t n = 0; n < spec_.cluster.hosts.size(); ++n) {
      NodeEvidence node;
      node.host = spec_.cluster.hosts[n].name;
      PPS_ASSIGN_OR_RETURN(node.log, OptionalEvidence(paths_.service(ctx.id, source_.hosts[n])));
      PPS_ASSIGN_OR_RETURN(node.gpu_csv, OptionalEvidence(paths_.gpu(ctx.id, source_.hosts[n])));
      out.nodes.push_back(std::move(node));
    }
    PPS_ASSIGN_OR_RETURN(out.profiles, evidence::ReadSampleProfiles(paths_, name));
    // An engine's verdict stands as it was; the others follow from the evidence again.
    if (entry.verdict && evidence::IsEngineVerdict(*entry.verdict)) {
      out.verdict = *entry.verdict;
      out.detail = entry.detail;
    }
    return out;
  }

 private:
  const spec::Spec& spec_;
  const evidence::RunPaths paths_;
  const evidence::RunMetadata source_;
  const std::map<std::string, evidence::ManifestEntry> entries_;
  const std::string sha256_;
};

// "PP2/TP16/EP4 at C=8 repeat 2" for each sample `missing`, one line each.
std::string MissingList(const std::vector<evidence::SampleId>& missing) {
  std::string out;
  for (const auto& id : missing)
    out += fmt::format("\n  {} at C={} repeat {} ({})", id.layout.Label(), id.concurrency,
                       id.repeat, id.str());
  return out;
}

// A replay hands the source's evidence on under this spec, whose report
// names the spec's image, workload and cluster: a setting that changes
// results (compare's harmful class: another image, engine version,
// workload, GPU count, server flag) must be the source's, or the report
// would describe a setup its samples never ran. The decision, the sweep and
// the names are the replay's to change.
Status CheckSameSetup(const spec::Spec& spec, const analysis::RunEvidence& source) {
  // This spec's side: the source's record of what a spec does not hold
  // (engine kind, launcher, calibration), and this spec's own patches,
  // hashed where the source's were (a run before hashes compares paths).
  evidence::RunMetadata here = source.metadata;
  if (here.patches) {
    PPS_ASSIGN_OR_RETURN(here.patches, PatchRecords(spec));
  }
  const compare::ConfounderReport r = compare::FindConfounders(
      compare::DescribeRun(source.spec, source.metadata, {}, source.run_dir),
      compare::DescribeRun(spec, here, {}, "this spec"));
  const std::vector<const compare::Difference*> harmful = r.harmful();
  if (harmful.empty()) return Status::Ok();
  std::string list;
  for (const compare::Difference* d : harmful)
    list += fmt::format("\n  {}: {} there, {} here ({})", d->key, d->a, d->b, d->what.reason);
  return MakeError(fmt::format(
      "{} ran another setup than this spec in what changes results, so its samples cannot stand "
      "for this spec's:{}\nreplay it with its own metadata/spec.toml (changing [decision] or "
      "[sweep] only)",
      source.run_dir, list));
}

// The source's own analysis of each sample the sweep replays, before the
// first runs: evidence the source's report names as missing, unreadable or
// impossible (a log that could not be audited, a link where a file belongs,
// a negative TTFT, a peak above the GPU's total) would come back as a sample
// that looks whole. Each problem is named.
Status CheckSourceEvidence(const spec::Spec& spec, const plan::Plan& plan, const std::string& dir) {
  PPS_ASSIGN_OR_RETURN(analysis::RunEvidence source, analysis::LoadRunEvidence(dir));
  PPS_RETURN_IF_ERROR(CheckSameSetup(spec, source));
  std::map<std::string, const analysis::SampleAnalysis*> analysed;
  for (const analysis::SampleAnalysis& s : source.samples) analysed[s.name] = &s;
  std::string found;
  int samples = 0;
  for (const evidence::SampleId& id : ExpandSamples(spec, plan)) {
    auto it = analysed.find(id.str());
    if (it == analysed.end() || !it->second->completed() || it->second->problems.empty()) continue;
    ++samples;
    for (const std::string& p : it->second->problems) found += "\n  " + p;
  }
  if (samples == 0) return Status::Ok();
  return MakeError(fmt::format(
      "{}: {} of this sweep's samples have evidence that run's own report names as missing or "
      "impossible; a replay would hand it on as whole:{}",
      dir, samples, found));
}

Result<std::unique_ptr<SampleEngine>> MakeRunReplay(const spec::Spec& spec, const plan::Plan& plan,
                                                    const std::string& dir) {
  const evidence::RunPaths paths{dir};
  PPS_ASSIGN_OR_RETURN(evidence::RunMetadata source, evidence::ReadRunMetadata(paths));
  if (source.hosts.size() != spec.cluster.hosts.size())
    return MakeError(fmt::format(
        "{}: ran on {} hosts, the spec's cluster has {}; a replay gives node i's evidence to the "
        "spec's host i, so the two must have as many nodes",
        dir, source.hosts.size(), spec.cluster.hosts.size()));
  PPS_ASSIGN_OR_RETURN(evidence::Manifest manifest, evidence::ReadManifestEntries(paths));
  std::map<std::string, evidence::ManifestEntry> entries;
  for (evidence::ManifestEntry& e : manifest.entries) entries[e.sample] = std::move(e);
  // Checked once, before any sample: a sample never finished there, or one
  // completed without its records and summary, cannot be answered.
  std::vector<evidence::SampleId> missing;
  for (const evidence::SampleId& id : ExpandSamples(spec, plan)) {
    auto e = entries.find(id.str());
    const bool answered =
        e != entries.end() && (e->second.state == evidence::SampleState::kFailed ||
                               (e->second.state == evidence::SampleState::kCompleted &&
                                fs::exists(paths.raw(id)) && fs::exists(paths.bench(id))));
    if (!answered) missing.push_back(id);
  }
  if (!missing.empty())
    return MakeError(
        fmt::format("{} has no completed or failed sample for {} of this sweep's "
                    "samples (in its manifest.jsonl, with raw/ and bench/ files):{}",
                    dir, missing.size(), MissingList(missing)));
  PPS_RETURN_IF_ERROR(CheckSourceEvidence(spec, plan, dir));
  PPS_ASSIGN_OR_RETURN(std::string sha256, RunDirectoryDigest(dir));
  return std::unique_ptr<SampleEngine>(
      new RunReplayEngine(spec, dir, std::move(source), std::move(entries), std::move(sha256)));
}

}  // namespace

std::optional<std::string> ReplayPath(const std::string& engine) {
  const std::string prefix = kReplayPrefix;
  if (engine.rfind(prefix, 0) != 0) return std::nullopt;
  return engine.substr(prefix.size());
}

Result<std::string> RunDirectoryDigest(const std::string& run_dir) {
  const evidence::RunPaths place;  // places in the run, as the digest lists them
  std::vector<std::string> files = {place.manifest(), place.run_json()};
  for (const std::string& folder : {place.raw_dir(), place.bench_dir(), place.service_dir(),
                                    place.gpu_dir(), place.profile_dir()}) {
    std::error_code ec;
    const fs::path root = fs::path(run_dir) / folder;
    if (!fs::is_directory(root, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (it->is_regular_file(ec) && !it->is_symlink(ec))
        files.push_back(fs::relative(it->path(), run_dir, ec).string());
    if (ec) return IoError("cannot list " + root.string() + ": " + ec.message());
  }
  std::sort(files.begin(), files.end());
  std::string listing;
  for (const std::string& f : files) {
    PPS_ASSIGN_OR_RETURN(std::string sha, Sha256File((fs::path(run_dir) / f).string()));
    listing += sha + "  " + f + "\n";
  }
  return Sha256Hex(listing);
}

Result<std::unique_ptr<SampleEngine>> MakeReplayEngine(const spec::Spec& spec,
                                                       const plan::Plan& plan,
                                                       const std::string& path) {
  if (path.empty())
    return MakeError("--engine replay:PATH needs a PATH: a run directory or a CSV of medians");
  std::error_code ec;
  const std::string abs = AbsolutePath(path);
  if (!fs::exists(abs, ec))
    return MakeError(path +
                     ": no such file or directory (replay:PATH names a run directory or a "
                     "CSV of medians)");
  if (fs::is_directory(abs, ec)) return MakeRunReplay(spec, plan, abs);
  return MakeMediansReplay(spec, plan, abs);
}

}  // namespace ppsearch::run
