#include "report/simulation_page.h"

#include <fmt/format.h>

#include <algorithm>

#include "decide/rules.h"
#include "report/breakdown.h"
#include "report/charts.h"
#include "report/html.h"
#include "report/result_table.h"
#include "report/uncertainty_tables.h"
#include "spec/engine_env.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

Section Results(const spec::Spec& spec, const SimulationPage& page,
                const analysis::RunPrediction& prediction) {
  std::vector<ResultRow> rows;
  for (const auto& p : prediction.points) {
    ResultRow& r = rows.emplace_back();
    r.point.layout = p.layout;
    r.point.concurrency = p.concurrency;
    r.point.median.input_tps = p.input_tps;
    r.point.median.ttft_p50_s = p.ttft_p50_s;
    r.point.median.ttft_p95_s = p.ttft_p95_s;
    r.input_tps_interval = p.input_tps_interval;
    r.ttft_p50_interval = p.ttft_p50_interval;
    r.ttft_p95_interval = p.ttft_p95_interval;
  }
  return {
      "Results",
      {Block::Paragraph(fmt::format(
           "One simulated sample per point, without repeat noise; deltas are against {} at "
           "the same concurrency{}.",
           spec.baseline.layout ? spec.baseline.layout->Label() : std::string("no baseline"),
           prediction.interval_members == 0
               ? std::string()
               : "; " + IntervalMeaning(prediction.interval_members, page.interval_seed))),
       Block::TableBlock(ResultTable(rows, rows, spec.baseline.layout)),
       Block::Figure(kFigureInputTps), Block::Figure(kFigureTtft), Block::Figure(kFigureTradeoff)}};
}

Section Memory(const SimulationPage& page) {
  table::Table t;
  t.header = {"PP / TP / EP", "Peak GPU memory MiB", "GPU total MiB", "Remaining MiB",
              "Stage spread MiB"};
  t.left = {true, false, false, false, false};
  std::vector<spec::LayoutSpec> seen;
  for (const auto& p : page.prediction.points) {
    if (std::find(seen.begin(), seen.end(), p.layout) != seen.end()) continue;
    seen.push_back(p.layout);
    t.rows.push_back(
        {LayoutCell(p.layout), FormatNumber(p.peak_gpu_mib, 0), FormatNumber(page.gpu_total_mib, 0),
         FormatNumber(page.gpu_total_mib - p.peak_gpu_mib, 0), FormatNumber(p.peak_spread_mib, 0)});
  }
  return {"Memory",
          {Block::Paragraph("The memory model's peak per GPU (weights, KV pool, activations and "
                            "runtime) at each PP stage; remaining is the GPU total minus the "
                            "highest stage peak."),
           Block::TableBlock(std::move(t)), Block::Figure(kFigureMemory)}};
}

std::optional<Section> CapCheck(const SimulationPage& page) {
  table::Table t;
  t.header = {"PP / TP / EP", "C", "Default cap", "Input TPS", "Input TPS with cap 1", "Change"};
  t.left = {true, false, false, false, false, false};
  for (const auto& p : page.prediction.points) {
    const double cap1 = p.cap1_input_tps;
    if (cap1 <= 0) continue;
    t.rows.push_back({LayoutCell(p.layout), std::to_string(p.concurrency),
                      std::to_string(p.pp_max_micro_batch_size), FormatNumber(p.input_tps, 2),
                      FormatNumber(cap1, 2), FormatSignedPercent(cap1 / p.input_tps - 1)});
  }
  if (t.rows.empty()) return std::nullopt;
  return Section{"pp-max-micro-batch-size = 1",
                 {Block::Paragraph("Every PP > 1 point simulated again with "
                                   "`--pp-max-micro-batch-size 1` (one request per micro-batch) "
                                   "against SGLang's default cap, for this workload."),
                  Block::TableBlock(std::move(t))}};
}

