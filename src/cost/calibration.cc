#include "cost/calibration.h"

#include <algorithm>
#include <cmath>

namespace ppsearch::cost {

const char* ParamStatusName(ParamStatus s) {
  switch (s) {
    case ParamStatus::kPrior:
      return "prior";
    case ParamStatus::kDetermined:
      return "determined";
    case ParamStatus::kAtBound:
      return "at bound";
  }
  return "prior";
}

Calibration::Calibration() {
  for (const auto& p : AllParams()) {
    value[Index(p.param)] = p.nominal;
    status[Index(p.param)] = ParamStatus::kPrior;
  }
}

double PriorLogSigma(Param p, const hardware::HardwareProfile& hw) {
  const Range r = Prior(p, hw);
  // A prior touching zero (jitter) is spread in log space from 1% of its top.
  const double lo = std::max(r.lo, r.hi * 0.01);
  return std::max(std::log(r.hi / lo) / 4, 1e-6);
}

double PriorWidthsOutside(Param p, double value, const hardware::HardwareProfile& hw) {
  const Range r = Prior(p, hw);
  const double width = r.hi - r.lo;
  if (width <= 0) return 0;
  return std::max({r.lo - value, value - r.hi, 0.0}) / width;
}

std::vector<double> LogCovariance(const Calibration& c, const hardware::HardwareProfile& hw) {
  constexpr size_t n = kParamCount;
  if (c.log_covariance.size() == n * n) return c.log_covariance;
  std::vector<double> cov(n * n, 0.0);
  for (const auto& p : AllParams()) {
    const double s = PriorLogSigma(p.param, hw);
    cov[Index(p.param) * n + Index(p.param)] = s * s;
  }
  return cov;
}

}  // namespace ppsearch::cost
