#include "cli/simulate_disaggregated.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "inputs/search_inputs.h"
#include "predict/disaggregated.h"
#include "report/disaggregated_prediction.h"
#include "uncertainty/model_error_file.h"

namespace ppsearch::cli {

Result<ExitCode> SimulateDisaggregated(const inputs::DisaggregatedInputs& in,
                                       const cost::Calibration& calibration,
                                       const std::vector<int>& concurrency, bool intervals,
                                       bool json) {
  std::vector<std::string> errors;
  for (const plan::Diagnostic& e : in.plan.AllErrors()) errors.push_back(e.message);
  if (!errors.empty()) return ErrorLines(errors);
  if (auto why = predict::DisaggregatedNotModelled(in.plan)) return MakeError(*why);

  const spec::WorkloadSpec& w = in.spec.workload;
  report::DisaggregatedPage page;
  page.spec_path = in.spec.path;
  page.calibration_source = calibration.source;
  page.model_name = in.model.name;
  page.gpu_name = fmt::format("{} x {} {}", in.spec.cluster.hosts.size(),
                              in.spec.cluster.gpus_per_node, in.hardware.gpu_name);
  page.gpu_total_mib = in.hardware.memory_mib;
  page.workload_requests = w.requests;
  page.input_tokens = w.input_tokens;
  page.output_tokens = w.output_tokens;
  page.plan = &in.plan;
  page.transfer = predict::TransferFor(in.plan, in.model, in.hardware);
  std::optional<cost::ModelFormScales> scales;
  if (intervals) {
    PPS_ASSIGN_OR_RETURN(scales, uncertainty::ModelFormFor(calibration));
  }
  const std::vector<int>& levels = concurrency.empty() ? in.spec.sweep.concurrency : concurrency;
  for (int c : levels) {
    predict::PointOptions options;
    options.concurrency = c;
    options.seed = static_cast<uint64_t>(w.seed);
    options.token_times = false;  // no figure here reads the inter-token gaps
    page.points.push_back(predict::PredictDisaggregated(in.plan, in.spec, in.model, in.hardware,
                                                        calibration, options));
    if (scales)
      page.intervals.push_back(predict::ModelFormIntervals(page.points.back(), in.plan, in.spec,
                                                           in.hardware, calibration, *scales));
  }
  if (json)
    std::cout << report::DisaggregatedPredictionJson(page).dump(2) << "\n";
  else
    std::cout << report::RenderDisaggregatedPrediction(page);
  return kExitOk;
}

}  // namespace ppsearch::cli
