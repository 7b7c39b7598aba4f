#include "adaptive/observe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "adaptive/preconditions.h"
#include "analysis/decision.h"
#include "analysis/repeat_spread.h"
#include "analysis/run.h"
#include "calibrate/fit.h"
#include "decide/objective.h"
#include "decide/rules.h"
#include "decide/sla.h"
#include "evidence/point_columns.h"
#include "inputs/search_inputs.h"
#include "predict/search_points.h"
#include "uncertainty/model_error.h"
#include "uncertainty/model_error_file.h"
#include "uncertainty/sensitivity.h"

namespace ppsearch::adaptive {
namespace {

using Key = std::pair<std::string, int>;  // layout id, concurrency

// The log standard deviation of a median of `repeats` samples whose range
// is `spread` of the median: a range of n normal draws is about 1.7 sigma
// for n = 3, and a median's sigma is about 1.25 sigma / sqrt(n). Never
// below 0.5%: repeats that agree exactly still leave the server's own
// variation between days.
double MedianSigma(double spread, int repeats) {
  const double sample_sigma = spread / 1.7;
  return std::max(0.005, 1.25 * sample_sigma / std::sqrt(std::max(1, repeats)));
}

// The decision's own definition of a point's objective value; 0 where the
// point does not hold it (a figure its replayed file did not have), which
// MeasuredExclusion then names.
double Objective(const spec::Spec& spec, const analysis::PointSummary& p) {
  return evidence::ObjectiveValue(spec.decision.objective, p).value_or(0);
}

double ObjectiveSpread(const spec::Spec& spec, const analysis::PointSummary& p) {
  return spec.decision.objective.Of(evidence::ObjectiveSpreads(p));
}

// Exclusions the measured evidence already settles; the decision applies
// every rule again (analysis/decision.h) to the measured points at the end.
std::string MeasuredExclusion(const spec::Spec& spec, const analysis::PointSummary& p) {
  if (p.valid_repeats < p.repeats)
    return fmt::format("{} of its {} samples at C={} did not pass", p.repeats - p.valid_repeats,
                       p.repeats, p.concurrency);
  const std::optional<double> spread = analysis::JudgedRepeatSpread(spec, p);
  if (spread && *spread > spec.decision.max_repeat_spread)
    return fmt::format("its repeats at C={} spread by {:.1f}%, more than max_repeat_spread",
                       p.concurrency, *spread * 100);
  if (std::string why = analysis::FellBehind(spec, p); !why.empty()) return why;
  if (p.headroom_mib && !decide::MeetsHeadroom(*p.headroom_mib, spec.decision.min_headroom_mib))
    return fmt::format("its worst GPU kept {:.0f} MiB at C={}, under min_headroom_mib",
                       *p.headroom_mib, p.concurrency);
  const decide::SlaCheck sla = decide::CheckSla(spec.decision.sla, analysis::SlaFigures(p));
  if (!sla.misses.empty())
    return fmt::format("at C={}: {}", p.concurrency, decide::MissText(sla.misses.front()));
  if (!sla.unchecked.empty()) {
    const decide::SlaMetric m = sla.unchecked.front();
    return fmt::format("no {} was measured at C={} ({}), so {} cannot be checked",
                       decide::Info(m).label, p.concurrency,
                       analysis::WhyUnknown(p, analysis::SlaMember(m)), decide::Info(m).key);
  }
  const decide::Objective& objective = spec.decision.objective;
  if (!evidence::ObjectiveValue(objective, p))
    return fmt::format("no {} was measured at C={} ({}), so it cannot be ranked by objective {}",
                       objective.label(), p.concurrency,
                       analysis::WhyUnknown(p, evidence::ObjectiveMember(objective)),
                       objective.name());
  return "";
}

// The refit on every measured point of every layout that has one.
struct Refit {
  cost::Calibration calibration;
  std::vector<std::string> layouts;
  // sqrt of the mean squared log miss of each layout predicted by a fit to
  // the others: how far this cluster's layouts stray from the model; 0 when
  // fewer than two layouts were measured.
  double held_out_sigma = 0;
  std::string note;
};

Refit RefitOn(const inputs::SearchInputs& in, const cost::Calibration& start,
              const std::vector<analysis::PointSummary>& measured) {
  Refit out;
  out.calibration = start;
  calibrate::FitInputs fi;
  for (const analysis::PointSummary& p : measured) {
    auto it = std::find_if(fi.measurements.begin(), fi.measurements.end(),
                           [&](const calibrate::Measurement& m) { return m.layout == p.layout; });
    if (it == fi.measurements.end()) {
      fi.measurements.push_back({p.layout, {}, std::nullopt, "this run", std::nullopt, 0});
      const plan::LayoutPlan* lp = in.Find(p.layout);
      fi.plans.push_back(*lp);
      it = fi.measurements.end() - 1;
    }
    calibrate::MeasuredPoint mp;
    mp.concurrency = p.concurrency;
    mp.input_tps = p.median.input_tps;
    // 0 where not held: not measured (a replayed file without TTFTs).
    using F = stats::Figures;
    mp.ttft_p50_s = evidence::ValueOf(*evidence::ColumnOf(&F::ttft_p50_s), p).value_or(0);
    mp.ttft_p95_s = evidence::ValueOf(*evidence::ColumnOf(&F::ttft_p95_s), p).value_or(0);
    mp.peak_gpu_mib = p.peak_gpu_mib.value_or(0);
    it->points.push_back(mp);
  }
  if (fi.measurements.empty()) return out;
  fi.search = &in;
  Result<calibrate::FitResult> fit = calibrate::FitCalibration(fi);
  if (!fit.ok()) {
    out.note = "the refit failed, so the run's own calibration predicts: " + fit.error().message;
    return out;
  }
  out.calibration = fit->calibration;
  out.calibration.model_form = start.model_form;
  for (const auto& m : fi.measurements) out.layouts.push_back(m.layout.Label());
  const decide::Objective& objective = in.spec.decision.objective;
  double sum = 0;
  int n = 0;
  for (const calibrate::PointResidual& r : fit->held_out) {
    // The residuals hold the figures an adaptive objective reads.
    const double m = objective.Of(decide::ObjectiveFigures{r.measured_tps, r.measured_ttft_p50_s});
    const double p =
        objective.Of(decide::ObjectiveFigures{r.predicted_tps, r.predicted_ttft_p50_s});
    if (m <= 0 || p <= 0) continue;
    sum += std::log(m / p) * std::log(m / p);
    ++n;
  }
  if (n > 0) out.held_out_sigma = std::sqrt(sum / n);
  return out;
}

// The problem's settings from the spec, before anything is read.
Problem ProblemOf(const spec::Spec& spec, const ObserveOptions& options) {
  Problem pr;
  pr.load_points = spec.sweep.concurrency;
  pr.lower_is_better = spec.decision.objective.lower_is_better();
  pr.repeats = spec.sweep.repeats;
  pr.reuse_server = spec.lifecycle.reuse_server;
  pr.server_start_s = spec.adaptive.server_start_s;
  pr.stop_probability = spec.decision.stop_probability;
  pr.seed = options.seed;
  return pr;
}

// What ran per point: samples completed or failed, and the completed ones'
// durations.
struct Ran {
  std::map<Key, int> samples;
  std::map<Key, std::vector<double>> durations;
};

// What ran, in run order: the samples and GPU-hours spent (timed server
// starts where the engine timed them; measured starts replace the spec's
// estimate, for what was spent and for what the next steps will cost), and
// the server left running.
Ran ReadSpent(const inputs::SearchInputs& in, const analysis::RunEvidence& ev, Observation& out) {
  Problem& pr = out.problem;
  Ran ran;
  std::map<std::string, int> gpus;
  for (const plan::LayoutPlan& lp : in.plan.layouts)
    gpus[lp.layout.Slug()] = static_cast<int>(lp.layout.gpus());
  std::vector<double> timed_starts;
  std::vector<bool> starts;  // per ran sample, in run order
  std::vector<const analysis::SampleAnalysis*> ran_samples;
  std::string previous;
  for (const analysis::SampleAnalysis& s : ev.samples) {
    if (!s.completed() && s.state != evidence::SampleState::kFailed) continue;
    const std::string layout = s.id.layout.Slug();
    const bool start = !pr.reuse_server || layout != previous;
    if (s.ready_s && start) timed_starts.push_back(*s.ready_s);
    previous = layout;
    ran_samples.push_back(&s);
    if (out.ran.insert(s.id.str()).second) out.ran_in_order.push_back(s.id.str());
    starts.push_back(start);
    ++ran.samples[{layout, s.id.concurrency}];
    if (s.completed()) ran.durations[{layout, s.id.concurrency}].push_back(s.metrics.duration_s);
  }
  out.samples_spent = static_cast<int>(ran_samples.size());
  if (!timed_starts.empty()) {
    double sum = 0;
    for (double t : timed_starts) sum += t;
    pr.server_start_s = sum / timed_starts.size();
  }
  for (size_t i = 0; i < ran_samples.size(); ++i) {
    const analysis::SampleAnalysis& s = *ran_samples[i];
    const double start_s = s.ready_s.value_or(starts[i] ? pr.server_start_s : 0);
    out.gpu_hours_spent += gpus[s.id.layout.Slug()] * (start_s + s.metrics.duration_s) / 3600;
  }
  if (pr.reuse_server) pr.running = previous;
  return ran;
}

// The points whose every repeat ran (a failed repeat excludes the layout),
// and of those the ones measured whole, every repeat valid.
struct Measured {
  std::map<Key, bool> fully_ran;
  std::map<Key, const analysis::PointSummary*> by_key;
  std::vector<analysis::PointSummary> whole;
};

Measured MeasuredPoints(const spec::Spec& spec, const analysis::RunEvidence& ev, const Ran& ran,
                        int repeats) {
  Measured m;
  for (const auto& [k, n] : ran.samples) m.fully_ran[k] = n >= repeats;
  for (const analysis::PointSummary& p : ev.points) {
    const Key k{p.layout.Slug(), p.concurrency};
    if (!m.fully_ran[k]) continue;
    m.by_key[k] = &p;
    if (p.repeats == repeats && p.valid_repeats == p.repeats && Objective(spec, p) > 0)
      m.whole.push_back(p);
  }
  return m;
}

// One layout as the policy sees it: each load point predicted (central
// value, ensemble members, the spread the model form and the held-out
// misses give) and, where measured, what it showed; excluded, with why, by
// predicted headroom (unless measured), a point none of whose samples
// completed, or a measured exclusion.
CandidateState CandidateOf(const plan::LayoutPlan& lp, const inputs::SearchInputs& in,
                           const predict::SearchPrediction& prediction, const Refit& refit,
                           const Ran& ran, Measured& m, int repeats) {
  const spec::Spec& spec = in.spec;
  CandidateState cand;
  bool predicted_short = false;  // excluded by predicted headroom alone
  cand.id = lp.layout.Slug();
  cand.label = lp.layout.Label();
  cand.gpus = static_cast<int>(lp.layout.gpus());
  for (int c : spec.sweep.concurrency) {
    PointState ps;
    for (size_t i = 0; i < prediction.points.size(); ++i) {
      const predict::PointPrediction& p = prediction.points[i].prediction;
      if (!(p.layout == lp.layout) || p.concurrency != c) continue;
      const stats::SampleMetrics& metrics = p.metrics;
      ps.central = spec.decision.objective.Of(decide::ObjectiveFigures{
          metrics.input_tps, metrics.ttft_s.p50, metrics.output_tps, 0, 0});
      ps.sample_s = metrics.duration_s;
      if (const uncertainty::PointUncertainty* u = prediction.IntervalOf(i)) {
        for (const auto& mv : u->members)
          ps.members.push_back(uncertainty::ObjectiveValue(mv, spec.decision.objective));
        // Before anything is measured every layout is unmeasured: the
        // model form's shared terms (no calibration among them) move
        // them alike and the ranking compares them without; a measured
        // layout anchors the rest against the whole discrepancy.
        ps.sigma =
            (m.whole.empty() ? u->compared_model_form_rel : u->model_form_rel) / uncertainty::kZ90;
      }
      // The run's own held-out misses, when larger, are the better
      // estimate of how far this cluster strays from the model.
      ps.sigma = std::max(ps.sigma, refit.held_out_sigma);
      const double headroom = decide::HeadroomMib(in.hardware.memory_mib, p.memory.peak_mib_max);
      if (in.hardware.memory_mib > 0 &&
          !decide::MeetsHeadroom(headroom, spec.decision.min_headroom_mib) && !cand.excluded) {
        cand.excluded = true;
        predicted_short = true;
        cand.why = fmt::format("predicted to keep {:.0f} MiB at C={}, under min_headroom_mib",
                               headroom, c);
      }
    }
    const Key k{cand.id, c};
    if (m.fully_ran[k] && !m.by_key.count(k)) {
      cand.excluded = true;
      predicted_short = false;
      cand.why = fmt::format("no sample of it at C={} completed", c);
    }
    if (auto it = m.by_key.find(k); it != m.by_key.end()) {
      const analysis::PointSummary& p = *it->second;
      std::string why = MeasuredExclusion(spec, p);
      if (why.empty() && p.repeats < repeats)
        why = fmt::format("{} of its {} samples at C={} did not complete", repeats - p.repeats,
                          repeats, c);
      if (!why.empty()) {
        cand.excluded = true;
        predicted_short = false;
        cand.why = std::move(why);
      } else {
        ps.measured = Objective(spec, p);
        ps.measured_sigma = MedianSigma(ObjectiveSpread(spec, p), p.repeats);
        if (auto d = ran.durations.find(k); d != ran.durations.end() && !d->second.empty()) {
          double sum = 0;
          for (double x : d->second) sum += x;
          ps.sample_s = sum / d->second.size();
        }
      }
    }
    cand.points.push_back(std::move(ps));
  }
  // A measured layout is judged on what it showed, not on the prediction.
  if (predicted_short && cand.AnyMeasured()) {
    cand.excluded = false;
    cand.why.clear();
  }
  return cand;
}

}  // namespace

Result<Observation> Observe(const inputs::SearchInputs& in, const cost::Calibration& start,
                            const std::string& run_dir, const ObserveOptions& options) {
  // The same refusal `ppsearch run --adaptive` gives before it starts.
  if (const std::vector<std::string> problems = AdaptiveRunProblems(in); !problems.empty()) {
    std::string text = problems.front();
    for (size_t i = 1; i < problems.size(); ++i) text += "; " + problems[i];
    return MakeError(text);
  }
  PPS_ASSIGN_OR_RETURN(analysis::RunEvidence ev, analysis::LoadRunEvidence(run_dir));
  Observation out;
  out.problem = ProblemOf(in.spec, options);
  const Ran ran = ReadSpent(in, ev, out);
  Measured measured = MeasuredPoints(in.spec, ev, ran, out.problem.repeats);
  if (!options.predict) return out;

  const Refit refit = RefitOn(in, start, measured.whole);
  out.calibration = refit.calibration;
  out.calibrated_on = refit.layouts;
  if (!refit.note.empty()) out.notes.push_back(refit.note);
  PPS_ASSIGN_OR_RETURN(cost::ModelFormScales form, uncertainty::ModelFormFor(out.calibration));
  out.problem.within_sigma = form.s0;
  predict::SearchOptions so;
  so.ensemble.members = options.members;
  so.ensemble.seed = options.seed;
  so.model_form = form;
  const predict::SearchPrediction prediction = predict::PredictSearch(in, out.calibration, so);
  for (const plan::LayoutPlan& lp : in.plan.layouts)
    if (lp.valid)
      out.problem.candidates.push_back(
          CandidateOf(lp, in, prediction, refit, ran, measured, out.problem.repeats));
  return out;
}

}  // namespace ppsearch::adaptive
