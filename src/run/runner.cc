#include "run/runner.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "analysis/baseline.h"
#include "evidence/run_metadata.h"
#include "evidence/spec_json.h"
#include "launch/process.h"
#include "ppsearch_version.h"
#include "run/profile_evidence.h"
#include "run/redact.h"
#include "run/sample_verdict.h"
#include "run/server_state.h"
#include "spec/secret_text.h"
#include "util/files.h"
#include "util/sha256.h"
#include "util/stoppable_wait.h"

namespace ppsearch::run {
namespace {

using evidence::SampleState;

Status WriteMetadata(const evidence::RunPaths& paths, const RunOptions& o, const spec::Spec& spec,
                     const std::vector<evidence::SampleId>& samples, const SampleEngine& engine,
                     const std::vector<evidence::RunPatch>& patches, const Redactor& redact) {
  PPS_ASSIGN_OR_RETURN(std::string spec_text, ReadFile(o.spec_path));
  PPS_ASSIGN_OR_RETURN(std::string spec_copy,
                       spec::RedactSpecText(spec_text, o.spec_path, spec.engine));
  PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.spec_toml(), spec_copy));
  PPS_RETURN_IF_ERROR(WriteFileAtomic(
      paths.spec_resolved_json(), evidence::SpecToJson(spec::WithoutSecrets(spec)).dump(2) + "\n"));
  std::string commands =
      "# launcher: " +
      std::string(o.launcher ? o.launcher->kind()
                             : "none (" + std::string(engine.kind()) + " engine)") +
      "\n";
  for (const auto& s : samples) {
    commands += "# " + s.str() + "\n";
    if (o.sample_commands)
      for (const auto& c : o.sample_commands(s)) commands += c + "\n";
  }
  PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.commands_txt(), commands));
  evidence::RunMetadata run;
  if (!o.calibration_json.empty()) {
    PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.calibration_json(), o.calibration_json));
    run.calibration = nlohmann::json::parse(o.calibration_json, nullptr, false);
  }
  for (const auto& h : spec.cluster.hosts) run.hosts.push_back(h.name);
  for (const auto& v : o.overrides) run.overrides.push_back(spec::RedactOverride(v, spec.engine));
  run.run_id = std::filesystem::path(paths.root).filename().string();
  run.engine = engine.kind();
  run.simulated = engine.simulated();
  run.replay = engine.replayed();
  run.launcher = o.launcher ? o.launcher->kind() : "";
  run.tool_version = PPSEARCH_VERSION;
  run.git_sha = PPSEARCH_GIT_SHA;
  run.spec_path = AbsolutePath(o.spec_path);
  run.image = spec.engine.image;
  run.patches = patches;
  run.inputs = o.inputs;
  run.workload_seed = spec.workload.seed;
  run.noise =
      evidence::NoiseModel{"lognormal time stretch per repeat", spec.sim.noise_cv, spec.sim.seed};
  run.command_line = redact.Apply(o.command_line);
  run.started_at = UtcNow("%Y-%m-%dT%H:%M:%SZ");
  run.adaptive = static_cast<bool>(o.next_samples);
  return evidence::WriteRunMetadata(paths, run);
}

Status WriteSample(const evidence::RunPaths& paths, const evidence::SampleId& id,
                   const SampleOutput& out, const Redactor& redact) {
  for (const auto& node : out.nodes) {
    PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.service(id, node.host), redact.Apply(node.log)));
    // No snapshot file when the query failed: analysis names the missing node.
    if (!node.gpu_csv.empty())
      PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.gpu(id, node.host), node.gpu_csv));
  }
  if (!out.router_host.empty())
    PPS_RETURN_IF_ERROR(
        WriteFileAtomic(paths.router_service(id, out.router_host), redact.Apply(out.router_log)));
  PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.raw(id), evidence::RecordsToJsonl(out.records)));
  PPS_RETURN_IF_ERROR(evidence::WriteSampleProfiles(paths, id, out.profiles));
  // The bench summary is written last: its presence means the sample's files are whole.
  return evidence::WriteBenchSummary(paths, id, out.bench);
}

