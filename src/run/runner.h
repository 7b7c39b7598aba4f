#pragma once
// `ppsearch run`: every sample (layout x concurrency x repeat) of a spec, in
// order, into results/<RUN_ID>/. Each sample's files are written atomically
// before the manifest says "completed", so a crash or Ctrl-C leaves a
// consistent directory and --resume runs exactly the samples not completed.

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "evidence/run_metadata.h"
#include "launch/launcher.h"
#include "plan/disaggregation.h"
#include "plan/plan.h"
#include "run/sample_engine.h"
#include "spec/spec.h"

namespace ppsearch::run {

struct RunOptions {
  std::string spec_path;                   // as the user gave it
  std::vector<std::string> overrides;      // --set values
  std::string command_line;                // recorded for "how to reproduce"
  std::string calibration_json;            // the calibration file's text ("" for none)
  std::vector<evidence::RunInput> inputs;  // run.json's `inputs` (a new run's)
  std::string resume_dir;                  // "" for a new run
  std::string run_id;                      // "" for <name>-<UTC time>; ignored with resume_dir
  int pace_ms = 0;                         // sleep after each sample (demos, interruption tests)
  // Set by SIGINT/SIGTERM: no sample begins after it, and the sample running
  // is cut short (SampleContext::stop) and recorded interrupted.
  const std::atomic<bool>* stop = nullptr;
  // Set by a second signal: the servers being stopped are killed at once
  // (SampleContext::kill_now).
  const std::atomic<bool>* kill_now = nullptr;
  // The real engine's launcher: a resume first stops what an earlier
  // process left running through it. nullptr for the simulated engine.
  launch::Launcher* launcher = nullptr;
  std::function<void(const std::string&)> notice;  // one line for the user (stderr)
  // The simulator's time breakdown of a sample's layout, written beside its
  // profile evidence (profile/<sample>/predicted.json); unset: none.
  std::function<evidence::PredictedBreakdown(const SampleContext&)> predicted_breakdown;
  // The commands a sample stands for, one display line each (the SGLang
  // servers and the benchmark, sglang/commands.h), for commands.txt; unset: none.
  std::function<std::vector<std::string>(const evidence::SampleId&)> sample_commands;
  // An adaptive run (adaptive/session.h): asked before each step for the
  // samples to run next, until it returns none; the samples it never asks
  // for are not run. Unset: every sample of the sweep, in order.
  std::function<Result<std::vector<evidence::SampleId>>(const evidence::RunPaths&)> next_samples;
  // A disaggregated spec's deployment, planned (inputs::SearchInputs::
  // deployment): its samples are the sweep's. Null for an aggregated spec.
  const plan::DisaggregatedPlan* deployment = nullptr;
};

struct RunProgress {
  int done = 0;  // completed, including those found on resume
  int total = 0;
  std::string sample;  // the one starting now
  double elapsed_s = 0;
  double eta_s = -1;  // -1 unknown
};

struct RunOutcome {
  std::string run_dir;
  int completed = 0;
  int not_ok = 0;   // completed with a verdict other than ok
  int skipped = 0;  // already completed before a resume
  int total = 0;
  bool interrupted = false;
};

// All samples of the spec's valid layouts in run order; a disaggregated
// spec's, of its deployment when `deployment` (its plan) is valid.
std::vector<evidence::SampleId> ExpandSamples(const spec::Spec& spec, const plan::Plan& plan,
                                              const plan::DisaggregatedPlan* deployment = nullptr);

// The seed of a sample's workload: the spec's seed, varied per repeat so
// repeats never share prompts.
uint64_t SampleSeed(const spec::Spec& spec, const evidence::SampleId& sample);

// "<name>-YYYYMMDD-HHMMSS" (UTC); a suffix -2, -3, ... when taken.
std::string NewRunDir(const std::string& results_dir, const std::string& name);

// Each of the spec's engine.patches hashed, as run.json records them; an
// unreadable one is an error naming its key (`validate` checks the same).
Result<std::vector<evidence::RunPatch>> PatchRecords(const spec::Spec& spec);

Result<RunOutcome> RunSamples(const RunOptions& options, const spec::Spec& spec,
                              const plan::Plan& plan, SampleEngine& engine,
                              const std::function<void(const RunProgress&)>& progress);

}  // namespace ppsearch::run
