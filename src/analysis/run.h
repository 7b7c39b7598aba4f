#pragma once
// A whole run directory analysed from its evidence alone (the reader at the
// edge of this folder): metadata, manifest, every sample's records, logs and
// GPU snapshots, the points, the baseline (this run's or imported), memory
// per layout, the planner's view of each layout, and the decision.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/decision.h"
#include "analysis/points.h"
#include "analysis/prediction.h"
#include "analysis/sample.h"
#include "evidence/run_metadata.h"
#include "evidence/trajectory.h"
#include "inputs/search_inputs.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::analysis {

// A sample of the sweep that did not complete: state is "not run", "started",
// "failed" or "interrupted".
struct MissingSample {
  std::string name;
  std::string state;
};

// What a run directory holds, read and analysed sample by sample.
struct RunEvidence {
  std::string run_dir;
  evidence::RunMetadata metadata;  // metadata/run.json
  std::string run_id;              // run.json's run_id, else the directory's name
  std::string engine;              // "sim" | "sglang" | "replay" (run.json)
  std::string command_line;        // the command that made the run (run.json), "" when unknown
  spec::Spec spec;
  bool simulated = false;
  std::vector<SampleAnalysis> samples;  // every sample the manifest names, in its order
  std::vector<MissingSample> missing;   // sweep samples whose last state is not completed
  // An adaptive run's trajectory (metadata/adaptive.jsonl), and the sweep
  // samples it ended without needing: once it stopped for any reason but a
  // spent budget, a sample it never began is not missing.
  std::optional<evidence::Trajectory> trajectory;
  std::vector<std::string> not_needed;
  std::vector<PointSummary> points;  // this run's, no baseline applied
  // Evidence that is damaged and belongs to no sample: manifest lines that
  // could not be read or name a sample outside the sweep ("manifest.jsonl:LINE: ...").
  std::vector<std::string> problems;
  std::vector<std::string> warnings;  // evidence that could not be audited
};

// Reads `run_dir`. Errors (the directory, metadata/run.json or
// metadata/spec.toml missing or invalid) name the path and what is missing.
Result<RunEvidence> LoadRunEvidence(const std::string& run_dir);

struct RunAnalysis {
  RunEvidence evidence;
  std::optional<spec::LayoutSpec> baseline_layout;
  std::string baseline_source;  // "this run", or the imported CSV / run directory
  // The file the baseline rows were read from: the copy in metadata/ when the
  // run made one, else the spec's path; "" for a baseline of this run.
  std::string baseline_file;
  // One plain sentence about where the rows came from, or why there are none.
  std::string baseline_note;
  bool baseline_imported = false;
  std::vector<PointSummary> baseline_rows;  // rows deltas are taken against (is_baseline set)
  std::vector<PointSummary> points;         // this run's, deltas applied
  // The spec copy's model, hardware and plan; absent when they would not load.
  std::optional<inputs::SearchInputs> inputs;
  std::optional<plan::LayoutPlan> baseline_plan;  // an imported baseline layout not in the sweep
  std::vector<LayoutMemory> memory;               // sweep layouts, then an imported baseline
  Decision decision;
  RunPrediction prediction;  // the simulator's view of the sweep, or why there is none
  std::vector<std::string> spec_warnings;  // planner warnings about the workload, not flags
  std::vector<std::string> comparability;  // baseline differences
  std::vector<std::string> warnings;       // evidence and loading problems

  const spec::Spec& spec() const { return evidence.spec; }
  const plan::Plan* plan() const { return inputs ? &inputs->plan : nullptr; }
  bool incomplete() const { return !evidence.missing.empty(); }
};

// LoadRunEvidence, then baseline, plan, memory, decision and prediction.
Result<RunAnalysis> AnalyseRun(const std::string& run_dir);

}  // namespace ppsearch::analysis
