#pragma once
// The simulated engine's sample of a disaggregated deployment: the
// deployment predicted at the sample's load (predict::PredictDisaggregated,
// as `simulate` predicts it) and turned into the evidence a real one leaves,
// each pool's apart: the records as the benchmark client sees them through
// the router, each node's server log and GPU snapshot as its pool's server
// (its --disaggregation-mode, its memory) writes them, and each pool's
// servers, load and share of the TTFT in bench/<sample>.json's
// `disaggregation` group.

#include "cost/calibration.h"
#include "inputs/search_inputs.h"
#include "run/sample_engine.h"
#include "util/result.h"

namespace ppsearch::run {

// `context.deployment` is the plan of the sample's deployment; `noise_factor`
// stretches the repeat's timestamps as an aggregated sample's.
Result<SampleOutput> DeploymentSample(const inputs::SearchInputs& inputs,
                                      const cost::Calibration& calibration,
                                      const SampleContext& context, double noise_factor);

}  // namespace ppsearch::run
