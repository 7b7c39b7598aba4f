#pragma once
// metadata/spec.resolved.json: the spec after defaults and --set overrides,
// every key the run used (secret [engine.env] values redacted), and the
// sweep the run actually ran (a run narrowed with --layout or
// --concurrency). Written by the runner, read back by the run analysis;
// keys: docs/formats.md.

#include <nlohmann/json.hpp>

#include "evidence/evidence.h"
#include "spec/spec.h"

namespace ppsearch::evidence {

nlohmann::json SpecToJson(const spec::Spec& spec);

// The sweep spec.resolved.json records (layouts, concurrency, repeats) in
// place of the spec's own; the spec is left as it is when the file is
// absent or records no sweep. A layout keeps where the spec wrote it.
void ApplyRecordedSweep(const RunPaths& paths, spec::Spec& spec);

}  // namespace ppsearch::evidence
