// ppsearch plan SPEC [--json] [--set k=v ...] [--layout PP/TP/EP ...]: check
// every layout of a spec against the model and the cluster, and print its
// rank map, TP groups, stage split, node-crossing transfers and memory.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "cli/command.h"
#include "cli/spec_options.h"
#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "plan/spec_hardware.h"

namespace ppsearch::cli {
namespace {

struct PlanOptions {
  SpecOptions spec;
  bool json = false;
  std::vector<std::string> layouts;  // as typed: "8/4/4" or "PP8/TP4/EP4"
};

// One part of "PP8/TP4/EP4" or "8/4/4": an optional prefix ("PP", any case) and a number.
std::optional<int> ParseLayoutPart(std::string_view part, std::string_view prefix) {
  if (part.size() >= prefix.size() &&
      std::equal(prefix.begin(), prefix.end(), part.begin(),
                 [](char a, char b) { return a == std::toupper(static_cast<unsigned char>(b)); })) {
    part.remove_prefix(prefix.size());
  }
  int value = 0;
  auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (ec != std::errc() || end != part.data() + part.size() || part.empty()) return std::nullopt;
  return value;
}

// "PP8/TP4/EP4", "pp8/tp4/ep4" or "8/4/4" -> {8, 4, 4}.
Result<spec::LayoutSpec> ParseLayoutArg(const std::string& text) {
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  for (size_t slash; (slash = rest.find('/')) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, slash));
    rest.remove_prefix(slash + 1);
  }
  parts.push_back(rest);
  std::optional<int> pp, tp, ep;
  if (parts.size() == 3) {
    pp = ParseLayoutPart(parts[0], "PP");
    tp = ParseLayoutPart(parts[1], "TP");
    ep = ParseLayoutPart(parts[2], "EP");
  }
  if (!pp || !tp || !ep) {
    return MakeError("--layout " + text +
                     ": expected PP/TP/EP, e.g. --layout 8/4/4 or --layout PP8/TP4/EP4");
  }
  spec::LayoutSpec layout;
  layout.pp = *pp;
  layout.tp = *tp;
  layout.ep = *ep;
  layout.origin.file = "--layout " + text;
  return layout;
}

// The spec's own entry when --layout names one of its layouts (so messages
// point into the file), else an ad-hoc layout that points at the argument.
Result<std::vector<spec::LayoutSpec>> SelectLayouts(const spec::Spec& spec,
                                                    const std::vector<std::string>& wanted) {
  std::vector<spec::LayoutSpec> out;
  for (const std::string& text : wanted) {
    PPS_ASSIGN_OR_RETURN(spec::LayoutSpec layout, ParseLayoutArg(text));
    for (const spec::LayoutSpec& candidate : spec.sweep.layouts) {
      if (candidate == layout) layout = candidate;
    }
    out.push_back(layout);
  }
  return out;
}

Result<ExitCode> RunPlan(const PlanOptions& opts) {
  PPS_ASSIGN_OR_RETURN(spec::Spec spec, LoadSpec(opts.spec));
  if (!opts.layouts.empty()) {
    PPS_ASSIGN_OR_RETURN(spec.sweep.layouts, SelectLayouts(spec, opts.layouts));
  }
  PPS_ASSIGN_OR_RETURN(const model::ModelDesc model, model::LoadModel(spec.engine.model_config));
  PPS_ASSIGN_OR_RETURN(const hardware::HardwareProfile hw, plan::LoadSpecHardware(spec));

  const plan::Plan result = plan::PlanSearch(spec, model, hw);
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