// The export the spec names ([profile] file), analysed once, for the
// samples of its layout; then the simulator's breakdown beside any profile.
Status AttachProfiles(const RunOptions& o, const spec::Spec& spec, const SampleContext& ctx,
                      std::optional<nlohmann::json>& file_analysis, SampleOutput& out) {
  const spec::ProfileSpec& p = spec.profile;
  const std::string sample = ctx.id.str();
  if (!p.file.empty() && (p.layout.empty() || sample.substr(0, sample.find('_')) == p.layout)) {
    if (!file_analysis) {
      PPS_ASSIGN_OR_RETURN(file_analysis, AnalyseExportFile(p, *ctx.plan));
    }
    out.profiles.push_back({"file", *file_analysis});
  }
  if (!out.profiles.empty() && o.predicted_breakdown)
    out.profiles.push_back({evidence::kPredictedProfile,
                            evidence::PredictedBreakdownJson(o.predicted_breakdown(ctx))});
  return Status::Ok();
}

// The streamed logs in live/ of the samples an interrupted run did not
// complete, moved to interrupted/<time>/ (secrets redacted); a completed
// sample's are dropped, its service/ copy is the evidence.
Status KeepInterruptedLogs(const evidence::RunPaths& paths, const Redactor& redact,
                           const std::function<void(const std::string&)>& say) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_symlink(paths.live_dir(), ec) || !fs::is_directory(paths.live_dir(), ec))
    return Status::Ok();
  PPS_ASSIGN_OR_RETURN(auto states, evidence::ReadManifest(paths));
  std::set<std::string> completed;
  for (const auto& [sample, state] : states)
    if (state == SampleState::kCompleted) completed.insert(sample);
  const std::string kept = paths.interrupted_dir() + "/" + UtcNow("%Y%m%d-%H%M%S");
  std::vector<std::string> moved;
  for (const auto& sample_dir : fs::directory_iterator(paths.live_dir(), ec)) {
    const std::string sample = sample_dir.path().filename().string();
    // A link planted in live/ is not a log the run wrote: never copied out.
    if (completed.count(sample) || sample_dir.is_symlink(ec) || !sample_dir.is_directory(ec))
      continue;
    for (const auto& log : fs::directory_iterator(sample_dir.path(), ec)) {
      ReadOptions evidence_file;
      evidence_file.follow_links = false;
      PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(log.path().string(), evidence_file));
      PPS_RETURN_IF_ERROR(WriteFileAtomic(
          kept + "/" + sample + "/" + log.path().filename().string(), redact.Apply(text)));
    }
    moved.push_back(sample);
  }
  fs::remove_all(paths.live_dir(), ec);
  if (ec) return IoError("cannot remove " + paths.live_dir() + ": " + ec.message());
  if (!moved.empty()) {
    std::string list;
    for (const auto& s : moved) list += (list.empty() ? "" : ", ") + s;
    say("kept the server logs of the interrupted sample (" + list + ") under " + kept);
  }
  return Status::Ok();
}

// A resumed replay answers its remaining samples from the very source its
// first samples came from: the same path, with the same digest.
Status CheckSameReplay(const evidence::RunPaths& paths, const SampleEngine& engine) {
  const std::optional<evidence::ReplaySource> now = engine.replayed();
  if (!now) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(const evidence::RunMetadata run, evidence::ReadRunMetadata(paths));
  if (!run.replay || run.replay->path != now->path)
    return MakeError(paths.root + " did not replay " + now->path +
                     "; resume it with the engine it was run with");
  if (run.replay->sha256 != now->sha256)
    return MakeError(now->path + " changed since " + paths.root +
                     " started replaying it (SHA-256 " + run.replay->sha256 + " then, " +
                     now->sha256 + " now); its samples would mix two sources");
  return Status::Ok();
}

