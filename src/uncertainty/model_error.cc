#include "uncertainty/model_error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ppsearch::uncertainty {
namespace {

double AbsLogRatio(double a, double b) { return a > 0 && b > 0 ? std::fabs(std::log(a / b)) : 0.0; }

constexpr int kN = cost::kModelFormDistances;
using Scales = std::array<double, kN>;

double Variance(double s0, const Scales& s, const Extrapolation& d) {
  const Scales c = d.Values();
  double v = s0 * s0;
  for (int k = 0; k < kN; ++k) v += (s[k] * c[k]) * (s[k] * c[k]);
  return v;
}

double Sum(double s0, const Scales& s) {
  double total = s0;
  for (double x : s) total += x;
  return total;
}

// The misses' log-likelihood under N(0, sigma_i^2).
double LogLikelihood(const std::vector<Miss>& misses, double s0, const Scales& s) {
  double ll = 0;
  for (const Miss& m : misses) {
    const double v = Variance(s0, s, m.d);
    ll += -0.5 * (std::log(2 * M_PI * v) + m.log_error * m.log_error / v);
  }
  return ll;
}

// The maximum of f on [lo, hi] (golden section; f unimodal enough there).
template <typename F>
double GoldenMax(F f, double lo, double hi) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < 60 && b - a > 1e-6; ++i) {
    if (fc >= fd) {
      b = d, d = c, fd = fc;
      c = b - g * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + g * (b - a), fd = f(d);
    }
  }
  return (a + b) / 2;
}

}  // namespace

int NodesSpanned(const spec::LayoutSpec& layout, int gpus_per_node) {
  if (gpus_per_node <= 0) return 1;
  return std::max(1, (layout.tp + gpus_per_node - 1) / gpus_per_node);
}

Extrapolation Distance(const Site& a, const Site& b) {
  Extrapolation d;
  d.pp_depth = AbsLogRatio(a.layout.pp, b.layout.pp);
  if (a.gpus_per_node > 0 && b.gpus_per_node > 0)
    d.node_span = AbsLogRatio(NodesSpanned(a.layout, a.gpus_per_node),
                              NodesSpanned(b.layout, b.gpus_per_node));
  d.input_length =
      AbsLogRatio(static_cast<double>(a.input_tokens), static_cast<double>(b.input_tokens));
  d.hardware = !a.hardware.empty() && !b.hardware.empty() && a.hardware != b.hardware ? 1.0 : 0.0;
  // Concurrency is the batch a decode step runs, a kernel shape the cost
  // model extrapolates to; for one-token requests it only sets the queue,
  // which the scheduler simulation plays out exactly.
  if (a.output_tokens > 1 && b.output_tokens > 1)
    d.concurrency = AbsLogRatio(a.concurrency, b.concurrency);
  d.output_length =
      AbsLogRatio(static_cast<double>(a.output_tokens), static_cast<double>(b.output_tokens));
  return d;
}

double ModelFormSigma(const cost::ModelFormScales& s, const Extrapolation& d) {
  return std::sqrt(Variance(s.s0, s.PerUnit(), d));
}

bool ParseLayoutLabel(const std::string& label, spec::LayoutSpec* out) {
  int pp = 0, tp = 0, ep = 0, n = 0;
  if (std::sscanf(label.c_str(), "PP%d/TP%d/EP%d%n", &pp, &tp, &ep, &n) != 3 ||
      n != static_cast<int>(label.size()) || pp < 1 || tp < 1 || ep < 1)
    return false;
  out->pp = pp;
  out->tp = tp;
  out->ep = ep;
  return true;
}

Extrapolation FromCalibration(const Site& point, const cost::Calibration& calibration,
                              const cost::ModelFormScales& scales) {
  Extrapolation best;
  double best_sigma = -1;
  // A calibration that recorded no concurrency: no concurrency distance.
  std::vector<int> levels = calibration.fitted_concurrency;
  if (levels.empty()) levels.push_back(0);
  for (const std::string& label : calibration.fitted_layouts) {
    Site fitted;
    if (!ParseLayoutLabel(label, &fitted.layout)) continue;
    fitted.gpus_per_node = calibration.fitted_gpus_per_node;
    fitted.hardware = calibration.fitted_hardware;
    fitted.input_tokens = calibration.fitted_input_tokens;
    fitted.output_tokens = calibration.fitted_output_tokens;
    for (int level : levels) {
      fitted.concurrency = level;
      const Extrapolation d = Distance(point, fitted);
      if (const double s = ModelFormSigma(scales, d); best_sigma < 0 || s < best_sigma) {
        best_sigma = s;
        best = d;
      }
    }
  }
  if (best_sigma < 0) best.uncalibrated = 1;
  return best;
}

