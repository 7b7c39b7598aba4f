#include "backtest/coverage.h"

#include <cmath>

namespace ppsearch::backtest {

namespace {

void AddMisses(const CaseResult& c, const std::vector<FigureResult>& figures,
               std::vector<uncertainty::Miss>& out) {
  for (const FigureResult& f : figures) {
    // A reference figure of calibrated configurations alone repeats a residual.
    if (f.has_interval && !f.held_out) continue;
    // The discrepancy is the throughput and latency model's; memory figures
    // check another model.
    if (f.memory) continue;
    // Nor is a deployment's: its discrepancy has its own form
    // (predict::ModelFormIntervals), and it is predicted uncalibrated.
    if (f.deployment) continue;
    if (!(f.reference > 0) || !(f.predicted > 0)) continue;
    if (!f.known_miss.empty()) continue;
    uncertainty::Miss m;
    m.log_error = std::log(f.reference / f.predicted);
    m.d = f.has_interval ? f.extrapolation : uncertainty::Extrapolation{};
    // With no calibration behind it, a figure is that far whatever its interval.
    m.d.uncalibrated = f.extrapolation.uncalibrated;
    m.group = c.path;
    out.push_back(m);
  }
}

// Widens each interval-carrying figure with `scales` and counts the held-out ones.
void Judge(std::vector<FigureResult>& figures, const cost::ModelFormScales& scales,
           CoverageCount& count, double& width_sum) {
  for (FigureResult& f : figures) {
    if (!f.has_interval) continue;
    const uncertainty::SplitInterval s = uncertainty::Widen(
        f.predicted, f.parameter, uncertainty::ModelFormSigma(scales, f.extrapolation));
    f.model_form_rel = s.model_form_rel;
    f.interval = s.total;
    f.inside = f.reference >= f.interval.low && f.reference <= f.interval.high;
    if (!f.held_out || !(f.predicted > 0)) continue;
    if (!f.known_miss.empty()) {
      ++count.stated;
      continue;
    }
    ++count.figures;
    count.inside += f.inside ? 1 : 0;
    width_sum += (f.interval.high - f.interval.low) / f.predicted;
  }
}

void Finish(CoverageCount& count, double width_sum) {
  if (count.figures == 0) return;
  count.coverage = static_cast<double>(count.inside) / count.figures;
  count.mean_interval_width = width_sum / count.figures;
}

}  // namespace

std::vector<uncertainty::Miss> MissesOf(const CaseResult& c) {
  std::vector<uncertainty::Miss> out;
  AddMisses(c, c.figures, out);
  AddMisses(c, c.uncalibrated, out);
  return out;
}

uncertainty::ModelFormFit FitAll(const std::vector<CaseResult>& cases) {
  std::vector<uncertainty::Miss> misses;
  for (const CaseResult& c : cases)
    for (const uncertainty::Miss& m : MissesOf(c)) misses.push_back(m);
  return uncertainty::FitModelForm(misses);
}

Coverage LeaveOneCaseOut(std::vector<CaseResult>& cases) {
  Coverage out;
  double width_sum = 0, uncalibrated_width_sum = 0;
  std::vector<uncertainty::Miss> all;
  for (const CaseResult& c : cases)
    for (const uncertainty::Miss& m : MissesOf(c)) all.push_back(m);
  out.all = uncertainty::FitModelForm(all);
  for (size_t i = 0; i < cases.size(); ++i) {
    const cost::ModelFormScales scales = uncertainty::FitWithout(all, cases[i].path);
    out.left_out.push_back({cases[i].name, scales});
    Judge(cases[i].figures, scales, out, width_sum);
    Judge(cases[i].uncalibrated, scales, out.uncalibrated, uncalibrated_width_sum);
  }
  Finish(out, width_sum);
  Finish(out.uncalibrated, uncalibrated_width_sum);
  return out;
}

}  // namespace ppsearch::backtest