// Before a resumed run does anything: stop the servers an earlier process
// left running, keep the logs of interrupted samples, drop torn temp files.
Status RecoverRunDir(const evidence::RunPaths& paths, const RunOptions& o, const spec::Spec& spec,
                     const Redactor& redact, SampleEngine& engine) {
  auto say = [&](const std::string& line) {
    if (o.notice) o.notice(line);
  };
  if (o.launcher != nullptr) {
    PPS_ASSIGN_OR_RETURN(std::vector<std::string> stopped,
                         StopLeftoverServers(paths, *o.launcher, spec.lifecycle.stop_grace_s,
                                             spec.lifecycle.host_timeout_s));
    for (const auto& line : stopped) say(line);
    // An interrupted sample's process stopped its servers just before it
    // exited, without waiting for their GPU memory: wait as for servers
    // stopped here.
    PPS_ASSIGN_OR_RETURN(auto states, evidence::ReadManifest(paths));
    bool interrupted = false;
    for (const auto& [sample, state] : states)
      interrupted = interrupted || state == SampleState::kInterrupted;
    if (!stopped.empty() || interrupted) engine.ServersStoppedElsewhere();
  } else {
    PPS_ASSIGN_OR_RETURN(auto left, evidence::LoadServerStates(paths));
    if (!left.empty())
      return MakeError(paths.server_state_dir() + " lists servers of a real engine (" +
                       left[0].Describe() + "); resume with the same engine");
  }
  PPS_RETURN_IF_ERROR(KeepInterruptedLogs(paths, redact, say));
  const int removed = RemoveStrayTempFiles(paths.root);
  if (removed > 0) say("removed " + std::to_string(removed) + " unfinished temporary file(s)");
  return Status::Ok();
}

// The run directory a run writes, opened: chosen (resumed, named or new),
// locked against a second process, and either recovered (a resume: what an
// earlier process left stopped or kept, its completed samples read back) or
// given its metadata (a new run).
struct OpenRun {
  std::string dir;
  evidence::RunPaths paths;
  std::unique_ptr<DirLock> lock;
  std::set<std::string> done;  // samples already completed (a resume)
};

Result<std::string> ChooseRunDir(const RunOptions& o, const spec::Spec& spec) {
  if (!o.resume_dir.empty()) {
    if (!std::filesystem::exists(evidence::RunPaths{o.resume_dir}.run_json()))
      return MakeError(o.resume_dir + ": not a ppsearch run directory (no " +
                       evidence::RunPaths{}.run_json() + ")");
    return o.resume_dir;
  }
  if (o.run_id.empty()) return NewRunDir(spec.experiment.results_dir, spec.experiment.name);
  const std::string dir = spec.experiment.results_dir + "/" + o.run_id;
  if (std::filesystem::exists(dir))
    return MakeError("run directory " + dir + " already exists; continue it with " +
                     launch::ShellJoin({"ppsearch", "run", "--resume", dir}) +
                     " or choose another --run-id");
  return dir;
}

Result<OpenRun> OpenRunDir(const RunOptions& o, const spec::Spec& spec,
                           const std::vector<evidence::SampleId>& samples, SampleEngine& engine,
                           const Redactor& redact) {
  OpenRun run;
  PPS_ASSIGN_OR_RETURN(run.dir, ChooseRunDir(o, spec));
  // Hashed before the run directory exists: a patch that cannot be read leaves nothing behind.
  std::vector<evidence::RunPatch> patches;
  if (o.resume_dir.empty()) {
    PPS_ASSIGN_OR_RETURN(patches, PatchRecords(spec));
  }
  run.paths = evidence::RunPaths{run.dir};
  // One process per run directory: a second one would run samples twice.
  PPS_ASSIGN_OR_RETURN(run.lock,
                       LockDirectory(run.dir, run.paths.lock(), "run directory " + run.dir));
  if (!o.resume_dir.empty()) {
    PPS_RETURN_IF_ERROR(CheckSameReplay(run.paths, engine));
    PPS_RETURN_IF_ERROR(RecoverRunDir(run.paths, o, spec, redact, engine));
    PPS_ASSIGN_OR_RETURN(auto states, evidence::ReadManifest(run.paths));
    for (const auto& [sample, state] : states)
      if (state == SampleState::kCompleted) run.done.insert(sample);
  } else {
    // run.json first, so a run whose baseline cannot be copied still opens
    // for report and resume. What is imported travels with the run: moving
    // the CSV later loses nothing, and run.json then holds the copy's hash.
    PPS_RETURN_IF_ERROR(WriteMetadata(run.paths, o, spec, samples, engine, patches, redact));
    PPS_ASSIGN_OR_RETURN(const std::optional<std::string> baseline_sha256,
                         analysis::CopyBaselineInto(spec, run.dir));
    if (baseline_sha256) {
      PPS_ASSIGN_OR_RETURN(evidence::RunMetadata written, evidence::ReadRunMetadata(run.paths));
      written.baseline_sha256 = baseline_sha256;
      PPS_RETURN_IF_ERROR(evidence::WriteRunMetadata(run.paths, written));
    }
  }
  return run;
}