SplitInterval Widen(double central, const Interval& parameter, double sigma) {
  SplitInterval out;
  out.parameter = parameter;
  out.model_form_rel = kZ90 * sigma;
  if (!(central > 0)) {
    out.total = parameter;
    return out;
  }
  // The parameter band's sides in log space (a band that does not contain
  // the central value contributes nothing on that side).
  const double lo = parameter.low > 0 ? std::max(0.0, std::log(central / parameter.low)) : 0.0;
  const double hi = parameter.high > 0 ? std::max(0.0, std::log(parameter.high / central)) : 0.0;
  const double m2 = out.model_form_rel * out.model_form_rel;
  out.total.low = std::min(parameter.low > 0 ? parameter.low : central,
                           central * std::exp(-std::sqrt(lo * lo + m2)));
  out.total.high = std::max(parameter.high, central * std::exp(std::sqrt(hi * hi + m2)));
  return out;
}

double ModelFormShare(const SplitInterval& s, double central) {
  if (!(central > 0) || !(s.parameter.low > 0) || !(s.parameter.high > 0)) return 1.0;
  const double p = (std::fabs(std::log(central / s.parameter.low)) +
                    std::fabs(std::log(s.parameter.high / central))) /
                   2;
  const double m2 = s.model_form_rel * s.model_form_rel;
  return m2 + p * p > 0 ? m2 / (m2 + p * p) : 0.0;
}

Extrapolation Compared(Extrapolation d) {
  d.hardware = d.input_length = d.output_length = d.uncalibrated = 0;
  return d;
}

void ApplyModelForm(PointUncertainty& u, double sigma, double compared_sigma) {
  u.model_form_rel = kZ90 * sigma;
  u.compared_model_form_rel = kZ90 * compared_sigma;
  u.compared_input_tps = Widen(u.central.input_tps, u.parameter.input_tps, compared_sigma).total;
  u.compared_ttft_p50_s = Widen(u.central.ttft_p50_s, u.parameter.ttft_p50_s, compared_sigma).total;
  u.compared_output_tps = Widen(u.central.output_tps, u.parameter.output_tps, compared_sigma).total;
  u.input_tps = Widen(u.central.input_tps, u.parameter.input_tps, sigma).total;
  u.ttft_p50_s = Widen(u.central.ttft_p50_s, u.parameter.ttft_p50_s, sigma).total;
  u.ttft_p95_s = Widen(u.central.ttft_p95_s, u.parameter.ttft_p95_s, sigma).total;
  // The decode figures are 0 for a prefill-only workload; Widen keeps those.
  u.tpot_p50_s = Widen(u.central.tpot_p50_s, u.parameter.tpot_p50_s, sigma).total;
  u.itl_p99_s = Widen(u.central.itl_p99_s, u.parameter.itl_p99_s, sigma).total;
  u.output_tps = Widen(u.central.output_tps, u.parameter.output_tps, sigma).total;
  u.e2e_p50_s = Widen(u.central.e2e_p50_s, u.parameter.e2e_p50_s, sigma).total;
}

ModelFormFit FitModelForm(const std::vector<Miss>& misses, const ModelFormFloors& floors) {
  ModelFormFit out;
  out.misses = static_cast<int>(misses.size());
  for (const Miss& m : misses) {
    const Scales c = m.d.Values();
    for (int k = 0; k < kN; ++k) out.identified[k] = out.identified[k] || c[k] > 0;
  }
  double s0 = floors.s0;
  // A scale's floor: one e-fold of extrapolation is at least as uncertain as
  // a calibrated point (s0), and never under the per-unit floor.
  const auto per_unit_floor = [&] { return std::max(floors.per_unit, s0); };
  Scales s{};
  for (int k = 0; k < kN; ++k) s[k] = out.identified[k] ? per_unit_floor() : 0.0;
  // Scales beyond 2 (a factor e^2 per unit) are not a model but its absence.
  const double log_hi = std::log(cost::kMaxModelFormSigma);
  if (!misses.empty()) {
    for (int round = 0; round < 30; ++round) {
      const double before = Sum(s0, s);
      s0 = std::exp(GoldenMax([&](double x) { return LogLikelihood(misses, std::exp(x), s); },
                              std::log(floors.s0), log_hi));
      for (int k = 0; k < kN; ++k) {
        if (!out.identified[k]) continue;
        s[k] = std::exp(GoldenMax(
            [&](double x) {
              Scales t = s;
              t[k] = std::exp(x);
              return LogLikelihood(misses, s0, t);
            },
            std::log(per_unit_floor()), log_hi));
      }
      if (std::fabs(Sum(s0, s) - before) < 1e-7) break;
    }
  }
  double largest = per_unit_floor();
  for (int k = 0; k < kN; ++k)
    if (out.identified[k]) largest = std::max(largest, s[k]);
  for (int k = 0; k < kN; ++k)
    if (!out.identified[k]) s[k] = largest;
  out.log_likelihood = LogLikelihood(misses, s0, s);
  out.scales.s0 = s0;
  out.scales.SetPerUnit(s);
  return out;
}

cost::ModelFormScales FitWithout(const std::vector<Miss>& misses, const std::string& group) {
  std::vector<Miss> others;
  for (const Miss& m : misses)
    if (m.group != group) others.push_back(m);
  return FitModelForm(others).scales;
}

}  // namespace ppsearch::uncertainty
