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

void RunCompare(const CompareOptions& o, int& exit_code) {
  Result<compare::Side> a = compare::LoadSide(o.a);
  if (!a.ok()) return ReportError(MakeError("A: " + a.error().message, a.error().kind), exit_code);
  Result<compare::Side> b = compare::LoadSide(o.b);
  if (!b.ok()) return ReportError(MakeError("B: " + b.error().message, b.error().kind), exit_code);
  Result<compare::Comparison> c = compare::Compare(std::move(a).value(), std::move(b).value());
  if (!c.ok()) return ReportError(c.error(), exit_code);
  if (o.json)
    std::cout << JsonText(report::ComparisonJson(*c), 2) << "\n";
  else
    std::cout << report::RenderComparisonText(*c);
  exit_code = kExitOk;
}

}  // namespace

void AddCompareCommand(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "compare",
      "Compare two runs (run directories, summary.csv files or CSVs of medians): metric "
      "differences per layout and concurrency, prediction errors, confounders and a verdict");
  auto o = std::make_shared<CompareOptions>();
  sub->add_option("A", o->a, "The first side: a run directory, summary.csv or CSV of medians")
      ->required();
  sub->add_option("B", o->b, "The second side, the same kinds")->required();
  sub->add_flag("--json", o->json, "Print the comparison as JSON");
  sub->callback([o, &exit_code] { RunCompare(*o, exit_code); });
}

}  // namespace ppsearch::cli
