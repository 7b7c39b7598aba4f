#include "cli/search_inputs.h"

#include <cstdio>

#include "model/hf_config.h"
#include "plan/spec_hardware.h"

namespace ppsearch::cli {

void AddPointSelection(CLI::App* sub, PointSelection& selection) {
  sub->add_option("--layout", selection.layouts,
                  "Only these layouts (repeatable), as PP/TP/EP, e.g. 8/4/4 or PP8/TP4/EP4");
  sub->add_option("--concurrency", selection.concurrency,
                  "Only these concurrency levels (repeatable)");
}

Result<spec::LayoutSpec> ParseLayoutArg(const std::string& text) {
  spec::LayoutSpec layout;
  char p[3] = {}, t[3] = {}, e[3] = {};
  char rest = 0;
  const bool labelled = std::sscanf(text.c_str(), "%2[pP]%d/%2[tT]%d/%2[eE]%d%c", p, &layout.pp, t,
                                    &layout.tp, e, &layout.ep, &rest) == 6;
  const bool bare =
      std::sscanf(text.c_str(), "%d/%d/%d%c", &layout.pp, &layout.tp, &layout.ep, &rest) == 3;
  if (!labelled && !bare) {
    return MakeError("--layout " + text +
                     ": expected PP/TP/EP, e.g. --layout 8/4/4 or --layout "
                     "PP8/TP4/EP4");
  }
  layout.origin.file = "--layout " + text;
  return layout;
}

namespace {

// The spec's own entry when --layout names one of its layouts (so messages
// point into the file), else an ad-hoc layout that points at the argument.
Status ApplySelection(const PointSelection& selection, spec::Spec& spec) {
  if (!selection.layouts.empty()) {
    std::vector<spec::LayoutSpec> out;
    for (const std::string& text : selection.layouts) {
      PPS_ASSIGN_OR_RETURN(spec::LayoutSpec layout, ParseLayoutArg(text));
      for (const spec::LayoutSpec& candidate : spec.sweep.layouts)
        if (candidate == layout) layout = candidate;
      out.push_back(layout);
    }
    spec.sweep.layouts = std::move(out);
  }
  if (!selection.concurrency.empty()) {
    for (int c : selection.concurrency)
      if (c <= 0)
        return MakeError("--concurrency " + std::to_string(c) + ": expected a positive integer");
    spec.sweep.concurrency = selection.concurrency;
  }
  return Status::Ok();
}

}  // namespace

Result<SearchInputs> LoadSearchInputs(const SpecOptions& spec_options,
                                      const PointSelection& selection) {
  PPS_ASSIGN_OR_RETURN(spec::Spec spec, LoadSpec(spec_options));
  PPS_RETURN_IF_ERROR(ApplySelection(selection, spec));
  PPS_ASSIGN_OR_RETURN(model::ModelDesc model, model::LoadModel(spec.engine.model_config));
  PPS_ASSIGN_OR_RETURN(hardware::HardwareProfile hw, plan::LoadSpecHardware(spec));
  SearchInputs in{std::move(spec), std::move(model), std::move(hw), {}};
  in.plan = plan::PlanSearch(in.spec, in.model, in.hardware);
  return in;
}

}  // namespace ppsearch::cli
