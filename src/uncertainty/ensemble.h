#pragma once
// An ensemble of calibrations drawn from what a calibration leaves uncertain:
// the Gaussian of log(parameters) (cost::LogCovariance: the fit's posterior,
// or the priors' spreads) around the calibration's values, kept inside the
// physical bounds. Draws are a Latin hypercube (each parameter's quantile
// range cut into as many strata as members, one draw per stratum, strata
// paired by a seeded shuffle, then re-paired so that the parameters are
// uncorrelated across the members before the covariance correlates them), so
// 32 members cover each parameter's range evenly where plain random draws
// would leave gaps, and no parameter shadows another by chance.
// Deterministic: the same calibration, profile and seed give the same draws.

#include <array>
#include <cstdint>
#include <vector>

#include "cost/calibration.h"
#include "hardware/hardware.h"

namespace ppsearch::uncertainty {

struct EnsembleOptions {
  int members = 32;
  uint64_t seed = 1;
};

struct Ensemble {
  std::vector<cost::Calibration> members;
  // log of each member's (clipped) parameter values, by member then parameter.
  std::vector<std::array<double, cost::kParamCount>> log_values;
  // Whether the parameter varies at all (a zero variance keeps it at its value).
  std::array<bool, cost::kParamCount> varies{};
};

// `options.members` draws (none for 0 or fewer).
Ensemble DrawEnsemble(const cost::Calibration& central, const hardware::HardwareProfile& hw,
                      const EnsembleOptions& options);

// The lower-triangular factor L (L L^T = cov, n x n row-major) used to
// correlate the draws. A parameter with zero variance gets a zero row; when
// the rest is only semi-definite (a fit that ties two parameters together) a
// jitter of at most 1e-6 of the largest variance is added to the diagonal,
// and if even that fails the parameters are drawn independently with their
// own variances.
std::vector<double> CorrelationFactor(const std::vector<double>& cov, int n);

}  // namespace ppsearch::uncertainty
