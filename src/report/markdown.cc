#include "report/markdown.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "analysis/repeat_spread.h"
#include "decide/sla.h"
#include "decide/steady_state.h"
#include "evidence/calibration_file.h"
#include "report/adaptive_section.h"
#include "report/breakdown.h"
#include "report/charts.h"
#include "report/compare_render.h"
#include "report/pools_section.h"
#include "report/result_table.h"
#include "spec/engine_env.h"
#include "util/format.h"
#include "util/json_text.h"

namespace ppsearch::report {
namespace {

// A pipeline layout's layer split where the spec sets one for its size: the
// split it ran with, which deploying it needs too (SGLang's even split
// leaves its stages other memory). Empty for an even split.
std::string LayerSplitNote(const spec::EngineSpec& engine, const spec::LayoutSpec& layout) {
  const std::vector<int> split = spec::PpLayerPartition(engine, layout.pp);
  if (layout.pp <= 1 || static_cast<int>(split.size()) != layout.pp) return "";
  return fmt::format(
      " It ran with the layer split `SGLANG_PP_LAYER_PARTITION={}` ({}): deploy it with the same "
      "split, its headroom and throughput were measured with it.",
      spec::PpLayerPartitionText(split), spec::PpLayerPartitionSource(engine, layout.pp));
}

std::string Mib(const std::optional<double>& v) {
  return v ? FormatThousands(static_cast<int64_t>(std::llround(*v))) : std::string("-");
}

ResultRow ToRow(const analysis::PointSummary& p) { return ResultRow{p}; }

// The calibration and noise model a simulated run used, as run.json records them.
std::string SimulationNote(const evidence::RunMetadata& run) {
  std::string out;
  if (!run.calibration.is_object()) {
    out += " Uncalibrated (hardware profile as shipped).";
  } else if (const Result<cost::Calibration> c =
                 evidence::ParseCalibration(run.calibration, "run.json's calibration");
             !c.ok()) {
    out += " Calibration not readable: " + c.error().message + ".";
  } else {
    std::string params;
    for (const cost::ParamInfo& p : cost::AllParams())
      params += fmt::format("{}{} = {:.4g}", params.empty() ? "" : ", ", p.name, c->Get(p.param));
    out += " Calibration: " + params + ".";
  }
  if (run.noise)
    out += fmt::format(" Repeat noise: {}, cv {}, seed {}.", run.noise->model,
                       JsonText(nlohmann::json(run.noise->cv)), run.noise->seed);
  return out;
}

Block Header(const analysis::RunAnalysis& a) {
  const spec::Spec& spec = a.spec();
  const spec::WorkloadSpec& w = spec.workload;
  const std::string lengths =
      !w.lengths.empty()
          ? fmt::format("lengths drawn from `{}`, {} rows", w.lengths_file, w.lengths.size())
          : fmt::format(
                "{}{} input tokens, {}{} output {}",
                w.input_distribution == "uniform" ? "up to " : "", FormatThousands(w.input_tokens),
                w.output_distribution == "uniform" ? "up to " : "",
                FormatThousands(w.output_tokens), w.output_tokens == 1 ? "token" : "tokens");
  std::string out = fmt::format(
      "Experiment `{}`, engine `{}`{}: {} layouts x {} concurrency levels x {} repeats = {} "
      "samples of {} requests ({}).",
      spec.experiment.name, a.evidence.engine.empty() ? "?" : a.evidence.engine,
      spec.engine.image.empty() ? "" : ", image `" + spec.engine.image + "`",
      spec.sweep.layouts.size(), spec.sweep.concurrency.size(), spec.sweep.repeats,
      spec.sweep.sample_count(), w.requests, lengths);
  const std::optional<evidence::ReplaySource>& replay = a.evidence.metadata.replay;
  if (replay)
    out += fmt::format(
        " Every sample was **replayed** from {} `{}` (SHA-256 `{}`): no server ran for this run.",
        replay->kind == "run" ? "the run directory" : "the CSV of medians", replay->path,
        replay->sha256.substr(0, 16));
  if (a.evidence.simulated) {
    out += " Every number below was **predicted by the simulator**, not measured.";
    // A replay's calibration and noise are its source's, recorded there.
    if (!replay) out += SimulationNote(a.evidence.metadata);
  }
  return Block::Paragraph(out);
}

// Whether each concurrency level's samples held their steady state, by the
// rule every prediction is judged by (decide/steady_state.h); none for an
// open loop.
std::optional<Block> SteadyState(const spec::Spec& spec) {
  std::vector<decide::LoopSample> samples;
  for (int c : spec.sweep.concurrency)
    samples.push_back(
        {"C=" + std::to_string(c), spec.workload.request_rate > 0 ? 0 : c, spec.workload.requests});
  std::string line = decide::SteadyStateLine(samples, "concurrency level");
  if (line.empty()) return std::nullopt;
  line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
  return Block::Paragraph(line + ".");
}

Section Results(const analysis::RunAnalysis& a) {
  std::string intro =
      fmt::format("Medians of the completed repeats (up to {} per point).", a.spec().sweep.repeats);
  if (a.baseline_layout && a.baseline_rows.empty())
    intro += " **No baseline rows**: " + a.baseline_note + ".";
  else if (a.baseline_layout)
    intro +=
        fmt::format(" Deltas are against {} at the same concurrency{}.", a.baseline_layout->Label(),
                    a.baseline_imported ? ", imported from `" + a.baseline_source + "`" : "");
  if (a.baseline_imported && !a.baseline_rows.empty() && !a.baseline_note.empty()) {
    std::string note = a.baseline_note;
    note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
    intro += " " + note + ".";
  }
  std::vector<ResultRow> rows, baseline;
  for (const auto& p : a.baseline_rows)
    if (p.imported) rows.push_back(ToRow(p));
  for (const auto& p : a.points) rows.push_back(ToRow(p));
  for (const auto& p : a.baseline_rows) baseline.push_back(ToRow(p));
  Section s{
      "Results",
      {Block::Paragraph(intro), Block::TableBlock(ResultTable(rows, baseline, a.baseline_layout))}};
  if (std::optional<Block> steady = SteadyState(a.spec())) s.blocks.push_back(std::move(*steady));
  for (const char* figure : {kFigureInputTps, kFigureTtft, kFigureTradeoff, kFigureDecodeTradeoff})
    s.blocks.push_back(Block::Figure(figure));
  return s;
}

Section Memory(const analysis::RunAnalysis& a) {
  table::Table t;
  t.header = {"PP / TP / EP",  "Peak GPU memory MiB", "GPU total MiB",
              "Remaining MiB", "Stage spread MiB",    "Peak on"};
  t.left = {true, false, false, false, false, true};
  auto row = [&](const analysis::LayoutMemory& m) {
    t.rows.push_back({LayoutCell(m.layout) + (m.imported ? " (imported)" : ""), Mib(m.peak_gpu_mib),
                      Mib(m.gpu_total_mib), Mib(m.remaining_mib), Mib(m.stage_spread_mib),
                      m.peak_where.empty() ? "-" : m.peak_where});
  };
  for (const auto& m : a.memory)
    if (m.imported) row(m);
  for (const auto& m : a.memory)
    if (!m.imported) row(m);
  return {"Memory",
          {Block::Paragraph(
               "Peak GPU memory is the highest per-GPU value in the post-sample snapshots across "
               "all nodes and samples; remaining is the GPU total minus that peak; stage spread is "
               "the highest minus the lowest per-stage peak."),
           Block::TableBlock(std::move(t)), Block::Figure(kFigureMemory)}};
}

// Every SLA miss: which limit, where, the measured figure against the limit.
std::optional<table::Table> SlaMissTable(const analysis::Decision& d) {
  table::Table t;
  t.header = {"PP / TP / EP", "C", "SLA", "Measured", "Limit", "Over by"};
  t.left = {true, false, true, false, false, false};
  for (const analysis::LayoutVerdict& v : d.verdicts)
    for (const analysis::SlaMissAt& at : v.sla_misses) {
      const decide::SlaMetric m = at.miss.metric;
      t.rows.push_back({LayoutCell(v.layout), std::to_string(at.concurrency), decide::Info(m).key,
                        decide::InKeyUnit(m, at.miss.value_s),
                        decide::InKeyUnit(m, at.miss.limit_s),
                        FormatSignedPercent(at.miss.over())});
    }
  if (t.rows.empty()) return std::nullopt;
  return t;
}

Section Decision(const analysis::RunAnalysis& a, const analysis::RunPrediction& prediction) {
  const analysis::Decision& d = a.decision;
  const spec::DecisionSpec& policy = a.spec().decision;
  Section s{"Decision", {}};
  s.blocks.push_back(Block::Paragraph(fmt::format(
      "Policy: objective `{}`, min_headroom_mib {}, max_repeat_spread {:.2f}%{}, failure_policy "
      "`{}`. Qualifying layouts are ranked by the geometric mean over concurrency levels of their "
      "objective median relative to the best qualifying layout at that level.",
      policy.objective.name(), FormatThousands(static_cast<int64_t>(policy.min_headroom_mib)),
      policy.max_repeat_spread * 100,
      analysis::RepeatSpreadJudged(a.spec()) ? "" : " (not judged in an open loop)",
      policy.failure_policy)));
  if (d.sla.any())
    s.blocks.push_back(Block::Paragraph(fmt::format(
        "SLA: {}. A layout qualifies only when it meets every limit at every concurrency level; "
        "a point's figure is the median over its repeats of each repeat's p99.",
        decide::LimitsText(d.sla))));
  if (d.primary) {
    std::vector<std::string> items = {fmt::format("**Primary: {}**: {}.{}", d.primary->Label(),
                                                  d.primary_reason,
                                                  LayerSplitNote(a.spec().engine, *d.primary))};
    items.push_back(d.fallback ? fmt::format("**Fallback: {}**: {}.{}", d.fallback->Label(),
                                             d.fallback_reason,
                                             LayerSplitNote(a.spec().engine, *d.fallback))
                               : std::string("**Fallback: none**: no other layout qualifies."));
    s.blocks.push_back(Block::Bullets(std::move(items)));
    // A simulated run's samples are predictions: say whether the
    // calibration's uncertainty could swap the two.
    if (a.evidence.simulated && d.fallback && policy.objective.adaptive())
      if (std::optional<std::string> note =
              analysis::OverlapNote(prediction, *d.primary, *d.fallback, policy.objective))
        s.blocks.push_back(Block::Paragraph(
            fmt::format("Uncertainty of the prediction behind these samples: {}.", *note)));
  } else {
    s.blocks.push_back(Block::Paragraph(fmt::format("**None qualifies**: {}.", d.none_reason)));
  }
  std::vector<std::string> excluded, notes;
  for (const auto& v : d.verdicts) {
    excluded.insert(excluded.end(), v.exclusions.begin(), v.exclusions.end());
    notes.insert(notes.end(), v.notes.begin(), v.notes.end());
  }
  if (!excluded.empty()) {
    s.blocks.push_back(Block::Paragraph("Excluded:"));
    s.blocks.push_back(Block::Bullets(excluded));
  }
  if (std::optional<table::Table> misses = SlaMissTable(d))
    s.blocks.push_back(Block::TableBlock(std::move(*misses)));
  if (!notes.empty()) {
    s.blocks.push_back(Block::Paragraph("Noted (not excluding):"));
    s.blocks.push_back(Block::Bullets(notes));
  }
  s.blocks.push_back(Block::Paragraph("Flags not to carry forward:"));
  s.blocks.push_back(Block::Bullets(
      d.flags_not_to_carry_forward.empty()
          ? std::vector<std::string>{"none: the planner raised no warning about this spec's "
                                     "settings."}
          : d.flags_not_to_carry_forward));
  return s;
}

std::optional<Section> Baseline(const analysis::RunAnalysis& a,
                                const compare::ConfounderReport* check) {
  if (!a.baseline_imported && a.comparability.empty()) return std::nullopt;
  Section s{"Baseline comparability", {}};
  if (a.comparability.empty() && check == nullptr) {
    s.blocks.push_back(Block::Paragraph(fmt::format(
        "The imported baseline `{}` matches this run in everything checked.", a.baseline_source)));
    return s;
  }
  if (!a.comparability.empty()) {
    std::vector<std::string> items;
    for (const std::string& w : a.comparability) items.push_back("warning: " + w);
    s.blocks.push_back(Block::Bullets(std::move(items)));
  }
  if (check == nullptr) return s;
  s.blocks.push_back(Block::Paragraph(fmt::format(
      "Confounders: this run (A) against the imported baseline `{}` (B), every recorded setting "
      "besides layout and concurrency:",
      a.baseline_source)));
  for (Block& b : ConfounderBlocks(*check)) s.blocks.push_back(std::move(b));
  return s;
}

Section Reproduce(const analysis::RunAnalysis& a) {
  std::string code = a.evidence.command_line.empty() ? "# (run.json has no command_line)\n"
                                                     : a.evidence.command_line + "\n";
  code += "ppsearch report " + a.evidence.run_dir + "\n";
  return {"How to reproduce", {Block::Code(code)}};
}

}  // namespace

Document ReportDocument(const analysis::RunAnalysis& a, const analysis::RunPrediction& prediction,
                        const std::vector<std::string>& profile_lines,
                        const compare::ConfounderReport* baseline_check) {
  Document doc;
  doc.title = "ppsearch report: " + a.evidence.run_id +
              (a.evidence.metadata.replay ? " (replayed)"
               : a.evidence.simulated     ? " (simulated)"
                                          : "");
  doc.intro.push_back(Header(a));
  doc.sections.push_back(Results(a));
  doc.sections.push_back(Memory(a));
  if (std::optional<Section> s = PoolsSection(a)) doc.sections.push_back(std::move(*s));
  doc.sections.push_back({"Checks", {Block::Bullets(CheckLines(a))}});
  const std::vector<std::string> comm = CommunicationLines(a);
  if (!comm.empty())
    doc.sections.push_back(
        {"Communication domains",
         {Block::Paragraph("From the planner's rank map (two TP all-reduces per layer plus the "
                           "embedding's; moe-a2a-backend none)."),
          Block::Bullets(comm)}});
  if (!profile_lines.empty())
    doc.sections.push_back(
        {"Profile evidence",
         {Block::Paragraph("Nsight Systems analyses (`ppsearch nsys`) of the profiled samples, "
                           "each beside the simulator's breakdown of the same layout."),
          Block::Bullets(profile_lines)}});
  doc.sections.push_back(PredictionSection(prediction, a.points));
  if (std::optional<Section> s = AdaptiveSection(a)) doc.sections.push_back(std::move(*s));
  doc.sections.push_back(Decision(a, prediction));
  if (std::optional<Section> s = Baseline(a, baseline_check)) doc.sections.push_back(std::move(*s));
  if (!a.warnings.empty())
    doc.sections.push_back({"Evidence warnings", {Block::Bullets(a.warnings)}});
  doc.sections.push_back(Reproduce(a));
  return doc;
}

std::string RenderReportMarkdown(const analysis::RunAnalysis& a,
                                 const std::vector<std::string>& profile_lines,
                                 const compare::ConfounderReport* baseline_check) {
  return RenderMarkdown(ReportDocument(a, a.prediction, profile_lines, baseline_check));
}

}  // namespace ppsearch::report
