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

struct SampleVerdict {
  evidence::Verdict verdict = evidence::Verdict::kOk;
  std::string detail;
};

SampleVerdict DecideVerdict(const spec::Spec& spec, const evidence::SampleId& id,
                            const SampleOutput& out);

}  // namespace ppsearch::run
