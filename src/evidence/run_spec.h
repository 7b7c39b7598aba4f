#pragma once
// A run's spec read back from its directory, as the run resolved it. Apart
// from run_metadata so the readers of the evidence alone (and their fuzzer)
// do not need the spec parser.

#include "evidence/evidence.h"
#include "evidence/run_metadata.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::evidence {

// The run's spec as it ran: metadata/spec.toml with the recorded --set
// values, its relative paths resolved against the recorded spec_path's
// directory (as they did), its messages naming the copy. Secrets stay
// redacted.
Result<spec::Spec> ReadRunSpec(const RunPaths& paths, const RunMetadata& m);

}  // namespace ppsearch::evidence
