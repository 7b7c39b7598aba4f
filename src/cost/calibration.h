#pragma once
// A calibration: a value for every named physical parameter (parameters.h),
// how each was obtained, and what the data left uncertain. Uncertainty is a
// Gaussian in log-parameter space (the fit's Laplace approximation: prior
// narrowed by the data) kept inside the physical bounds; a parameter the data
// did not touch keeps its prior's spread. The file that keeps one on disk is
// evidence/calibration_file.h's.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/parameters.h"
#include "hardware/hardware.h"

namespace ppsearch::cost {

// The model-form (discrepancy) term a calibration's intervals carry beside
// its parameters' uncertainty (uncertainty/model_error.h): the standard
// deviation of log(measured / predicted) is
//   sigma^2 = s0^2 + sum_k (scale_k * d_k)^2
// with d_k how far a prediction extrapolates from what was calibrated.
// The form's name, as the calibration file and data/model_error.json state it.
inline constexpr const char* kModelForm =
    "lognormal: sigma^2 = s0^2 + (pp_depth*d_pp)^2 + (node_span*d_span)^2 + "
    "(input_length*d_len)^2 + (hardware*d_hw)^2 + (concurrency*d_c)^2 + "
    "(output_length*d_out)^2 + (uncalibrated*d_uncal)^2";

// The distances' names, in the form's order: the keys of every file and JSON
// object that lists the scales or the distances.
inline constexpr int kModelFormDistances = 7;
inline constexpr std::array<const char*, kModelFormDistances> kModelFormDistanceNames = {
    "pp_depth",    "node_span",     "input_length", "hardware",
    "concurrency", "output_length", "uncalibrated"};

// The most a model-form scale (s0 or a per-unit one) can be: each is a
// standard deviation of log(measured / predicted), and at 2 a prediction is
// off by a factor of 7.4 at one sigma, beyond which it says nothing a draw
// could rank by (at 1e5 every draw overflows to 0 or infinity).
inline constexpr double kMaxModelFormSigma = 2.0;
inline constexpr const char* kModelFormSigmaWhy =
    "a standard deviation of log(measured / predicted); 2 is a factor of 7.4 at one sigma";
// Whether `x` is such a scale (a fit that stops at the bound rounds to it).
inline bool ModelFormSigmaInRange(double x) { return x >= 0 && x <= kMaxModelFormSigma + 1e-9; }
// The most a variance of log(parameter) can be: a standard deviation of 3
// spans a factor of 20 at one sigma, wider than any parameter's physical
// bounds allow.
inline constexpr double kMaxLogVariance = 9.0;
inline constexpr const char* kMaxLogVarianceWhy =
    "of log(parameter); 9 is a factor of 20 at one sigma, wider than any parameter's bounds";

struct ModelFormScales {
  double s0 = 0;             // at a calibrated point
  double pp_depth = 0;       // per unit |ln(pp / pp_calibrated)|
  double node_span = 0;      // per unit |ln(nodes a TP group spans / calibrated)|
  double input_length = 0;   // per unit |ln(input tokens / calibrated)|
  double hardware = 0;       // a GPU profile other than the calibrated one
  double concurrency = 0;    // per unit |ln(concurrency / calibrated)|: the batch a step runs
  double output_length = 0;  // per unit |ln(output tokens / calibrated)|: prefill to decode
  // A prediction with no calibration behind it (the parameters' priors, 0
  // or 1): how far the model is from a cluster before anything is measured.
  double uncalibrated = 0;
  std::string source;  // the file the values came from

  // The per-unit scales in kModelFormDistanceNames' order, and back.
  std::array<double, kModelFormDistances> PerUnit() const {
    return {pp_depth, node_span, input_length, hardware, concurrency, output_length, uncalibrated};
  }
  void SetPerUnit(const std::array<double, kModelFormDistances>& s) {
    pp_depth = s[0], node_span = s[1], input_length = s[2], hardware = s[3];
    concurrency = s[4], output_length = s[5], uncalibrated = s[6];
  }
};

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
  // What else the fit saw, for the model-form term's extrapolation distances
  // (fit.hardware, fit.gpus_per_node, fit.input_tokens, fit.concurrency,
  // fit.output_tokens; empty or 0: not recorded).
  std::string fitted_hardware;
  int fitted_gpus_per_node = 0;
  int64_t fitted_input_tokens = 0;
  std::vector<int> fitted_concurrency;  // every measured point's, ascending, once each
  int64_t fitted_output_tokens = 0;
  // The model-form term the file states it uses (its "model_error" object);
  // nullopt: the file states none, and the shipped fit applies.
  std::optional<ModelFormScales> model_form;

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

}  // namespace ppsearch::cost
