#include "cli/search_inputs.h"

#include <iostream>

#include "cli/command.h"
#include "spec/layout_text.h"

namespace ppsearch::cli {

void AddPointSelection(CLI::App* sub, PointSelection& selection) {
  sub->add_option("--layout", selection.layouts,
                  "Only these layouts (repeatable), as PP/TP/EP, e.g. 8/4/4 or PP8/TP4/EP4");
  sub->add_option("--concurrency", selection.concurrency,
                  "Only these concurrency levels (repeatable)");
}

std::optional<SearchInputs> LoadSearchInputs(const SpecOptions& spec_options,
                                             const PointSelection& selection, int& exit_code) {
  auto fail = [&exit_code](const Error& error) -> std::optional<SearchInputs> {
    std::cerr << "error: " << error.message << "\n";
    exit_code = kExitConfigError;
    return std::nullopt;
  };
  plan::InputsOptions options{
      spec_options.spec_path, spec_options.overrides, {}, selection.concurrency};
  for (const std::string& text : selection.layouts) {
    Result<spec::LayoutSpec> layout = spec::ParseLayoutText(text);
    if (!layout.ok()) return fail(layout.error());
    options.layouts.push_back(*layout);
  }
  Result<SearchInputs> loaded = plan::LoadSearchInputs(options);
  if (!loaded.ok()) return fail(loaded.error());
  return std::move(loaded).value();
}

}  // namespace ppsearch::cli