std::optional<Section> PartitionCheck(const SimulationPage& page) {
  table::Table t;
  t.header = {"PP / TP / EP",
              "C",
              "Headroom (even split)",
              "Input TPS",
              "SGLANG_PP_LAYER_PARTITION",
              "Headroom",
              "Input TPS with split",
              "Change"};
  t.left = {true, false, false, false, true, false, false, false};
  for (const auto& p : page.prediction.points) {
    if (p.roomier_partition.empty()) continue;
    t.rows.push_back({LayoutCell(p.layout), std::to_string(p.concurrency),
                      FormatNumber(decide::HeadroomMib(page.gpu_total_mib, p.peak_gpu_mib), 0),
                      FormatNumber(p.input_tps, 2), spec::PpLayerPartitionText(p.roomier_partition),
                      FormatNumber(decide::HeadroomMib(page.gpu_total_mib, p.roomier_peak_mib), 0),
                      FormatNumber(p.roomier_input_tps, 2),
                      FormatSignedPercent(p.roomier_input_tps / p.input_tps - 1)});
  }
  if (t.rows.empty()) return std::nullopt;
  return Section{"Layer split",
                 {Block::Paragraph("Every PP > 1 point simulated again with the "
                                   "`SGLANG_PP_LAYER_PARTITION` that leaves its tightest stage "
                                   "more memory than SGLang's even split, no stage given more "
                                   "layers than the even split's largest, for this workload. "
                                   "To run and predict a layout with its split, set it under its "
                                   "pipeline size in the spec's `[engine.pp_layer_partition]` "
                                   "(`8 = [12, 12, 12, 12, 12, 11, 11, 11]`)."),
                  Block::TableBlock(std::move(t))}};
}

}  // namespace

std::string RenderSimulationHtml(const spec::Spec& spec, const SimulationPage& page) {
  const analysis::RunPrediction& prediction = page.prediction;

  Document doc;
  doc.title = "ppsearch simulate: " + spec.experiment.name + " (predicted)";
  doc.intro.push_back(Block::Paragraph(
      fmt::format("Spec `{}`: {}. Every number on this page was **predicted by the simulator** "
                  "(calibration: {}); nothing was measured.",
                  page.spec_path, page.setup, page.calibration_source)));
  doc.sections.push_back(Results(spec, page, prediction));
  doc.sections.push_back(Memory(page));
  doc.sections.push_back(PredictionSection(prediction, {}));
  if (prediction.interval_members > 0 && page.calibration != nullptr)
    doc.sections.push_back(UncertaintySection(page.uncertainty, *page.calibration,
                                              spec.decision.objective, prediction.interval_members,
                                              page.interval_seed));
  if (std::optional<Section> s = CapCheck(page)) doc.sections.push_back(std::move(*s));
  if (std::optional<Section> s = PartitionCheck(page)) doc.sections.push_back(std::move(*s));

  ChartInputs in;
  in.measured = false;
  in.prediction = &prediction;
  in.gpu_total_mib = page.gpu_total_mib;
  in.min_headroom_mib = spec.decision.min_headroom_mib;
  for (const analysis::PredictedPoint& p : prediction.points) {
    ChartPoint cp;
    cp.layout = p.layout;
    cp.concurrency = p.concurrency;
    cp.input_tps = p.input_tps;
    cp.ttft_p50_s = p.ttft_p50_s;
    cp.ttft_p95_s = p.ttft_p95_s;
    cp.predicted_input_tps_interval = p.input_tps_interval;
    cp.baseline = spec.baseline.layout && p.layout == *spec.baseline.layout;
    in.points.push_back(cp);
    if (std::none_of(in.memory.begin(), in.memory.end(),
                     [&](const ChartMemory& m) { return m.layout == p.layout; }))
      in.memory.push_back({p.layout, p.stage_peak_mib, false});
  }
  return RenderHtml(doc, RenderCharts(in));
}

}  // namespace ppsearch::report
