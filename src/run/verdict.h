#pragma once
// The verdict the manifest records for a finished sample: the engine's own
// (a server that never started, died, timed out, a failed preflight) wins;
// otherwise the evidence decides (failed requests, the validity gate, log
// findings) by the same rules `ppsearch report` applies.

#include <string>

#include "evidence/evidence.h"
#include "run/sample_engine.h"
#include "spec/spec.h"

namespace ppsearch::run {

struct Verdict {
  std::string name;  // ok | engine_failed_to_start | engine_died | requests_failed | ...
  std::string detail;
};

Verdict DecideVerdict(const spec::Spec& spec, const evidence::SampleId& id,
                      const SampleOutput& out);

}  // namespace ppsearch::run
