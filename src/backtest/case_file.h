#pragma once
// A backtest case (`case.toml`): a base spec, named configurations (a layout
// plus --set overrides of the spec), which of them are measured and used for
// calibration, the published reference figures to check, and the tolerance.
// The format is documented in docs/model.md ("The case file"); every
// mistake is reported as file:line:col with the key.

#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/fit.h"
#include "spec/spec.h"
#include "util/result.h"
#include "util/source_loc.h"

namespace ppsearch::backtest {

struct Configuration {
  std::string name;  // the table's key, e.g. "pp4-tp8"
  spec::LayoutSpec layout;
  // `deployment = true` instead of a layout: the base spec (with the
  // overrides) is disaggregated, and this configuration is its whole
  // deployment, predicted by predict::PredictDisaggregated with the
  // parameters' priors (calibrate refuses a deployment's measurement, so
  // there is no fit of one to carry).
  bool deployment = false;
  // --set overrides of the base spec, applied in order ("cluster.hardware=h20-141g").
  std::vector<std::string> overrides;
  int concurrency = 1;  // the point every reference figure of this configuration is at
  bool calibrate = false;
  std::vector<calibrate::MeasuredPoint> measured;  // inline measured points
  std::string measured_csv;     // or a CSV of medians (calibrate::LoadMeasurements), absolute
  std::string profile_summary;  // optional profile summary JSON, absolute
  // A calibration configuration whose family's fit this one is predicted
  // with, when its own model config differs (a variant checkpoint of the same
  // model run on the same kernels); empty: the fit of its own model config.
  std::string calibration_from;
  SourceLoc calibration_from_loc;
  SourceLoc measured_csv_loc, profile_summary_loc;  // where the keys are, for their files' errors
  SourceLoc origin;
};

enum class FigureKind {
  kTpsRatio,  // input TPS of a / input TPS of b
  kTtftP50,   // TTFT p50 of a, seconds
  kTpotMs,    // TPOT p50 of a, milliseconds (decode: (e2e - TTFT) / (output tokens - 1))
  kBeats,     // sign only: a's input TPS exceeds b's
  kRefused,   // the source says SGLang cannot run a: ppsearch must refuse its layout too
  // A deployment's pool at saturation, per node of the pool: the prefill
  // pool's input tok/s and the decode pool's output tok/s (a's pool tokens
  // over the pool's busy time: what it sustains while it works).
  kPrefillTpsPerNode,
  kDecodeTpsPerNode,
};

struct Reference {
  FigureKind kind = FigureKind::kTpsRatio;
  std::string a, b;  // configuration names (b empty but for kTpsRatio and kBeats)
  double value = 0;  // the published ratio or seconds (unused for kBeats)
  std::string what;  // what the source says, for the table
  // kRefused: text the planner's refusal must contain (empty: any refusal).
  std::string because;
  // Why the figure misses its tolerance, with its source (the figure is then
  // reported, not failed; within tolerance, the stale reason fails); empty:
  // it must be within. Not for beats or refused.
  std::string miss;
  SourceLoc origin;
};

// What SGLang printed at startup for one setup (`[[memory]]`): the setup as
// a layout plus --set overrides of the base spec, and one rank's figures.
// Checked against the memory model alone (no calibration): weights per GPU
// within 2%, KV pool tokens within 5%.
struct MemoryReference {
  std::string name;  // the table's key, e.g. "qwen3-235b-fp8-tp4-h100"
  spec::LayoutSpec layout;
  std::vector<std::string> overrides;
  int stage = 0;  // the pipeline stage of the rank whose log this is
  // The GPU the log ran on, and its memory as nvidia-smi reports it (MiB);
  // it replaces the spec's hardware profile's, the only figure of the
  // profile the memory model reads. 0: the profile's.
  std::string gpu;
  double gpu_memory_mib = 0;
  double weight_gib = 0;  // "Load weight end. ... mem usage=X GB" (GiB); 0: not given
  int64_t kv_tokens = 0;  // "KV Cache is allocated. #tokens: N"; 0: not given
  std::string source;     // where the log is published (URL)
  std::string what;       // the log's words, for the table
  // Why a figure misses its tolerance, with its source (the figure is then
  // reported, not failed); empty: it must be within.
  std::string weight_miss, kv_tokens_miss;
  SourceLoc origin;
};

struct Case {
  std::string path;  // the case.toml as found
  std::string name;
  std::string spec_path;  // base spec, absolute
  SourceLoc spec_loc;     // the `spec` key
  double tolerance = 0.15;
  std::vector<Configuration> configurations;  // in the order written
  std::vector<Reference> references;
  std::vector<MemoryReference> memory;  // a case may hold only these

  const Configuration* Find(const std::string& name) const;
  // A `refused` reference names this configuration: it is checked to be
  // invalid, never predicted.
  bool Refused(const std::string& name) const;
};

// Parses `text` as the case file `path` (relative paths resolve against its directory).
Result<Case> ParseCase(const std::string& text, const std::string& path);
Result<Case> LoadCase(const std::string& path);

// The case files under `dir`: dir/case.toml when there is one, else every
// case.toml in its subdirectories (up to four levels), sorted by path.
// An error when there is none.
Result<std::vector<std::string>> FindCases(const std::string& dir);

}  // namespace ppsearch::backtest
