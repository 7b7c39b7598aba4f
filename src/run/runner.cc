#include "run/runner.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "ppsearch_version.h"
#include "run/commands.h"
#include "util/files.h"

namespace ppsearch::run {
namespace {

using evidence::SampleState;

nlohmann::json SpecSummaryJson(const spec::Spec& spec) {
  nlohmann::json layouts = nlohmann::json::array();
  for (const auto& l : spec.sweep.layouts)
    layouts.push_back({{"pp", l.pp}, {"tp", l.tp}, {"ep", l.ep}});
  nlohmann::json args = nlohmann::json::object();
  for (const auto& [k, v] : spec.engine.args) args[k] = v.text;
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : spec.cluster.hosts) hosts.push_back(h.name);
  return {{"experiment",
           {{"name", spec.experiment.name}, {"results_dir", spec.experiment.results_dir}}},
          {"cluster",
           {{"hosts", hosts},
            {"gpus_per_node", spec.cluster.gpus_per_node},
            {"hardware", spec.cluster.hardware},
            {"launcher", spec.cluster.launcher}}},
          {"engine",
           {{"kind", spec.engine.kind},
            {"image", spec.engine.image},
            {"model_path", spec.engine.model_path},
            {"model_config", spec.engine.model_config},
            {"version", spec.engine.version},
            {"args", args}}},
          {"sweep",
           {{"layouts", layouts},
            {"concurrency", spec.sweep.concurrency},
            {"repeats", spec.sweep.repeats}}},
          {"workload",
           {{"input_tokens", spec.workload.input_tokens},
            {"output_tokens", spec.workload.output_tokens},
            {"requests", spec.workload.requests},
            {"seed", spec.workload.seed},
            {"input_distribution", spec.workload.input_distribution},
            {"range_ratio", spec.workload.range_ratio},
            {"request_rate", spec.workload.request_rate}}},
          {"decision",
           {{"objective", spec.decision.objective},
            {"min_headroom_mib", spec.decision.min_headroom_mib},
            {"max_repeat_spread", spec.decision.max_repeat_spread},
            {"failure_policy", spec.decision.failure_policy}}},
          {"sim", {{"noise_cv", spec.sim.noise_cv}, {"seed", spec.sim.seed}}}};
}

std::string NowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Status WriteMetadata(const evidence::RunPaths& paths, const RunOptions& o, const spec::Spec& spec,
                     const std::vector<evidence::SampleId>& samples, const SampleEngine& engine) {
  PPS_ASSIGN_OR_RETURN(std::string spec_text, ReadFile(o.spec_path));
  PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.metadata("spec.toml"), spec_text));
  PPS_RETURN_IF_ERROR(
      WriteFileAtomic(paths.metadata("spec.resolved.json"), SpecSummaryJson(spec).dump(2) + "\n"));
  std::string commands;
  for (const auto& s : samples) {
    commands += "# " + s.str() + "\n";
    for (const auto& c : SampleCommands(spec, s, SampleSeed(spec, s))) commands += c + "\n";
  }
  PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.metadata("commands.txt"), commands));
  nlohmann::json calibration = nullptr;
  if (!o.calibration_json.empty()) {
    PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.metadata("calibration.json"), o.calibration_json));
    calibration = nlohmann::json::parse(o.calibration_json, nullptr, false);
  }
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : spec.cluster.hosts) hosts.push_back(h.name);
  nlohmann::json run = {
      {"schema", evidence::kSchemaVersion},
      {"run_id", std::filesystem::path(paths.root).filename().string()},
      {"engine", engine.kind()},
      {"simulated", engine.simulated()},
      {"tool_version", PPSEARCH_VERSION},
      {"git_sha", PPSEARCH_GIT_SHA},
      {"spec_path", std::filesystem::absolute(o.spec_path).lexically_normal().string()},
      {"overrides", o.overrides},
      {"hosts", hosts},
      {"image", spec.engine.image},
      {"calibration", calibration},
      {"seeds", {{"workload", spec.workload.seed}}},
      {"noise",
       {{"model", "lognormal time stretch per repeat"},
        {"cv", spec.sim.noise_cv},
        {"seed", spec.sim.seed}}},
      {"command_line", o.command_line},
      {"started_at", NowIso()}};
  return WriteFileAtomic(paths.metadata("run.json"), run.dump(2) + "\n");
}