// Runs one sample at a time into an open run directory: the manifest's
// started line, the engine, the profiles, the sample's files, its verdict
// and the completed line; a failed sample is recorded and the sweep goes on.
class SampleRunner {
 public:
  SampleRunner(const RunOptions& o, const spec::Spec& spec, const plan::Plan& plan,
               SampleEngine& engine, const Redactor& redact, OpenRun& run, RunOutcome& outcome,
               const std::function<void(const RunProgress&)>& progress)
      : o_(o),
        spec_(spec),
        plan_(plan),
        engine_(engine),
        redact_(redact),
        run_(run),
        outcome_(outcome),
        progress_(progress),
        run_id_(std::filesystem::path(run.dir).filename().string()),
        start_(std::chrono::steady_clock::now()) {}

  // False when the run is to stop: a stop was asked for before the sample
  // began, or it cut the sample short.
  Result<bool> Run(const evidence::SampleId& id, bool next_same_layout) {
    PPS_RETURN_IF_ERROR(run_.lock->StillThere());
    if (StopRequested(o_.stop)) return false;
    Report(id);
    const evidence::RunPaths& paths = run_.paths;
    PPS_RETURN_IF_ERROR(evidence::AppendManifest(paths, id, SampleState::kStarted));
    const plan::LayoutPlan* lp = nullptr;
    for (const auto& l : plan_.layouts)
      if (l.layout == id.layout) lp = &l;
    SampleContext ctx{id,
                      lp,
                      SampleSeed(spec_, id),
                      &paths,
                      run_id_,
                      next_same_layout,
                      id.layout.disaggregated() ? o_.deployment : nullptr,
                      o_.stop,
                      o_.kill_now};
    Result<SampleOutput> out = engine_.Run(ctx);
    // A run directory deleted during the sample: stop rather than recreate it.
    PPS_RETURN_IF_ERROR(run_.lock->StillThere());
    if (out.ok() && out->interrupted) {
      // Neither a measurement nor a failure of the layout: nothing of it is
      // written but this line, and a resume runs it again (only "completed"
      // counts as done). Its streamed logs stay in live/ for the resume to keep.
      PPS_RETURN_IF_ERROR(evidence::AppendManifest(paths, id, SampleState::kInterrupted,
                                                   {{"detail", redact_.Apply(out->detail)}}));
      return false;
    }
    if (out.ok()) out->detail = redact_.Apply(out->detail);  // quotes server logs
    if (!out.ok()) {
      // Evidence collected so far stays; the sample is marked failed and the sweep goes on.
      PPS_RETURN_IF_ERROR(evidence::AppendManifest(paths, id, SampleState::kFailed,
                                                   {{"error", out.error().message}}));
      return true;
    }
    PPS_RETURN_IF_ERROR(AttachProfiles(o_, spec_, ctx, file_analysis_, *out));
    PPS_RETURN_IF_ERROR(WriteSample(paths, id, *out, redact_));
    const SampleVerdict v = DecideVerdict(spec_, id, *out);
    if (v.verdict != evidence::Verdict::kOk) ++outcome_.not_ok;
    PPS_RETURN_IF_ERROR(evidence::AppendManifest(
        paths, id, SampleState::kCompleted,
        {{"verdict", evidence::VerdictName(v.verdict)}, {"detail", v.detail}}));
    ++outcome_.completed;
    ++ran_;
    PPS_RETURN_IF_ERROR(CheckRepeatedPreflight(id, v));
    Pace();
    return true;
  }

