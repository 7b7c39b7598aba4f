#pragma once
// Profile evidence a sample of any engine gets beside its own: the export the
// spec names ([profile] file), analysed for the sample's layout, and the
// simulator's breakdown that a profile is read against. A real server's own
// profile (`nsys profile` around it) is the SGLang engine's, sglang/nsys_profile.h.

#include <nlohmann/json.hpp>

#include "cost/calibration.h"
#include "evidence/profile_files.h"
#include "inputs/search_inputs.h"
#include "plan/plan.h"
#include "run/sample_engine.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::run {

// The most nodes any TP group of the layout spans.
int TpSpanNodes(const plan::LayoutPlan& plan);

// The simulator's breakdown of `context`'s layout and concurrency, the numbers
// a profile of that sample is read against: exposed communication, bubble
// and per-stage shares, all-reduces per forward.
evidence::PredictedBreakdown PredictedBreakdownOf(const SampleContext& context,
                                                  const inputs::SearchInputs& inputs,
                                                  const cost::Calibration& calibration);

// The spec's export ([profile] file) analysed for `plan`'s layout.
Result<nlohmann::json> AnalyseExportFile(const spec::ProfileSpec& profile,
                                         const plan::LayoutPlan& plan);

}  // namespace ppsearch::run
