#pragma once
// metadata/run.json: what made a run (tool, engine, launcher, the spec's
// path and --set values, hosts, image, patch hashes, calibration, seeds,
// noise model, command line). One writer (the runner) and one reader for
// every consumer (the run analysis, resume, compare, the report), so a key
// means the same everywhere. Keys: docs/formats.md.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evidence/evidence.h"
#include "util/result.h"

namespace ppsearch::evidence {

// A patch file the spec names, hashed at run start.
struct RunPatch {
  std::string path;
  uint64_t bytes = 0;
  std::string sha256;
};

// A file the plan and the predictions read (the model config, the hardware
// profile and each base it names), hashed at start: a resume refuses to go
// on past a change, and a report says when it reads one changed since.
struct RunInput {
  std::string key;   // the spec key that names it: engine.model_config, cluster.hardware
  std::string path;  // absolute
  std::string sha256;
};

// The simulated engine's repeat noise.
struct NoiseModel {
  std::string model;
  double cv = 0;
  uint64_t seed = 0;
};

// What a replayed run (`--engine replay:PATH`) answered its samples from:
// a run directory ("run") or a CSV of medians ("medians"), hashed at start.
struct ReplaySource {
  std::string path;  // absolute
  std::string kind;  // "run" | "medians"
  // A CSV's SHA-256; a run directory's is that of the sha256sum listing of
  // the evidence files it replays (run/replay_sample.h).
  std::string sha256;
};

struct RunMetadata {
  std::string schema = kSchemaVersion;
  std::string run_id;
  std::string engine;             // "sim" | "sglang" | "replay"
  std::optional<bool> simulated;  // unset: not recorded
  std::string launcher;           // "" for the simulated engine
  std::string tool_version, git_sha;
  std::string spec_path;               // absolute, as the run resolved it
  std::vector<std::string> overrides;  // the --set values, secrets redacted
  std::vector<std::string> hosts;
  std::string image;
  // The hashes taken at start; unset when run.json has no list (older runs).
  std::optional<std::vector<RunPatch>> patches;
  // Unset when run.json has no list (older runs).
  std::optional<std::vector<RunInput>> inputs;
  // The calibration file the run used, as written (cost/calibration.h owns
  // its keys); null when none.
  nlohmann::json calibration;
  uint64_t workload_seed = 0;
  std::optional<NoiseModel> noise;
  std::optional<ReplaySource> replay;  // set by the replay engine only
  // The SHA-256 of the baseline copied into metadata/ at start (baseline.csv
  // or baseline_run_summary.csv); unset when none was (or an older run).
  std::optional<std::string> baseline_sha256;
  std::string command_line;
  std::string started_at;  // ISO-8601 UTC
  // Chose its samples one point at a time (run --adaptive); its steps are in
  // metadata/adaptive.jsonl (evidence/trajectory.h).
  bool adaptive = false;
};

// Each file named (spec key, path) hashed; an unreadable one is an error
// naming its key.
Result<std::vector<RunInput>> HashInputs(
    const std::vector<std::pair<std::string, std::string>>& key_paths);
// One line per recorded input that is no longer what the run read: "the
// model config /m/config.json (engine.model_config) changed since the run
// started (SHA-256 ab12... then, cd34... now)", or that cannot be read now.
std::vector<std::string> ChangedInputs(const std::vector<RunInput>& recorded);

nlohmann::json RunMetadataToJson(const RunMetadata& m);
// Every key checked for its type; an absent or null key keeps its default.
// Errors name `file` and the key.
Result<RunMetadata> RunMetadataFromJson(const nlohmann::json& j, const std::string& file);

Status WriteRunMetadata(const RunPaths& paths, const RunMetadata& m);
// Errors: the directory is no run directory, run.json is no JSON object, a
// key has the wrong type.
Result<RunMetadata> ReadRunMetadata(const RunPaths& paths);

}  // namespace ppsearch::evidence
