#pragma once
// The report's "Profile evidence" section: every sample's Nsight Systems
// analysis (profile/<sample>/<name>.json) quoted next to the simulator's
// breakdown of the same layout (profile/<sample>/predicted.json).

#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::report {

// One sentence per profile, in sample order; empty when the run has none.
// A file that is not the JSON `ppsearch nsys` writes is an error naming it.
Result<std::vector<std::string>> ProfileEvidenceLines(const std::string& run_dir);

}  // namespace ppsearch::report
