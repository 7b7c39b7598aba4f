#include "adaptive/session.h"

#include <fmt/format.h>

#include "cost/parameters.h"
#include "inputs/search_inputs.h"

namespace ppsearch::adaptive {
namespace {

nlohmann::json CalibrationValues(const cost::Calibration& c) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : cost::AllParams()) out[std::string(p.name)] = c.value[cost::Index(p.param)];
  return out;
}

// The samples of `step` that have not run.
std::vector<evidence::SampleId> Pending(const inputs::SearchInputs& in,
                                        const evidence::TrajectoryStep& step,
                                        const std::set<std::string>& ran) {
  std::vector<evidence::SampleId> out;
  for (const plan::LayoutPlan& lp : in.plan.layouts) {
    if (lp.layout.Slug() != step.layout) continue;
    for (int r = 1; r <= in.spec.sweep.repeats; ++r) {
      const evidence::SampleId id{lp.layout, step.concurrency, r};
      if (!ran.count(id.str())) out.push_back(id);
    }
  }
  return out;
}

std::string LabelOf(const Problem& pr, int c) { return c >= 0 ? pr.candidates[c].label : ""; }

// The stop line common to every way of stopping.
evidence::TrajectoryStop StopLine(const Observation& obs, const Assessment& a,
                                  const std::string& reason,
                                  const std::string& budget_detail = "") {
  const Problem& pr = obs.problem;
  evidence::TrajectoryStop s;
  s.reason = reason;
  s.budget_detail = budget_detail;
  s.p_wrong = a.p_wrong;
  s.p_change = a.p_change;
  s.gpu_hours_spent = obs.gpu_hours_spent;
  s.samples_spent = obs.samples_spent;
  s.full_sweep_gpu_hours = FullSweepGpuHours(pr);
  s.full_sweep_samples =
      static_cast<int>(pr.candidates.size() * pr.load_points.size()) * pr.repeats;
  s.primary = LabelOf(pr, a.primary);
  s.fallback = LabelOf(pr, a.fallback);
  for (size_t c = 0; c < pr.candidates.size(); ++c) {
    const CandidateState& cand = pr.candidates[c];
    // One in a hundred is where "could still enter" stops being worth a line.
    if (cand.excluded || cand.FullyMeasured() || a.p_top_two[c] < 0.01) continue;
    const int role = static_cast<int>(c);
    if (role == a.primary || role == a.fallback) {
      // The estimate's own top two are in the top two by definition; what
      // is open about them is where they were not measured.
      int measured = 0;
      for (const PointState& p : cand.points) measured += p.measured ? 1 : 0;
      s.uncertain.push_back(fmt::format("{} (the estimated {}, measured at {} of {} load points)",
                                        cand.label, role == a.primary ? "primary" : "fallback",
                                        measured, pr.load_points.size()));
    } else {
      s.uncertain.push_back(
          fmt::format("{} ({:.1f}% to be in the top two)", cand.label, a.p_top_two[c] * 100));
    }
  }
  if (!obs.calibrated_on.empty()) s.calibration = CalibrationValues(obs.calibration);
  s.calibrated_on = obs.calibrated_on;
  s.message = StopMessage(s);
  return s;
}

// The step the budget refuses, and where it would take the run past which budget.
std::string BudgetDetail(const Observation& obs, const Choice& choice,
                         const spec::AdaptiveSpec& budget) {
  const Problem& pr = obs.problem;
  const std::string step =
      fmt::format("the next step ({} at C={}: {} samples, {:.2f} GPU-hours)",
                  pr.candidates[choice.candidate].label, pr.load_points[choice.point], pr.repeats,
                  choice.cost_gpu_hours);
  if (budget.budget_samples > 0 && obs.samples_spent + pr.repeats > budget.budget_samples)
    return fmt::format("{} would take the run to {} samples, past [adaptive] budget_samples = {}",
                       step, obs.samples_spent + pr.repeats, budget.budget_samples);
  return fmt::format(
      "{} would take the run to {:.2f} GPU-hours, past [adaptive] budget_gpu_hours = {:g}", step,
      obs.gpu_hours_spent + choice.cost_gpu_hours, budget.budget_gpu_hours);
}

