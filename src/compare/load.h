#pragma once
// One side of a comparison read from disk (the I/O edge of this folder): a
// run directory, a run's summary.csv (described by the run it sits in), or
// a bare CSV of medians (the baseline format, analysis/baseline.h).

#include <string>

#include "analysis/run.h"
#include "compare/description.h"
#include "compare/match.h"
#include "util/result.h"

namespace ppsearch::compare {

struct Side {
  RunDescription description;
  SidePoints points;
};

// Errors name the path: missing, not a run directory nor a CSV, a CSV
// without the columns of medians (file:line), a CSV without rows.
Result<Side> LoadSide(const std::string& path);

// A run's description from its evidence: the spec and run.json it holds,
// plus what its GPU snapshots, benchmark summaries and model config say.
RunDescription DescribeEvidence(const analysis::RunEvidence& ev, const std::string& source);

// The baseline a spec imports, as the other side of a confounder check:
// baseline.import_run's own description while that run can be read, else
// `rows` (what was imported) as a CSV of medians named `source`.
RunDescription DescribeImport(const spec::BaselineSpec& baseline,
                              const std::vector<analysis::PointSummary>& rows,
                              const std::string& source);

}  // namespace ppsearch::compare
