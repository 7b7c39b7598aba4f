#pragma once
// The "Prediction and time breakdown" section of report.md and report.html:
// the simulator's central values next to the measured medians, and each
// stage's share of the sample window in compute, exposed TP communication,
// pipeline transfer, kernel gaps and idle (the bubble).

#include <vector>

#include "analysis/points.h"
#include "analysis/prediction.h"
#include "report/document.h"

namespace ppsearch::report {

// `measured` (this run's points; empty for a prediction alone) adds the
// measured median and its difference from the prediction.
Section PredictionSection(const analysis::RunPrediction& prediction,
                          const std::vector<analysis::PointSummary>& measured);

// Per stage of each predicted point: the five shares and the peak memory.
table::Table BreakdownTable(const analysis::RunPrediction& prediction);

}  // namespace ppsearch::report
