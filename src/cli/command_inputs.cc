#include "cli/command_inputs.h"

#include "analysis/baseline.h"
#include "inputs/search_inputs.h"
#include "spec/layout_text.h"

namespace ppsearch::cli {

void AddPointSelection(CLI::App* sub, PointSelection& selection) {
  // Comma lists as `search` takes them: a user copies `--concurrency 4,8`
  // from a search's command line into simulate's.
  sub->add_option("--layout", selection.layouts,
                  "Only these layouts (repeatable or comma-separated), as PP/TP/EP, e.g. 8/4/4 "
                  "or PP8/TP4/EP4,PP4/TP8/EP4")
      ->delimiter(',');
  sub->add_option("--concurrency", selection.concurrency,
                  "Only these concurrency levels (repeatable or comma-separated), e.g. 4,8")
      ->delimiter(',');
}

Result<SearchInputs> LoadSearchInputs(const SpecOptions& spec_options,
                                      const PointSelection& selection) {
  inputs::InputsOptions options{
      spec_options.spec_path, spec_options.overrides, {}, selection.concurrency};
  for (const std::string& text : selection.layouts) {
    PPS_ASSIGN_OR_RETURN(spec::LayoutSpec layout, spec::ParseLayoutText(text));
    options.layouts.push_back(layout);
  }
  return inputs::LoadSearchInputs(options);
}

Result<std::vector<analysis::PointSummary>> ReadImportedCsv(const spec::Spec& spec) {
  if (spec.baseline.import_csv.empty()) return std::vector<analysis::PointSummary>{};
  Result<std::vector<analysis::PointSummary>> rows =
      analysis::ReadBaselineCsv(spec.baseline.import_csv);
  if (!rows.ok())
    return MakeError(spec.Origin("baseline.import_csv").Where() + ": " + rows.error().message);
  return rows;
}

}  // namespace ppsearch::cli
