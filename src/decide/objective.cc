#include "decide/objective.h"

namespace ppsearch::decide {

const std::vector<std::string>& ObjectiveNames() {
  static const std::vector<std::string> kNames = {"input_tps", "ttft_p50", "output_tps",
                                                  "output_tps_per_gpu", "goodput"};
  return kNames;
}

bool ObjectiveLowerIsBetter(std::string_view objective) { return objective == "ttft_p50"; }

double ObjectiveValue(std::string_view objective, const ObjectiveFigures& f) {
  if (objective == "ttft_p50") return f.ttft_p50_s;
  if (objective == "output_tps") return f.output_tps;
  if (objective == "output_tps_per_gpu") return f.output_tps_per_gpu;
  if (objective == "goodput") return f.goodput_rps;
  return f.input_tps;
}

std::string ObjectiveLabel(std::string_view objective) {
  if (objective == "ttft_p50") return "TTFT p50";
  if (objective == "output_tps") return "output TPS";
  if (objective == "output_tps_per_gpu") return "output TPS per GPU";
  if (objective == "goodput") return "goodput";
  return "input TPS";
}

}  // namespace ppsearch::decide
