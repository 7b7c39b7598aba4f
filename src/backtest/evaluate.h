#pragma once
// Checking predictions against a case's reference figures: each figure's
// error and whether it is within the case's tolerance, and the sign of every
// pairwise comparison the references imply. Pure: predictions in, verdicts out.

#include <cstdint>
#include <string>
#include <vector>

#include "backtest/case_file.h"
#include "calibrate/fit.h"
#include "uncertainty/model_error.h"

namespace ppsearch::backtest {

// What the model predicts for one configuration at its concurrency.
struct ConfigurationPrediction {
  std::string name;
  double input_tps = 0;
  double ttft_p50_s = 0;
  double tpot_ms = 0;  // TPOT p50; 0 for a prefill-only workload
  // A deployment (Configuration::deployment): each pool's tokens over its
  // busy time, per node of the pool (PerNodeWhileBusy).
  bool deployment = false;
  double prefill_tps_per_node = 0, decode_tps_per_node = 0;
  // Why the model cannot predict this deployment (the planner's errors, or a
  // pool the simulator does not model); its figures are then predicted as 0,
  // outside any tolerance, and pass only with the case's stated miss.
  std::string not_predicted;
  // The same under each member of the calibration's parameter ensemble.
  std::vector<double> member_input_tps, member_ttft_p50_s, member_tpot_ms;
  uncertainty::Site site;                       // where it sits, for extrapolation distances
  uncertainty::Extrapolation from_calibration;  // its distance from its family's fit
};

struct FigureResult {
  std::string label;  // "input TPS pp4-tp8 / pp1-tp8", "fit pp1-tp8 input TPS (c=1)"
  std::string what;   // the source's words, when the case gives them
  std::string unit;   // "x", "s", "tok/s", "GiB", "tokens"
  double reference = 0, predicted = 0;
  double error = 0;      // predicted / reference - 1
  double tolerance = 0;  // |error| this figure may reach
  bool within = false;
  // The case's cited reason this figure misses (a reference's `miss`, a
  // memory reference's weight_miss or kv_tokens_miss).
  // A stated miss is accepted; a stated miss that is within tolerance is
  // not (the reason is stale: remove it).
  std::string known_miss;
  bool accepted() const { return within != !known_miss.empty(); }
  // A figure of the memory model (weights per GPU, KV pool tokens): its
  // misses say nothing of the throughput and latency model's form, so the
  // model-form fit leaves it out (backtest/coverage.h).
  bool memory = false;
  // A figure of a disaggregated deployment, predicted with the priors: the
  // model-form fit of the aggregated predictions leaves it out too
  // (predict::ModelFormIntervals gives a deployment its own discrepancy).
  bool deployment = false;
  // Reference figures only (fit residuals carry no interval: they are what
  // the fit saw). held_out: a configuration in it was not calibrated on, so
  // it counts toward the coverage.
  bool has_interval = false;
  bool held_out = false;
  uncertainty::Interval parameter;  // the parameter ensemble's 10th-90th percentile
  uncertainty::Extrapolation extrapolation;
  // Filled by the coverage (backtest/coverage.h): the model-form half-width
  // and the whole interval, with scales fitted without this figure's case.
  double model_form_rel = 0;
  uncertainty::Interval interval;
  bool inside = false;
};

// "better beats worse" in `metric`, as the references imply and as predicted.
struct SignResult {
  std::string better, worse;  // by the references
  std::string metric;         // "input TPS" (higher is better) or "TTFT p50" (lower is better)
  std::string implied_by;     // which references imply it
  bool right = false;         // the prediction orders them the same way
};

// A pool's figure (kPrefillTpsPerNode, kDecodeTpsPerNode): `tokens` over
// the pool's busy time (the window times `busy_share`, the mean over its
// servers) per node of the pool. What the pool sustains while it works:
// its throughput when the load keeps it busy throughout, as a measurement
// of one pool at saturation does. 0 when it was never busy.
double PerNodeWhileBusy(double tokens, double busy_share, int64_t window_ns, int pool_gpus,
                        int gpus_per_node);

FigureResult MakeFigure(std::string label, std::string unit, double reference, double predicted,
                        double tolerance);

// One figure per reference with a value (beats are signs only, refusals the planner's).
std::vector<FigureResult> ReferenceFigures(const Case& c,
                                           const std::vector<ConfigurationPrediction>& predictions);

// Fit residuals of the calibration configurations as figures: measured input
// TPS (and TTFT p50 where measured) against the fitted model.
std::vector<FigureResult> ResidualFigures(const std::vector<calibrate::PointResidual>& residuals,
                                          const std::vector<std::string>& names, double tolerance);

// Every pairwise comparison the references imply: input TPS between any two
// configurations joined by a chain of ratios (the chain's product orders
// them), each `beats`, and TTFT p50 between any two configurations with a
// TTFT reference without a stated miss. Ties (equal implied values) imply
// nothing.
std::vector<SignResult> ImpliedSigns(const Case& c,
                                     const std::vector<ConfigurationPrediction>& predictions);

}  // namespace ppsearch::backtest
