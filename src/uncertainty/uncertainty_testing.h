#pragma once
// For the uncertainty tests: the example's hardware profile, and a
// calibration whose only uncertain parameter is one chosen by the test.

#include "cost/calibration.h"
#include "testkit/example_search.h"

namespace ppsearch::uncertainty {

// The example search's hardware profile (RTX 6000D).
inline const hardware::HardwareProfile& ExampleHardware() { return testkit::Example().hardware; }

// Default values; log-space variance sigma^2 on `p` alone.
inline cost::Calibration OneUncertain(cost::Param p, double sigma) {
  cost::Calibration c;
  c.log_covariance.assign(cost::kParamCount * cost::kParamCount, 0.0);
  c.log_covariance[cost::Index(p) * cost::kParamCount + cost::Index(p)] = sigma * sigma;
  return c;
}

}  // namespace ppsearch::uncertainty
