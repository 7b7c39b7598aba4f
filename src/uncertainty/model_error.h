#pragma once
// The model-form (discrepancy) term of every interval, after Kennedy and
// O'Hagan's calibration with a model-discrepancy term: the model's structure
// is not exact, so a prediction misses its measurement by a factor
// exp(delta) even with the right parameters, delta ~ N(0, sigma^2) in log
// space, with
//   sigma^2 = s0^2 + sum_k (s_k * d_k)^2
// and d_k how far the prediction extrapolates from what was calibrated:
// pipeline depth |ln(pp / pp_cal)|, nodes a TP group spans
// |ln(nodes / nodes_cal)|, input length |ln(tokens / tokens_cal)|, a GPU
// profile other than the calibrated one (0 or 1), concurrency
// |ln(c / c_cal)| between two decode sites (the batch a decode step runs;
// for one-token requests concurrency only sets the queue, which the
// scheduler simulation plays out), and output length |ln(out / out_cal)|
// (from prefill to decode), and whether the prediction has a calibration
// behind it at all (0 or 1: the parameters' priors alone are the farthest
// extrapolation, from nothing measured). s0 is the miss at a
// calibrated point (a fit does not reproduce its own data exactly). The
// scales are fitted to how the model actually misses (FitModelForm) and
// shipped in data/model_error.json (model_error_file.h); docs/model.md
// says why this form.
//
// An interval combines the parameters' 10th-90th percentile band with the
// discrepancy's by adding variances in log space on each side, so it is
// deterministic and needs no draws: a side's half-width is
// sqrt(parameter_side^2 + (z90 * sigma)^2).

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "spec/spec.h"
#include "uncertainty/propagate.h"

namespace ppsearch::uncertainty {

// The standard normal's 90th percentile: a 10-90% band is +-z90 sigma.
inline constexpr double kZ90 = 1.2815515655446004;

// Where a prediction (or a calibration) sits, for the distances.
struct Site {
  spec::LayoutSpec layout;
  int gpus_per_node = 0;      // 0: unknown (no node-span distance)
  std::string hardware;       // profile name ("": unknown, no hardware distance)
  int64_t input_tokens = 0;   // 0: unknown (no length distance)
  int concurrency = 0;        // 0: unknown (no concurrency distance)
  int64_t output_tokens = 0;  // 0: unknown (no output-length distance)
};

// The extrapolation distances d_k between two sites.
struct Extrapolation {
  double pp_depth = 0, node_span = 0, input_length = 0, hardware = 0;
  double concurrency = 0, output_length = 0;
  double uncalibrated = 0;  // 1: predicted with no calibration (the priors)
  // In cost::kModelFormDistanceNames' order.
  std::array<double, cost::kModelFormDistances> Values() const {
    return {pp_depth, node_span, input_length, hardware, concurrency, output_length, uncalibrated};
  }
  bool Zero() const {
    for (double v : Values())
      if (v != 0) return false;
    return true;
  }
};

// Nodes a TP group of `layout` spans on nodes of `gpus_per_node` GPUs.
int NodesSpanned(const spec::LayoutSpec& layout, int gpus_per_node);

Extrapolation Distance(const Site& a, const Site& b);

// sigma of log(measured / predicted) at distances `d`.
double ModelFormSigma(const cost::ModelFormScales& s, const Extrapolation& d);

// A point predicted with `calibration`: its distance from the nearest of
// the calibration's fitted sites (each fitted layout at each fitted
// concurrency; the one giving the smallest sigma).
// A calibration that names no fitted layout (the defaults: nothing was
// measured) is the uncalibrated distance alone: the other distances measure
// how far a point is from what was fitted, and nothing was.
Extrapolation FromCalibration(const Site& point, const cost::Calibration& calibration,
                              const cost::ModelFormScales& scales);

// Reads a layout label as LayoutSpec::Label() writes it ("PP1/TP8/EP1").
bool ParseLayoutLabel(const std::string& label, spec::LayoutSpec* out);

// One interval in its two parts.
struct SplitInterval {
  Interval total;             // what every table and JSON shows as the interval
  Interval parameter;         // the parameter ensemble's 10th-90th percentile
  double model_form_rel = 0;  // z90 * sigma: the discrepancy's half-width in log space
};

// `central` with its parameter band widened by the discrepancy `sigma`.
SplitInterval Widen(double central, const Interval& parameter, double sigma);

// The share of an interval's log-space width that is model form:
// m^2 / (m^2 + p^2), p the parameter band's mean half-width in log space.
double ModelFormShare(const SplitInterval& s, double central);

// Widens `u`'s throughput, TTFT and decode intervals by the discrepancy `sigma`
// around its central values, keeping the parameter bands in u.parameter,
// and its compared intervals by `compared_sigma` (Compared below).
void ApplyModelForm(PointUncertainty& u, double sigma, double compared_sigma);

// The distances that tell apart points predicted with one calibration for
// one hardware profile and workload: PP depth, node span, concurrency. The
// others (no calibration, another profile, the input and output lengths)
// are the same for every such point, as a ratio of two of them (a
// backtest's `a / b`) has them cancel.
Extrapolation Compared(Extrapolation d);

// One held-out miss: log(measured / predicted) at its distances.
struct Miss {
  double log_error = 0;
  Extrapolation d;
  std::string group;  // the case it came from (for leave-one-case-out)
};

// Floors no fitted scale goes under (docs/model.md, "Model form").
struct ModelFormFloors {
  // Repeats of one point agree within about 2% (calibrate::Noise): no model
  // reproduces a measurement closer than that.
  double s0 = 0.02;
  // Per unit of extrapolation distance, at least this and at least s0 (one
  // e-fold away from what was calibrated is no better known than a
  // calibrated point).
  double per_unit = 0.02;
};

struct ModelFormFit {
  cost::ModelFormScales scales;
  // Which scales the misses identify (a distance that is never non-zero in
  // them leaves its scale unidentified: it takes the largest identified
  // per-unit scale, never less than the floor).
  bool identified[cost::kModelFormDistances] = {};
  int misses = 0;
  double log_likelihood = 0;
};

// Maximum likelihood of the misses under N(0, sigma_i^2), over log scales,
// each at or above its floor; coordinate-wise golden-section search
// (deterministic). Few misses: the form has seven scales, and those whose
// distances never vary are not fitted (above).
ModelFormFit FitModelForm(const std::vector<Miss>& misses, const ModelFormFloors& floors = {});

// The scales fitted to the misses of every group but `group`: what a
// group's intervals use when its own misses must not inform them.
cost::ModelFormScales FitWithout(const std::vector<Miss>& misses, const std::string& group);

}  // namespace ppsearch::uncertainty
