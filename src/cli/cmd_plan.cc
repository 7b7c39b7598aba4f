// ppsearch plan SPEC [--json] [--set k=v ...] [--layout PP/TP/EP ...]: check
// every layout of a spec against the model and the cluster, and print its
// rank map, TP groups, stage split, node-crossing transfers and memory.

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/command_inputs.h"
#include "inputs/search_inputs.h"
#include "plan/disaggregation.h"
#include "plan/plan.h"

namespace ppsearch::cli {
namespace {

struct PlanOptions {
  SpecOptions spec;
  bool json = false;
  std::vector<std::string> layouts;  // as typed: "8/4/4" or "PP8/TP4/EP4"
};

Result<ExitCode> RunPlan(const PlanOptions& opts) {
  PPS_ASSIGN_OR_RETURN(std::optional<inputs::DisaggregatedInputs> disaggregated,
                       inputs::LoadDisaggregatedInputs(opts.spec.spec_path, opts.spec.overrides));
  if (disaggregated) {
    if (!opts.layouts.empty())
      return MakeError(
          "--layout picks among [sweep]'s layouts; this spec's are its "
          "[sweep.prefill] and [sweep.decode] pools");
    if (opts.json) {
      std::cout << plan::DisaggregatedToJson(disaggregated->plan).dump(2) << "\n";
    } else {
      std::cout << plan::RenderDisaggregatedText(disaggregated->plan);
    }
    return disaggregated->plan.valid() ? kExitOk : kExitConfigError;
  }
  PPS_ASSIGN_OR_RETURN(const SearchInputs in, LoadSearchInputs(opts.spec, {opts.layouts, {}}));
  const plan::Plan& result = in.plan;
  if (opts.json) {
    std::cout << plan::PlanToJson(result).dump(2) << "\n";
  } else {
    std::cout << plan::RenderPlanText(result);
  }
  // Invalid layouts are a config error even though the plan was printed:
  // scripts gate a sweep on this exit code.
  return result.all_valid() ? kExitOk : kExitConfigError;
}

}  // namespace

Runner AddPlanCommand(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "plan",
      "Check each layout against the model and cluster; print rank maps, TP groups, pipeline "
      "stages, node-crossing transfers and per-rank memory");
  auto opts = std::make_shared<PlanOptions>();
  AddSpecOptions(sub, opts->spec);
  sub->add_flag("--json", opts->json, "Print the plan as JSON");
  sub->add_option("--layout", opts->layouts,
                  "Plan only this layout (PP/TP/EP, e.g. 8/4/4 or PP8/TP4/EP4); repeatable, and "
                  "may name a layout the sweep does not hold")
      ->type_name("PP/TP/EP")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return [opts] { return RunPlan(*opts); };
}

}  // namespace ppsearch::cli