 private:
  void Report(const evidence::SampleId& id) {
    RunProgress p;
    p.done = outcome_.skipped + outcome_.completed;
    p.total = outcome_.total;
    p.sample = id.str();
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (ran_ > 0 && !o_.next_samples) p.eta_s = p.elapsed_s / ran_ * (outcome_.total - p.done);
    progress_(p);
  }

  // --pace-ms after a sample; an interrupt during the pause ends the run at
  // once.
  void Pace() const {
    SleepUnlessStopped(std::chrono::steady_clock::now() + std::chrono::milliseconds(o_.pace_ms),
                       o_.stop);
  }

  // The same failed preflight twice in a row will not go away by itself.
  Status CheckRepeatedPreflight(const evidence::SampleId& id, const SampleVerdict& v) {
    if (v.verdict == evidence::Verdict::kPreflightFailed && v.detail == preflight_cause_)
      return MakeError(preflight_sample_ + " and " + id.str() +
                           " failed preflight for the same cause, which will not go away by "
                           "itself: " +
                           v.detail +
                           ". The run stopped there; fix the cause, then "
                           "resume with: " +
                           launch::ShellJoin({"ppsearch", "run", "--resume", outcome_.run_dir}),
                       ErrorKind::kIncomplete);
    preflight_cause_ = v.verdict == evidence::Verdict::kPreflightFailed ? v.detail : "";
    preflight_sample_ = id.str();
    return Status::Ok();
  }

  const RunOptions& o_;
  const spec::Spec& spec_;
  const plan::Plan& plan_;
  SampleEngine& engine_;
  const Redactor& redact_;
  OpenRun& run_;
  RunOutcome& outcome_;
  const std::function<void(const RunProgress&)>& progress_;
  const std::string run_id_;
  const std::chrono::steady_clock::time_point start_;
  int ran_ = 0;
  // [profile] file: one export, analysed on first use, for every sample of its layout.
  std::optional<nlohmann::json> file_analysis_;
  // The cause of the last sample's failed preflight ("" after any other outcome).
  std::string preflight_cause_;
  std::string preflight_sample_;
};

// Every sample of the sweep in order, those already completed skipped.
Status RunInOrder(const std::vector<evidence::SampleId>& samples, const OpenRun& run,
                  SampleRunner& runner, RunOutcome& outcome) {
  for (size_t i = 0; i < samples.size(); ++i) {
    const evidence::SampleId& id = samples[i];
    if (run.done.count(id.str())) {
      ++outcome.skipped;
      continue;
    }
    bool next_same_layout = false;
    for (size_t j = i + 1; j < samples.size(); ++j) {
      if (run.done.count(samples[j].str())) continue;
      next_same_layout = samples[j].layout == id.layout;
      break;
    }
    PPS_ASSIGN_OR_RETURN(const bool began, runner.Run(id, next_same_layout));
    if (!began) {
      outcome.interrupted = true;
      break;
    }
  }
  return Status::Ok();
}

// The samples the adaptive policy asks for, step by step, until it asks for none.
Status RunAsAsked(const RunOptions& o, const spec::Spec& spec, const OpenRun& run,
                  SampleRunner& runner, RunOutcome& outcome) {
  outcome.skipped = static_cast<int>(run.done.size());
  // Every sample this process began: a policy that asks for one again
  // would loop, so that is an error, not a retry.
  std::set<std::string> attempted;
  while (!outcome.interrupted) {
    if (StopRequested(o.stop)) {
      outcome.interrupted = true;
      break;
    }
    PPS_ASSIGN_OR_RETURN(std::vector<evidence::SampleId> step, o.next_samples(run.paths));
    if (step.empty()) break;
    int began_any = 0;
    for (size_t j = 0; j < step.size(); ++j) {
      const evidence::SampleId& id = step[j];
      if (run.done.count(id.str())) continue;
      if (!attempted.insert(id.str()).second)
        return MakeError("the adaptive policy asked for " + id.str() +
                         " again after it ran in this process; stopping rather than looping");
      // The step's last sample keeps a reusable server up: the next step,
      // chosen after it, may well stay on this layout, and a sample of
      // another layout stops it first.
      const bool next_same_layout =
          j + 1 < step.size() ? step[j + 1].layout == id.layout : spec.lifecycle.reuse_server;
      PPS_ASSIGN_OR_RETURN(const bool began, runner.Run(id, next_same_layout));
      if (!began) {
        outcome.interrupted = true;
        break;
      }
      ++began_any;
    }
    if (began_any == 0 && !outcome.interrupted)
      return MakeError("the adaptive policy asked only for samples already complete (" +
                       step[0].str() + ", ...); stopping rather than looping");
  }
  return Status::Ok();
}

}  // namespace

