#pragma once
// `ppsearch simulate` of a disaggregated spec ([sweep.prefill] and
// [sweep.decode]): the deployment predicted at each of the sweep's load
// points (predict/disaggregated.h), printed as text or JSON.

#include <vector>

#include "cli/command.h"
#include "cost/calibration.h"
#include "inputs/search_inputs.h"
#include "plan/disaggregation.h"
#include "util/result.h"

namespace ppsearch::cli {

// `concurrency`: the load points to predict (empty: the sweep's);
// `intervals`: with the model-form intervals (predict::ModelFormIntervals).
Result<ExitCode> SimulateDisaggregated(const inputs::DisaggregatedInputs& in,
                                       const cost::Calibration& calibration,
                                       const std::vector<int>& concurrency, bool intervals,
                                       bool json);

}  // namespace ppsearch::cli
