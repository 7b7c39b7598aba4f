#include "run/prepare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "adaptive/preconditions.h"
#include "evidence/evidence.h"
#include "evidence/run_metadata.h"
#include "evidence/run_spec.h"
#include "inputs/search_inputs.h"
#include "predict/disaggregated.h"
#include "predict/predict.h"
#include "run/redact.h"
#include "run/replay_sample.h"
#include "spec/new_run.h"
#include "util/excerpt.h"
#include "util/files.h"
#include "util/safe_name.h"

namespace ppsearch::run {
namespace {

// A resumed run keeps the calibration it was started with (its copy in
// metadata/, or none): the samples after the resume would otherwise come
// from another model than those before, in one run recorded as the first.
// --calibration may repeat the copy's content, not change it.
Status CheckResumeCalibration(const RunRequest& r) {
  if (r.calibration.empty()) return Status::Ok();
  const std::string copy = evidence::RunPaths{r.resume_dir}.calibration_json();
  std::error_code ec;
  if (!std::filesystem::exists(copy, ec))
    return MakeError("--resume continues " + r.resume_dir +
                     ", which was started without a calibration; drop --calibration (" +
                     r.calibration + ") or start a new run");
  PPS_ASSIGN_OR_RETURN(const std::string given, ReadFile(r.calibration));
  PPS_ASSIGN_OR_RETURN(const std::string recorded, ReadFile(copy));
  if (given != recorded)
    return MakeError("--resume continues " + r.resume_dir +
                     " with the calibration it was started "
                     "with (" +
                     copy + "), and " + r.calibration +
                     " differs from it; drop --calibration or start a new run");
  return Status::Ok();
}

// A resumed run keeps what it was started with: its recorded spec and --set
// values, its engine (mixing simulated and real samples would be
// meaningless) and its way of choosing samples. The request may repeat them
// but not change them.
Status CheckResumeKeeps(const RunRequest& r, const evidence::RunMetadata& run,
                        const std::string& engine, const std::string& recorded_engine) {
  if (!engine.empty() && !recorded_engine.empty() && engine != recorded_engine)
    return MakeError(r.resume_dir + " was run with --engine " + recorded_engine +
                     "; resume it with the same engine");
  if (r.adaptive && !run.adaptive)
    return MakeError(r.resume_dir +
                     " ran every sample of its sweep; resume it without --adaptive, or start "
                     "a new adaptive run");
  if (!r.overrides.empty())
    return MakeError(
        "--resume runs the recorded spec with its recorded --set values; drop --set (" +
        r.overrides[0] + ") or start a new run");
  if (!r.spec_path.empty() && AbsolutePath(r.spec_path) != run.spec_path)
    return MakeError("--resume runs the spec recorded in " + r.resume_dir + " (" + run.spec_path +
                     "), not " + r.spec_path + "; drop SPEC or start a new run");
  if (!r.run_id.empty())
    return MakeError("--run-id names a new run; --resume continues " + r.resume_dir);
  return CheckResumeCalibration(r);
}

// The files the plan and the predictions read: the model config, the
// hardware profile and each base it names.
std::vector<std::pair<std::string, std::string>> InputFiles(const inputs::SearchInputs& in) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"engine.model_config", in.model.source_path}};
  for (const std::string& f : in.hardware.files) out.emplace_back("cluster.hardware", f);
  return out;
}

// A resumed run reads the model config and hardware profile it started
// with: after an edit, the samples after the resume would come from another
// model than those before, in one run. Runs that recorded none are not
// checked.
Status CheckInputsUnchanged(const RunRequest& r, const evidence::RunMetadata& run) {
  if (!run.inputs) return Status::Ok();
  const std::vector<std::string> changed = evidence::ChangedInputs(*run.inputs);
  if (changed.empty()) return Status::Ok();
  return MakeError("--resume continues " + r.resume_dir + ", but " + changed.front() +
                   ": the samples after the resume would come from other inputs than those "
                   "before; restore it, or start a new run");
}

// The spec of a run being resumed: the copy in its metadata, resolved as the
// original was (same path, same --set overrides), so a resumed run cannot
// silently change what it measures. Secrets come back from the environment.
Result<PreparedRun> PrepareResume(const RunRequest& r) {
  const evidence::RunPaths paths{r.resume_dir};
  PPS_ASSIGN_OR_RETURN(const evidence::RunMetadata run, evidence::ReadRunMetadata(paths));
  if (run.spec_path.empty())
    return MakeError(paths.run_json() + ": not a valid run description (no 'spec_path' string)");
  // A replay is resumed from the same source: "replay:PATH" as it was given.
  const std::string recorded_engine =
      run.engine == "replay" && run.replay ? kReplayPrefix + run.replay->path : run.engine;
  std::string engine = r.engine;
  if (std::optional<std::string> path = ReplayPath(engine); path && !path->empty())
    engine = kReplayPrefix + AbsolutePath(*path);
  PPS_RETURN_IF_ERROR(CheckResumeKeeps(r, run, engine, recorded_engine));
  PPS_RETURN_IF_ERROR(CheckInputsUnchanged(r, run));
  PPS_ASSIGN_OR_RETURN(spec::Spec spec, evidence::ReadRunSpec(paths, run));
  PPS_RETURN_IF_ERROR(RestoreSecrets(spec));
  PreparedRun p;
  PPS_ASSIGN_OR_RETURN(
      p.inputs, inputs::LoadSearchInputs(std::move(spec), {}, {}, inputs::Deployments::kPlan));
  p.spec_path = run.spec_path;
  p.overrides = run.overrides;
  p.resume_dir = r.resume_dir;
  p.engine_kind = ChooseEngine(engine.empty() ? recorded_engine : engine, p.inputs.spec);
  p.adaptive = run.adaptive;
  p.calibration = r.calibration;
  if (std::filesystem::exists(paths.calibration_json())) p.calibration = paths.calibration_json();
  return p;
}

