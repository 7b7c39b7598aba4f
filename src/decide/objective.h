#pragma once
// The decision's objectives ([decision] objective): which figure of a load
// point ranks the layouts and which way is better. One definition for the
// decision on measured medians (analysis/) and the ranking of predictions
// (search/).

#include <string>
#include <string_view>
#include <vector>

namespace ppsearch::decide {

// A load point's figures an objective may rank by.
struct ObjectiveFigures {
  double input_tps = 0;
  double ttft_p50_s = 0;
  double output_tps = 0;
  double output_tps_per_gpu = 0;  // output_tps / (pp x tp) GPUs
  double goodput_rps = 0;         // requests/s meeting every SLA limit (stats' goodput)
};

// The names [decision] objective accepts, in the order the docs list them.
const std::vector<std::string>& ObjectiveNames();
// ttft_p50 is the only objective where less is better.
bool ObjectiveLowerIsBetter(std::string_view objective);
double ObjectiveValue(std::string_view objective, const ObjectiveFigures& f);
// For sentences: "input TPS", "TTFT p50", "output TPS per GPU", "goodput".
std::string ObjectiveLabel(std::string_view objective);

}  // namespace ppsearch::decide
