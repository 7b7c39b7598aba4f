#pragma once
// A calibration: a value for every named physical parameter (parameters.h),
// how each was obtained, and what the data left uncertain. Uncertainty is a
// Gaussian in log-parameter space (the fit's Laplace approximation: prior
// narrowed by the data) kept inside the physical bounds; a parameter the data
// did not touch keeps its prior's spread.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "cost/parameters.h"
#include "hardware/hardware.h"
#include "util/result.h"

namespace ppsearch::cost {

enum class ParamStatus {
  kPrior,       // no data: the prior's centre and range
  kDetermined,  // the data narrowed it (posterior spread well under the prior's)
  kAtBound,     // the data pushed it onto a physical bound (see Calibration::infeasible)
};
const char* ParamStatusName(ParamStatus s);  // "prior", "determined", "at bound"

struct Calibration {
  Calibration();  // every parameter at its prior's centre

  std::array<double, kParamCount> value{};
  std::array<ParamStatus, kParamCount> status{};
  std::array<std::string, kParamCount> note{};  // why determined / kept / at bound
  // Covariance of log(value), row-major kParamCount x kParamCount; empty: the
  // parameters are independent with their priors' spreads.
  std::vector<double> log_covariance;
  // Set when the fit needed a value beyond a bound: which assumption has to give.
  std::vector<std::string> infeasible;
  // Set when the fit drove a parameter beyond its prior range by more than
  // the range's own width (in log space): what the data claims, and how far
  // that is from what the prior says is physical (OffPrior()).
  std::vector<std::string> off_prior;
  std::string source = "defaults";  // where these values came from
  // The layouts the fit used ("PP1/TP32/EP4"), as the file's fit.layouts
  // lists them; empty when it lists none.
  std::vector<std::string> fitted_layouts;

  double Get(Param p) const { return value[Index(p)]; }
  void Set(Param p, double v) { value[Index(p)] = v; }
  ParamStatus Status(Param p) const { return status[Index(p)]; }

  static Calibration Defaults() { return Calibration(); }
};

// One standard deviation of log(p) under its prior: the prior range spans
// +-2 sigma, so 95% of draws fall inside it.
double PriorLogSigma(Param p, const hardware::HardwareProfile& hw);

// How far `value` lies outside the prior range of `p`, in units of the
// range's width: 0 inside the range, 1 when it lies one whole prior width
// beyond an edge (intra_bw_scale 1.5 with the prior 0.7-1.1). The off-prior rule (docs/model.md,
// "Fitted values far from their prior") flags a fit whose value exceeds 1.
double PriorWidthsOutside(Param p, double value, const hardware::HardwareProfile& hw);
constexpr double kOffPriorWidths = 1.0;

// The covariance to propagate: the stored one, else the priors' (diagonal).
std::vector<double> LogCovariance(const Calibration& c, const hardware::HardwareProfile& hw);

Result<Calibration> LoadCalibration(const std::string& path);
Status SaveCalibration(const Calibration& calibration, const std::string& path,
                       const std::string& extra_json_fields = "");

}  // namespace ppsearch::cost
