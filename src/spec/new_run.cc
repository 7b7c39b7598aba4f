#include "spec/new_run.h"

#include <fmt/format.h>

#include "util/excerpt.h"
#include "util/safe_name.h"

namespace ppsearch::spec {

std::vector<std::string> NewRunProblems(const Spec& spec, bool default_run_id) {
  std::vector<std::string> out;
  const std::string& name = spec.experiment.name;
  if (default_run_id && name.size() > kMaxExperimentNameBytes)
    out.push_back(fmt::format(
        "{}: expected at most {} characters for a run without --run-id, got {} ('{}'): its "
        "default id is the name and '-YYYYMMDD-HHMMSS' (and '-N' for a second run in the same "
        "second), and a run id is at most {} characters; shorten the name or give --run-id",
        spec.Origin("experiment.name").Where(), kMaxExperimentNameBytes, name.size(), Excerpt(name),
        kMaxNameBytes));
  for (size_t i = 0; i < spec.sim.inject.size(); ++i) {
    const SimFault& f = spec.sim.inject[i];
    if (f.count <= spec.workload.requests) continue;
    SourceLoc at = f.origin;
    at.key = fmt::format("sim.inject[{}].count", i);
    out.push_back(fmt::format(
        "{}: count = {} is more than the {} requests of a sample (workload.requests = {}); a "
        "sample can lose at most all of them",
        at.Where(), f.count, spec.workload.requests, spec.workload.requests));
  }
  return out;
}

}  // namespace ppsearch::spec