std::vector<evidence::SampleId> ExpandSamples(const spec::Spec& spec, const plan::Plan& plan,
                                              const plan::DisaggregatedPlan* deployment) {
  std::vector<evidence::SampleId> out;
  auto add = [&](const spec::LayoutSpec& layout) {
    for (int c : spec.sweep.concurrency)
      for (int r = 1; r <= spec.sweep.repeats; ++r) out.push_back({layout, c, r});
  };
  for (const auto& lp : plan.layouts)
    if (lp.valid) add(lp.layout);
  if (deployment != nullptr && deployment->valid())
    for (const spec::LayoutSpec& layout : spec.sweep.layouts)
      if (layout.disaggregated()) add(layout);
  return out;
}

uint64_t SampleSeed(const spec::Spec& spec, const evidence::SampleId& sample) {
  return spec.workload.seed + 1000003ull * static_cast<uint64_t>(sample.repeat - 1);
}

// The suffix is kRunIdSuffixBytes at most (a thousand runs of one name do not
// start in one second), which experiment.name leaves room for: the id is a run id.
std::string NewRunDir(const std::string& results_dir, const std::string& name) {
  std::string base = results_dir + "/" + name + "-" + UtcNow("%Y%m%d-%H%M%S");
  std::string dir = base;
  for (int i = 2; std::filesystem::exists(dir); ++i) dir = base + "-" + std::to_string(i);
  return dir;
}

Result<RunOutcome> RunSamples(const RunOptions& o, const spec::Spec& spec, const plan::Plan& plan,
                              SampleEngine& engine,
                              const std::function<void(const RunProgress&)>& progress) {
  RunOutcome outcome;
  const std::vector<evidence::SampleId> samples = ExpandSamples(spec, plan, o.deployment);
  outcome.total = static_cast<int>(samples.size());
  // Everything the run writes that can quote a secret goes through this one.
  const Redactor redact(spec);
  PPS_ASSIGN_OR_RETURN(OpenRun run, OpenRunDir(o, spec, samples, engine, redact));
  outcome.run_dir = run.dir;
  SampleRunner runner(o, spec, plan, engine, redact, run, outcome, progress);
  PPS_RETURN_IF_ERROR(o.next_samples ? RunAsAsked(o, spec, run, runner, outcome)
                                     : RunInOrder(samples, run, runner, outcome));
  engine.Finish();
  // Every log is in service/ now; the streamed copies are no longer needed.
  if (!outcome.interrupted) {
    std::error_code ec;
    std::filesystem::remove_all(run.paths.live_dir(), ec);
  }
  return outcome;
}

// As run.json records them: path, size and SHA-256, so a comparison can
// tell the same patch from an edited one.
Result<std::vector<evidence::RunPatch>> PatchRecords(const spec::Spec& spec) {
  std::vector<evidence::RunPatch> out;
  for (size_t i = 0; i < spec.engine.patches.size(); ++i) {
    const std::string& path = spec.engine.patches[i];
    Result<std::string> bytes = ReadFile(path);
    if (!bytes.ok()) {
      std::string key = "engine.patches[";
      key += std::to_string(i);
      key += ']';
      return MakeError(spec.Origin(key).Where() +
                       ": cannot hash the file it names: " + bytes.error().message);
    }
    out.push_back({path, bytes->size(), Sha256Hex(*bytes)});
  }
  return out;
}

}  // namespace ppsearch::run