Status WriteSample(const evidence::RunPaths& paths, const evidence::SampleId& id,
                   const SampleOutput& out) {
  for (const auto& node : out.nodes) {
    PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.service(id, node.host), node.log));
    PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.gpu(id, node.host), node.gpu_csv));
  }
  PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.raw(id), evidence::RecordsToJsonl(out.records)));
  // The bench summary is written last: its presence means the sample's files are whole.
  return WriteFileAtomic(paths.bench(id), out.bench.dump(2) + "\n");
}

}  // namespace

std::vector<evidence::SampleId> ExpandSamples(const spec::Spec& spec, const plan::Plan& plan) {
  std::vector<evidence::SampleId> out;
  for (const auto& lp : plan.layouts) {
    if (!lp.valid) continue;
    for (int c : spec.sweep.concurrency)
      for (int r = 1; r <= spec.sweep.repeats; ++r) out.push_back({lp.layout, c, r});
  }
  return out;
}

std::string NewRunDir(const std::string& results_dir, const std::string& name) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
  std::string base = results_dir + "/" + name + "-" + buf;
  std::string dir = base;
  for (int i = 2; std::filesystem::exists(dir); ++i) dir = base + "-" + std::to_string(i);
  return dir;
}

Result<RunOutcome> RunSamples(const RunOptions& o, const spec::Spec& spec, const plan::Plan& plan,
                              SampleEngine& engine,
                              const std::function<void(const RunProgress&)>& progress) {
  RunOutcome outcome;
  const std::vector<evidence::SampleId> samples = ExpandSamples(spec, plan);
  outcome.total = static_cast<int>(samples.size());
  std::set<std::string> done;
  if (!o.resume_dir.empty()) {
    outcome.run_dir = o.resume_dir;
    if (!std::filesystem::exists(evidence::RunPaths{o.resume_dir}.metadata("run.json")))
      return MakeError(o.resume_dir + ": not a ppsearch run directory (no metadata/run.json)");
    PPS_ASSIGN_OR_RETURN(auto states, evidence::ReadManifest(evidence::RunPaths{o.resume_dir}));
    for (const auto& [sample, state] : states)
      if (state == SampleState::kCompleted) done.insert(sample);
  } else {
    outcome.run_dir = NewRunDir(spec.experiment.results_dir, spec.experiment.name);
  }
  const evidence::RunPaths paths{outcome.run_dir};
  if (o.resume_dir.empty()) PPS_RETURN_IF_ERROR(WriteMetadata(paths, o, spec, samples, engine));

  const auto start = std::chrono::steady_clock::now();
  int ran = 0;
  for (const auto& id : samples) {
    if (done.count(id.str())) {
      ++outcome.skipped;
      continue;
    }
    if (o.stop != nullptr && o.stop->load()) {
      outcome.interrupted = true;
      break;
    }
    RunProgress p;
    p.done = outcome.skipped + outcome.completed;
    p.total = outcome.total;
    p.sample = id.str();
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (ran > 0) p.eta_s = p.elapsed_s / ran * (outcome.total - p.done);
    progress(p);
    PPS_RETURN_IF_ERROR(evidence::AppendManifest(paths, id, SampleState::kStarted));
    const plan::LayoutPlan* lp = nullptr;
    for (const auto& l : plan.layouts)
      if (l.layout == id.layout) lp = &l;
    Result<SampleOutput> out = engine.Run(SampleContext{id, lp, SampleSeed(spec, id)});
    if (!out.ok()) {
      // Evidence collected so far stays; the sample is marked failed and the sweep goes on.
      PPS_RETURN_IF_ERROR(evidence::AppendManifest(paths, id, SampleState::kFailed,
                                                   {{"error", out.error().message}}));
      continue;
    }
    PPS_RETURN_IF_ERROR(WriteSample(paths, id, *out));
    PPS_RETURN_IF_ERROR(evidence::AppendManifest(paths, id, SampleState::kCompleted));
    ++outcome.completed;
    ++ran;
    if (o.pace_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.pace_ms));
  }
  return outcome;
}

}  // namespace ppsearch::run
