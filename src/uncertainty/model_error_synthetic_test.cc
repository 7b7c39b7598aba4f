// Data made with a known structural error: throughput that scales with
// pipeline depth as pp * pp^g, g drawn per case, where the model predicts
// pp alone (a factor growing with PP depth that the model lacks). Each case
// is calibrated on PP1 (one measurement, 2% noise) and predicts PP2/4/8.
// The parameter ensemble alone knows only the calibration's noise, so its
// intervals miss most held-out figures; with the discrepancy fitted
// leave-one-case-out, the intervals cover about their nominal 80%.

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "uncertainty/model_error.h"

namespace ppsearch::uncertainty {
namespace {

constexpr double kNoise = 0.02;       // measurement noise, log space
constexpr double kStructural = 0.06;  // sd of g: the missing term's size per case

struct Figure {
  std::string group;
  double reference = 0, predicted = 0;
  Interval parameter;
  Extrapolation d;
};

std::vector<Figure> MakeFigures(int cases, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<Figure> out;
  for (int c = 0; c < cases; ++c) {
    const std::string group = "case" + std::to_string(c);
    const double g = kStructural * z(rng);
    const double theta = 1000;  // true throughput of one stage
    // Calibrate: one noisy PP1 measurement fixes the model's one parameter.
    const double theta_hat = theta * std::exp(kNoise * z(rng));
    // The calibration's posterior: log theta ~ N(log theta_hat, kNoise^2).
    std::vector<double> members;
    for (int m = 0; m < 32; ++m) members.push_back(theta_hat * std::exp(kNoise * z(rng)));
    for (int pp : {2, 4, 8}) {
      Figure f;
      f.group = group;
      f.reference = theta * pp * std::pow(pp, g) * std::exp(kNoise * z(rng));
      f.predicted = theta_hat * pp;
      std::vector<double> band;
      for (double t : members) band.push_back(t * pp);
      f.parameter = IntervalOf(band);
      f.d.pp_depth = std::log(pp);
      out.push_back(f);
    }
  }
  return out;
}

// Share of figures inside their interval; `fitted`: widened by the
// discrepancy fitted without the figure's case, else the parameter band alone.
double Coverage(const std::vector<Figure>& figures, bool fitted) {
  std::vector<Miss> misses;
  for (const Figure& f : figures)
    misses.push_back({std::log(f.reference / f.predicted), f.d, f.group});
  int inside = 0;
  std::string cached_group;
  cost::ModelFormScales scales;
  for (const Figure& f : figures) {
    if (fitted && f.group != cached_group) {
      scales = FitWithout(misses, f.group);
      cached_group = f.group;
    }
    const double sigma = fitted ? ModelFormSigma(scales, f.d) : 0.0;
    const Interval i = Widen(f.predicted, f.parameter, sigma).total;
    inside += f.reference >= i.low && f.reference <= i.high ? 1 : 0;
  }
  return static_cast<double>(inside) / figures.size();
}

TEST(ModelErrorSyntheticTest, FittedDiscrepancyCoversNominallyParametersAloneDoNot) {
  const std::vector<Figure> figures = MakeFigures(40, 11);
  const double with_model_form = Coverage(figures, true);
  const double parameters_only = Coverage(figures, false);
  RecordProperty("coverage_with_model_form", std::to_string(with_model_form));
  RecordProperty("coverage_parameters_only", std::to_string(parameters_only));
  EXPECT_GE(with_model_form, 0.70);
  EXPECT_LE(with_model_form, 0.92);
  EXPECT_LT(parameters_only, 0.45);
}

TEST(ModelErrorSyntheticTest, FitFindsTheMissingTermsSize) {
  const std::vector<Figure> figures = MakeFigures(40, 11);
  std::vector<Miss> misses;
  for (const Figure& f : figures)
    misses.push_back({std::log(f.reference / f.predicted), f.d, f.group});
  const ModelFormFit fit = FitModelForm(misses);
  // The misses carry g * ln(pp) plus two noises (sqrt(2) * 2%): the depth
  // scale lands near kStructural, s0 near the noise.
  EXPECT_NEAR(fit.scales.pp_depth, kStructural, 0.02);
  EXPECT_NEAR(fit.scales.s0, std::sqrt(2.0) * kNoise, 0.015);
}

}  // namespace
}  // namespace ppsearch::uncertainty
