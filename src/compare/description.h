#pragma once
// What one side of a comparison says about how it was measured: every
// setting that can change a result, as flat key -> text pairs
// ("engine.args.chunked-prefill-size" -> "8192"), built from a run's spec,
// metadata/run.json and what its evidence observed (GPU names and drivers in
// the snapshots, the version the servers reported). A bare CSV of medians
// holds almost none of it; the keys it lacks are "not recorded", which the
// confounder check reports as unchecked rather than as equal.

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/points.h"
#include "evidence/run_metadata.h"
#include "spec/spec.h"

namespace ppsearch::compare {

// Settings whose absence means "unset" (a flag not given, no such variable,
// no such patch) on a side that has metadata, rather than "not recorded".
inline constexpr const char* kArgPrefix = "engine.args.";
inline constexpr const char* kEnvPrefix = "engine.env.";
inline constexpr const char* kPatchPrefix = "engine.patches.";
inline constexpr const char* kUnset = "unset";

struct RunDescription {
  std::string source;             // the path as given
  std::string what;               // "run directory", "summary.csv of run X", "CSV of medians"
  bool has_metadata = false;      // false: a bare CSV, nearly nothing could be recorded
  std::optional<bool> simulated;  // nullopt: the side does not say
  std::map<std::string, std::string> settings;
  // The pipeline sizes of the run's layouts (pools included); empty when
  // the side does not say. A setting of one pipeline size's layouts
  // (PipelineSizeOf) is compared only where both sides ran that size.
  std::set<int> pp_sizes;
};

// The pipeline size a per-size setting key names ("engine.env.
// SGLANG_PP_LAYER_PARTITION (PP8)" -> 8); nullopt for any other key.
std::optional<int> PipelineSizeOf(const std::string& key);

// What a run's evidence observed beyond its spec; empty sets when nothing
// was recorded (a simulated run has no driver or server version).
struct Observed {
  std::set<std::string> gpu_names;        // snapshot "name" column
  std::set<std::string> driver_versions;  // snapshot "driver_version" column
  std::set<std::string> server_versions;  // each bench/<sample>.json's server version
  std::string model_config_sha256;        // "" when the config could not be read
  std::string model_quantization;         // model::ModelDesc::quantization; "" unknown
};

// A run directory's settings: spec (as the run re-reads it from
// metadata/spec.toml), run.json (engine kind, image, patch hashes,
// calibration) and `seen`.
RunDescription DescribeRun(const spec::Spec& spec, const evidence::RunMetadata& run,
                           const Observed& seen, const std::string& source);

// A CSV of medians: only what its columns say (requests per sample,
// repeats, and summary.csv's simulated column when present).
RunDescription DescribeCsv(const std::vector<analysis::PointSummary>& rows,
                           std::optional<bool> simulated, const std::string& source);

// Several observed values as one text: "a", or "a, b" when they differ
// within the run (itself worth a look).
std::string JoinValues(const std::set<std::string>& values);

}  // namespace ppsearch::compare