// The trajectory a resume finds, against the spec, the manifest and the
// policy: its steps (evidence::CheckTrajectorySteps), and a stop line's
// reason, which the policy must reach again from the same evidence (no
// sample runs after a stop): a line it did not write would end the run.
Status CheckTrajectory(const inputs::SearchInputs& in, const evidence::Trajectory& t,
                       Observation obs) {
  std::vector<spec::LayoutSpec> layouts;
  for (const plan::LayoutPlan& lp : in.plan.layouts)
    if (lp.valid) layouts.push_back(lp.layout);
  PPS_RETURN_IF_ERROR(evidence::CheckTrajectorySteps(t, layouts, obs.problem.load_points,
                                                     obs.problem.repeats, obs.ran_in_order));
  if (!t.stop) return Status::Ok();
  obs.problem.running.clear();
  const Assessment a = Assess(obs.problem);
  const bool next = !a.settled && ChooseNext(obs.problem, a).has_value();
  const spec::AdaptiveSpec& budget = in.spec.adaptive;
  const bool holds = t.stop->reason == "settled"    ? a.settled
                     : t.stop->reason == "complete" ? !a.settled && !next
                     : t.stop->reason == "budget"
                         ? next && (budget.budget_samples > 0 || budget.budget_gpu_hours > 0)
                         : false;
  if (holds) return Status::Ok();
  return MakeError(fmt::format(
      "{}: the stop line says \"{}\", but this run's evidence does not lead the policy there "
      "({}); the line was not written by this run: remove it to resume",
      evidence::kTrajectoryFile, t.stop->reason,
      a.settled ? "the choice is settled"
      : next    ? "it would measure another point"
                : "every point is measured"));
}

}  // namespace

std::string StopMessage(const evidence::TrajectoryStop& s) {
  const std::string spent = fmt::format(
      "{} samples and {:.2f} GPU-hours, against {} samples and {:.2f} GPU-hours for the full "
      "sweep",
      s.samples_spent, s.gpu_hours_spent, s.full_sweep_samples, s.full_sweep_gpu_hours);
  std::string out;
  if (s.reason == "settled")
    out = fmt::format(
        "Stopped: the choice is settled. {} and {} are measured at every load point, and the "
        "chance that a layout not measured would enter the top two is {:.1f}%. Spent {}.",
        s.primary, s.fallback.empty() ? "no fallback" : s.fallback, s.p_change * 100, spent);
  else if (s.reason == "budget")
    out = fmt::format(
        "Stopped on the budget before the choice settled{}. The chance that the current "
        "choice ({} then {}) is wrong is {:.1f}%, and that a layout not measured would enter "
        "the top two {:.1f}%. Spent {}.",
        s.budget_detail.empty() ? "" : ": " + s.budget_detail,
        s.primary.empty() ? "none" : s.primary, s.fallback.empty() ? "none" : s.fallback,
        s.p_wrong * 100, s.p_change * 100, spent);
  else
    out = fmt::format("Stopped: every point of every candidate is measured. Spent {}.", spent);
  if (!s.uncertain.empty()) {
    out += " Still uncertain: ";
    for (size_t i = 0; i < s.uncertain.size(); ++i) out += (i ? ", " : "") + s.uncertain[i];
    out += ".";
  }
  return out;
}

