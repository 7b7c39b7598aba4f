#pragma once
// For the uncertainty tests: the example search, and a calibration whose
// only uncertain parameter is one chosen by the test.

#include <string>

#include "cost/calibration.h"
#include "predict/example_inputs.h"

namespace ppsearch::uncertainty {

using predict::Example;
using predict::ExampleInputs;

// Default values; log-space variance sigma^2 on `p` alone.
inline cost::Calibration OneUncertain(cost::Param p, double sigma) {
  cost::Calibration c;
  c.log_covariance.assign(cost::kParamCount * cost::kParamCount, 0.0);
  c.log_covariance[cost::Index(p) * cost::kParamCount + cost::Index(p)] = sigma * sigma;
  return c;
}

}  // namespace ppsearch::uncertainty