Result<PreparedRun> PrepareNew(const RunRequest& r) {
  if (r.spec_path.empty()) return MakeError("give SPEC, or --resume RUN_DIR");
  const std::string run_id = r.run_id.empty() ? r.run_id_env : r.run_id;
  if (!run_id.empty() && !IsSafeName(run_id))
    return MakeError("--run-id/RUN_ID '" + Excerpt(run_id) + "' must be " + SafeNameRule() +
                     " (it names the run directory)");
  PreparedRun p;
  PPS_ASSIGN_OR_RETURN(p.inputs,
                       inputs::LoadSearchInputs(inputs::InputsOptions{
                           r.spec_path, r.overrides, {}, {}, inputs::Deployments::kPlan}));
  if (const std::vector<std::string> problems = spec::NewRunProblems(p.inputs.spec, run_id.empty());
      !problems.empty()) {
    return MakeError(fmt::format("{}", fmt::join(problems, "\n")));
  }
  p.spec_path = r.spec_path;
  p.overrides = r.overrides;
  p.run_id = run_id;
  p.adaptive = r.adaptive;
  p.calibration = r.calibration;
  p.engine_kind = ChooseEngine(r.engine, p.inputs.spec);
  PPS_ASSIGN_OR_RETURN(p.input_records, evidence::HashInputs(InputFiles(p.inputs)));
  return p;
}

// Why a disaggregated deployment cannot run as asked, one line each. Only
// the simulated engine runs one so far, every sample of it.
std::vector<std::string> DeploymentRefusals(const PreparedRun& p) {
  const plan::DisaggregatedPlan& deployment = *p.inputs.deployment;
  std::vector<std::string> out;
  for (const plan::Diagnostic& e : deployment.AllErrors()) out.push_back(e.message);
  if (!out.empty()) {
    out.push_back("the deployment is invalid; fix [sweep.prefill] and [sweep.decode]");
    return out;
  }
  const std::string where = p.inputs.spec.Origin("sweep.prefill").Position() + ": ";
  if (p.adaptive)
    out.push_back(where +
                  "an adaptive run chooses among the sweep's layouts, and a disaggregated spec "
                  "holds one deployment; run it without --adaptive");
  if (p.inputs.spec.profile.enabled())
    out.push_back(p.inputs.spec.profile.origin.Position() +
                  ": [profile] analyses one aggregated layout's Nsight Systems profile; "
                  "profiling a disaggregated deployment is not built yet; remove [profile]");
  if (p.engine_kind != "sim" && p.engine_kind != "sglang") {
    out.push_back(where +
                  "a disaggregated deployment runs on the simulated engine or on real servers "
                  "(--engine sim or sglang); --engine " +
                  p.engine_kind + " is not built for one yet");
  } else if (p.engine_kind != "sim") {
    // Real servers: SGLang refuses what it cannot run, with its own words.
  } else if (std::optional<std::string> why = predict::DisaggregatedNotModelled(deployment)) {
    out.push_back(where + *why);
  }
  return out;
}

// Why the planned layouts cannot run on the chosen engine, one line each.
std::vector<std::string> Refusals(const PreparedRun& p) {
  if (p.inputs.deployment) return DeploymentRefusals(p);
  std::vector<std::string> out;
  for (const plan::LayoutPlan& lp : p.inputs.plan.layouts)
    for (const plan::Diagnostic& e : lp.errors) out.push_back(e.message);
  if (!out.empty()) {
    out.push_back("the spec has invalid layouts; fix them or remove them from [sweep]");
    return out;
  }
  if (p.adaptive) return adaptive::AdaptiveRunProblems(p.inputs);
  if (p.engine_kind != "sim") return out;
  for (const plan::LayoutPlan& lp : p.inputs.plan.layouts)
    if (auto why = predict::NotModelled(lp)) out.push_back(*why);
  if (!out.empty())
    out.push_back("the simulated engine cannot run these layouts; remove them from [sweep]");
  return out;
}

}  // namespace

std::string ChooseEngine(const std::string& asked, const spec::Spec& spec) {
  if (!asked.empty()) return asked;
  if (spec.engine.kind == "sglang" && spec.origins.count("cluster.launcher")) return "sglang";
  return "sim";
}

Result<PreparedRun> PrepareRun(const RunRequest& request) {
  PPS_ASSIGN_OR_RETURN(PreparedRun p,
                       request.resume_dir.empty() ? PrepareNew(request) : PrepareResume(request));
  PPS_RETURN_IF_ERROR(inputs::CheckProfileExport(p.inputs.spec.profile));
  p.refusals = Refusals(p);
  return p;
}

}  // namespace ppsearch::run
