#pragma once
// What a new run needs of its spec beyond what the parser checks: limits
// that a run directory's recorded spec, re-read by report, resume, replay
// and compare, must not be held to. A run made before a limit existed keeps
// its evidence readable; only a new run (and validate) is refused.

#include <string>
#include <vector>

#include "spec/spec.h"

namespace ppsearch::spec {

// One line per problem, each at its spec origin:
// - with `default_run_id` (no --run-id, no RUN_ID), an experiment.name too
//   long for its default run id (the name and a time, util/safe_name.h) to
//   be a run id;
// - a sim.inject count above workload.requests: a sample cannot lose more
//   requests than it sends, and capping it would rehearse another fault.
std::vector<std::string> NewRunProblems(const Spec& spec, bool default_run_id);

}  // namespace ppsearch::spec