Result<std::vector<evidence::SampleId>> Session::Next(const evidence::RunPaths& paths) {
  const size_t points = inputs_.spec.sweep.layouts.size() * inputs_.spec.sweep.concurrency.size();
  PPS_ASSIGN_OR_RETURN(evidence::Trajectory trajectory, evidence::ReadTrajectory(paths, points));
  PPS_ASSIGN_OR_RETURN(Observation obs, Observe(inputs_, start_, paths.root, options_));
  PPS_RETURN_IF_ERROR(CheckTrajectory(inputs_, trajectory, obs));
  if (trajectory.stop) return std::vector<evidence::SampleId>{};
  // An interrupted step is finished before anything new is chosen: a kill
  // after its line was written, even before its first sample completed,
  // resumes that step rather than recording another.
  if (!trajectory.steps.empty()) {
    std::vector<evidence::SampleId> pending = Pending(inputs_, trajectory.steps.back(), obs.ran);
    if (!pending.empty()) {
      ran_a_step_ = true;
      return pending;
    }
  }
  // No server is up before this process runs one: what the evidence says
  // was running is what a killed process left, and the resume stopped it.
  if (!ran_a_step_) obs.problem.running.clear();
  const Problem& pr = obs.problem;
  const Assessment a = Assess(pr);
  if (a.settled) {
    PPS_RETURN_IF_ERROR(evidence::AppendTrajectoryStop(paths, StopLine(obs, a, "settled")));
    return std::vector<evidence::SampleId>{};
  }
  const std::optional<Choice> choice = ChooseNext(pr, a);
  if (!choice) {
    PPS_RETURN_IF_ERROR(evidence::AppendTrajectoryStop(paths, StopLine(obs, a, "complete")));
    return std::vector<evidence::SampleId>{};
  }
  const spec::AdaptiveSpec& budget = inputs_.spec.adaptive;
  if ((budget.budget_samples > 0 && obs.samples_spent + pr.repeats > budget.budget_samples) ||
      (budget.budget_gpu_hours > 0 &&
       obs.gpu_hours_spent + choice->cost_gpu_hours > budget.budget_gpu_hours)) {
    PPS_RETURN_IF_ERROR(evidence::AppendTrajectoryStop(
        paths, StopLine(obs, a, "budget", BudgetDetail(obs, *choice, budget))));
    return std::vector<evidence::SampleId>{};
  }
  const CandidateState& cand = pr.candidates[choice->candidate];
  const plan::LayoutPlan* lp = nullptr;
  for (const auto& l : inputs_.plan.layouts)
    if (l.layout.Slug() == cand.id) lp = &l;
  evidence::TrajectoryStep step;
  step.step = static_cast<int>(trajectory.steps.size()) + 1;
  step.layout = cand.id;
  step.label = cand.label;
  step.concurrency = pr.load_points[choice->point];
  std::vector<evidence::SampleId> samples;
  for (int r = 1; r <= pr.repeats; ++r) {
    samples.push_back({lp->layout, step.concurrency, r});
    step.samples.push_back(samples.back().str());
  }
  step.reason = choice->reason;
  for (const std::string& note : obs.notes) step.reason += " (" + note + ")";
  if (a.degenerate_draws > 0)
    step.reason += fmt::format(
        " ({} of {} draws of the belief overflow or degenerate: the run measures on rather than "
        "stop on them)",
        a.degenerate_draws, pr.draws);
  step.value_of_information = choice->value_of_information;
  step.p_wrong_before = a.p_wrong;
  step.p_wrong_expected_after = choice->p_wrong_expected_after;
  step.p_change_before = a.p_change;
  step.cost_gpu_hours = choice->cost_gpu_hours;
  step.server_start = choice->server_start;
  step.gpu_hours_spent = obs.gpu_hours_spent;
  step.samples_spent = obs.samples_spent;
  step.full_sweep_gpu_hours = FullSweepGpuHours(pr);
  if (!obs.calibrated_on.empty()) step.calibration = CalibrationValues(obs.calibration);
  step.calibrated_on = obs.calibrated_on;
  for (size_t c = 0; c < pr.candidates.size(); ++c)
    if (!pr.candidates[c].excluded) step.p_best.emplace_back(pr.candidates[c].label, a.p_best[c]);
  PPS_RETURN_IF_ERROR(evidence::AppendTrajectoryStep(paths, step));
  ran_a_step_ = true;
  return samples;
}

}  // namespace ppsearch::adaptive
