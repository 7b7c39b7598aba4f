// ppsearch compare A B [--json]: two runs (run directories, summary.csv
// files or CSVs of medians) side by side: every matched point's metrics with
// their differences and noise, the prediction check when one side is
// simulated, and every confounding difference in the two sides' metadata
// with a verdict. Exit 0 when compared (comparable or not: the verdict says),
// 2 when a side cannot be read or no point matches.

#include <iostream>
#include <memory>

#include "cli/command.h"
#include "compare/comparison.h"
#include "report/compare_render.h"
#include "util/json_text.h"

namespace ppsearch::cli {
namespace {

struct CompareOptions {
  std::string a;
  std::string b;
  bool json = false;
};

Result<ExitCode> RunCompare(const CompareOptions& o) {
  Result<compare::Side> a = compare::LoadSide(o.a);
  if (!a.ok()) return MakeError("A: " + a.error().message, a.error().kind);
  Result<compare::Side> b = compare::LoadSide(o.b);
  if (!b.ok()) return MakeError("B: " + b.error().message, b.error().kind);
  Result<compare::Comparison> c = compare::Compare(std::move(a).value(), std::move(b).value());
  if (!c.ok()) return c.error();
  if (o.json)
    std::cout << JsonText(report::ComparisonJson(*c), 2) << "\n";
  else
    std::cout << report::RenderComparisonText(*c);
  return kExitOk;
}

}  // namespace

Runner AddCompareCommand(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare",
      "Compare two runs (run directories, summary.csv files or CSVs of medians): metric "
      "differences per layout and concurrency, prediction errors, confounders and a verdict");
  auto o = std::make_shared<CompareOptions>();
  sub->add_option("A", o->a, "The first side: a run directory, summary.csv or CSV of medians")
      ->required();
  sub->add_option("B", o->b, "The second side, the same kinds")->required();
  sub->add_flag("--json", o->json, "Print the comparison as JSON");
  return [o] { return RunCompare(*o); };
}

}  // namespace ppsearch::cli
