#include "report/breakdown.h"

#include <fmt/format.h>

#include <algorithm>

#include "evidence/point_columns.h"
#include "report/charts.h"
#include "report/result_table.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

std::string Share(double fraction) { return FormatNumber(fraction * 100, 1) + "%"; }

const analysis::PointSummary* FindMeasured(const std::vector<analysis::PointSummary>& measured,
                                           const analysis::PredictedPoint& p) {
  for (const auto& m : measured)
    // A point none of whose samples completed a request measured nothing.
    if (!m.imported && m.layout == p.layout && m.concurrency == p.concurrency &&
        evidence::HasMedians(m))
      return &m;
  return nullptr;
}

table::Table PredictedTable(const analysis::RunPrediction& prediction,
                            const std::vector<analysis::PointSummary>& measured) {
  table::Table t;
  t.header = {"PP / TP / EP", "C", "Predicted input TPS", "Predicted TTFT p50",
              "Predicted TTFT p95"};
  // A disaggregated deployment's points carry the model-form interval alone.
  const bool intervals = prediction.interval_members > 0 ||
                         std::any_of(prediction.points.begin(), prediction.points.end(),
                                     [](const analysis::PredictedPoint& p) {
                                       return p.input_tps_interval.has_value();
                                     });
  if (!measured.empty()) {
    t.header.push_back("Measured input TPS");
    t.header.push_back("Measured vs predicted");
    if (intervals) t.header.push_back("Inside the interval");
  }
  t.left.assign(t.header.size(), false);
  t.left[0] = true;
  for (const analysis::PredictedPoint& p : prediction.points) {
    std::vector<std::string> row = {LayoutCell(p.layout), std::to_string(p.concurrency),
                                    TpsCell(p.input_tps, p.input_tps_interval),
                                    SecondsCell(p.ttft_p50_s, p.ttft_p50_interval),
                                    SecondsCell(p.ttft_p95_s, p.ttft_p95_interval)};
    if (!measured.empty()) {
      const analysis::PointSummary* m = FindMeasured(measured, p);
      row.push_back(m ? FormatNumber(m->median.input_tps, 2) : "-");
      row.push_back(
          m && p.input_tps > 0 ? FormatSignedPercent(m->median.input_tps / p.input_tps - 1) : "-");
      if (intervals) {
        const auto& i = p.input_tps_interval;
        row.push_back(!m || !i                        ? "-"
                      : m->median.input_tps < i->low  ? "below"
                      : m->median.input_tps > i->high ? "above"
                                                      : "yes");
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

table::Table BreakdownTable(const analysis::RunPrediction& prediction) {
  table::Table t;
  t.header = {"PP / TP / EP",
              "C",
              "Stage",
              "Compute",
              "Exposed TP comm",
              "Pipeline transfer",
              "Kernel gaps",
              "Bubble (idle)",
              "Full-chunk peak MiB"};
  t.left = {true, false, false, false, false, false, false, false, false};
  for (const analysis::PredictedPoint& p : prediction.points)
    for (size_t s = 0; s < p.stages.size(); ++s) {
      const predict::StageShare& sh = p.stages[s];
      t.rows.push_back({LayoutCell(p.layout), std::to_string(p.concurrency), std::to_string(s),
                        Share(sh.compute), Share(sh.exposed_comm), Share(sh.transfer),
                        Share(sh.overhead), Share(sh.idle),
                        s < p.stage_peak_mib.size() ? FormatNumber(p.stage_peak_mib[s], 0) : "-"});
    }
  return t;
}

Section PredictionSection(const analysis::RunPrediction& prediction,
                          const std::vector<analysis::PointSummary>& measured) {
  Section s{"Prediction and time breakdown", {Block::Paragraph(prediction.note + ".")}};
  if (prediction.points.empty()) return s;
  s.blocks.push_back(Block::TableBlock(PredictedTable(prediction, measured)));
  // A disaggregated deployment's points have no stages here: its pools'
  // shares are in the Pools section.
  const table::Table breakdown = BreakdownTable(prediction);
  if (breakdown.rows.empty()) return s;
  s.blocks.push_back(Block::Paragraph(
      "Each stage's share of the sample window (first send to last completion): compute, "
      "exposed TP collectives (communication not hidden behind compute), pipeline transfer "
      "(receiving the previous stage's activations), kernel gaps (host overhead between "
      "kernels) and idle, the pipeline bubble (waiting for another stage or for work). The "
      "full-chunk peak is the stage's GPU memory once a prefill batch of the whole chunk "
      "(--chunked-prefill-size) has run, the figure the memory checks judge by; a load whose "
      "batches stay smaller leaves the GPUs lower (simulate --json: served_peak_gpu_mib)."));
  s.blocks.push_back(Block::Figure(kFigureBreakdown));
  s.blocks.push_back(Block::TableBlock(breakdown));
  return s;
}

}  // namespace ppsearch::report
