// ppsearch nsys PROFILE.sqlite... [--json] [--window nvtx:REGEX|forward]:
// the exposed-communication share of Nsight Systems exports, per GPU and
// window, with collectives by kind; writes nsys_analysis.json, which
// `ppsearch calibrate --profile-summary` reads.

#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "cli/command.h"
#include "nsys/analysis_json.h"
#include "nsys/analyze.h"
#include "spec/layout_text.h"
#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::cli {
namespace {

struct NsysOptions {
  std::vector<std::string> profiles;
  bool json = false;
  std::string window = "forward";
  int64_t gap_us = 1000;
  std::string layout;  // "PP/TP/EP"
  int tp_span_nodes = 0;
  std::string output = "nsys_analysis.json";
};

Result<nsys::ProfileContext> ContextFrom(const NsysOptions& o) {
  nsys::ProfileContext c;
  if (!o.layout.empty()) {
    PPS_ASSIGN_OR_RETURN(const spec::LayoutSpec layout, spec::ParseLayoutText(o.layout));
    if (layout.pp < 1 || layout.tp < 1 || layout.ep < 1)
      return MakeError("--layout " + o.layout + ": expected positive sizes, e.g. 1/32/4");
    c.pp = layout.pp;
    c.tp = layout.tp;
    c.ep = layout.ep;
  }
  if (o.tp_span_nodes > 0) c.tp_span_nodes = o.tp_span_nodes;
  return c;
}

Result<ExitCode> RunNsys(const NsysOptions& opts) {
  std::vector<NamedPath> inputs;
  for (const auto& p : opts.profiles) inputs.push_back({"a profile export", p});
  PPS_RETURN_IF_ERROR(CheckOutputPath("-o", opts.output, inputs));
  PPS_ASSIGN_OR_RETURN(const nsys::ProfileContext context, ContextFrom(opts));
  PPS_ASSIGN_OR_RETURN(const nsys::WindowChoice window,
                       nsys::ParseWindowChoice(opts.window, opts.gap_us));
  PPS_ASSIGN_OR_RETURN(const nsys::ProfileAnalysis analysis,
                       nsys::AnalyzeProfiles(opts.profiles, window));
  // An export's texts (GPU, kernel and NVTX names) are bytes, not always UTF-8.
  const std::string json = JsonText(nsys::AnalysisJson(analysis, context), 2) + "\n";
  PPS_RETURN_IF_ERROR(WriteFileAtomic(opts.output, json));
  if (opts.json) {
    std::cout << json;
    return kExitOk;
  }
  std::cout << nsys::AnalysisTable(analysis);
  std::cout << "analysis written to " << opts.output << "\n";
  return kExitOk;
}

}  // namespace

Runner AddNsysCommand(CLI::App& app) {
  auto opts = std::make_shared<NsysOptions>();
  CLI::App* sub = app.add_subcommand(
      "nsys",
      "Exposed-communication share of Nsight Systems SQLite exports (nsys export --type sqlite)");
  sub->add_option("profiles", opts->profiles, "SQLite exports, one per node of the same run")
      ->required();
  sub->add_flag("--json", opts->json, "Print nsys_analysis.json instead of the table");
  sub->add_option("--window", opts->window,
                  "Analysis windows: 'forward' (busy periods between idle gaps) or "
                  "'nvtx:REGEX' (NVTX ranges whose text matches)")
      ->capture_default_str();
  sub->add_option("--gap-us", opts->gap_us,
                  "forward windows: an idle gap this long (microseconds) ends a forward pass")
      ->capture_default_str();
  sub->add_option("--layout", opts->layout,
                  "The profiled layout as PP/TP/EP, recorded in the JSON");
  sub->add_option("--tp-span-nodes", opts->tp_span_nodes,
                  "How many nodes each TP group spans, recorded in the JSON");
  sub->add_option("-o,--output", opts->output, "Analysis file to write")->capture_default_str();
  return [opts] { return RunNsys(*opts); };
}

}  // namespace ppsearch::cli
