#pragma once
// A disaggregated deployment's part of report.md and report.html: each pool
// (its layout, hosts and GPUs), how loaded each ran and where the requests'
// time to first token went at each load point, which pool held the
// throughput back, and the GPU memory of each pool. Numbers come from the
// samples' bench summaries (their `disaggregation` group) and GPU
// snapshots; a figure is the median over the point's valid repeats.

#include <optional>

#include "analysis/run.h"
#include "report/document.h"

namespace ppsearch::report {

// nullopt for a run of aggregated layouts.
std::optional<Section> PoolsSection(const analysis::RunAnalysis& a);

}  // namespace ppsearch::report
