#include "adaptive/preconditions.h"

#include <fmt/format.h>

#include "inputs/search_inputs.h"
#include "predict/predict.h"

namespace ppsearch::adaptive {

std::vector<std::string> AdaptiveRunProblems(const inputs::SearchInputs& in,
                                             const std::string& otherwise) {
  const spec::Spec& spec = in.spec;
  if (!spec.decision.objective.adaptive())
    return {spec.Origin("decision.objective").Where() + ": an adaptive run chooses by the " +
            decide::Objective::AdaptiveChoices() + " objective, not " +
            spec.decision.objective.name() + " (" + otherwise + ")"};
  // A sample budget under one step's repeats would stop before the first step.
  const int budget = spec.adaptive.budget_samples;
  if (budget > 0 && budget < spec.sweep.repeats)
    return {fmt::format(
        "{}: a budget of {} sample{} is less than one step of an adaptive run (a point's {} "
        "repeats, sweep.repeats), so it could measure nothing; give at least {}, or 0 for no "
        "sample budget",
        spec.Origin("adaptive.budget_samples").Where(), budget, budget == 1 ? "" : "s",
        spec.sweep.repeats, spec.sweep.repeats)};
  std::vector<std::string> out;
  for (const plan::LayoutPlan& lp : in.plan.layouts)
    if (auto why = predict::NotModelled(lp)) out.push_back(*why);
  if (!out.empty())
    out.push_back(
        "an adaptive run predicts the layouts it has not measured and cannot predict these; "
        "remove them from [sweep]");
  return out;
}

}  // namespace ppsearch::adaptive
