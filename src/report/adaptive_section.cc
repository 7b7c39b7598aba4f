#include "report/adaptive_section.h"

#include <fmt/format.h>

#include "launch/process.h"
#include "report/svg_chart.h"

namespace ppsearch::report {
namespace {

std::string Percent(double p) { return fmt::format("{:.1f}%", p * 100); }

table::Table StepTable(const evidence::Trajectory& t) {
  table::Table table{{"step", "measured", "server start", "P(wrong) before", "expected after",
                      "GPU-hours before", "cost", "why"},
                     {},
                     {false, true, true, false, false, false, false, true}};
  table.units = {"", "", "", "", "", "", "GPU-h", ""};
  for (const evidence::TrajectoryStep& s : t.steps)
    table.rows.push_back({std::to_string(s.step), fmt::format("{} C={}", s.label, s.concurrency),
                          s.server_start ? "yes" : "no", Percent(s.p_wrong_before),
                          Percent(s.p_wrong_expected_after),
                          fmt::format("{:.2f}", s.gpu_hours_spent),
                          fmt::format("{:.2f}", s.cost_gpu_hours), s.reason});
  return table;
}

}  // namespace

std::optional<Section> AdaptiveSection(const analysis::RunAnalysis& a) {
  if (!a.evidence.trajectory) return std::nullopt;
  const evidence::Trajectory& t = *a.evidence.trajectory;
  Section s{"Adaptive measurement", {}};
  s.blocks.push_back(Block::Paragraph(
      "This run measured one point at a time: before each step it refitted the calibration on "
      "every point measured so far, predicted the rest with their intervals, and chose the point "
      "whose measurement was expected to lower the probability of a wrong choice most per "
      "GPU-hour. The decision below rests on measured points only (docs/adaptive.md)."));
  if (t.stop)
    s.blocks.push_back(Block::Paragraph(t.stop->message));
  else
    s.blocks.push_back(Block::Paragraph(fmt::format(
        "**Not finished**: the run stopped after {} step(s) without reaching its stop rule; "
        "resume it with `{}`.",
        t.steps.size(), launch::ShellJoin({"ppsearch", "run", "--resume", a.evidence.run_dir}))));
  if (!t.steps.empty()) s.blocks.push_back(Block::TableBlock(StepTable(t)));
  s.blocks.push_back(Block::Figure(kFigureTrajectory));
  return s;
}

std::string TrajectoryChart(const evidence::Trajectory& t) {
  ScatterChart c;
  c.id = kFigureTrajectory;
  c.title = "Probability of a wrong choice against GPU-hours spent";
  c.x_label = "GPU-hours spent";
  c.y_label = "P(wrong choice) (%)";
  c.series = {{"before each step", PaletteColor(0)}, {"at the stop", PaletteColor(1)}};
  c.shapes = {"step"};
  for (const evidence::TrajectoryStep& s : t.steps)
    c.points.push_back({s.gpu_hours_spent, s.p_wrong_before * 100, 0, 0, false,
                        fmt::format("step {}: {} C={}", s.step, s.label, s.concurrency)});
  if (t.stop)
    c.points.push_back(
        {t.stop->gpu_hours_spent, t.stop->p_wrong * 100, 1, 0, true, "stop: " + t.stop->reason});
  c.emphasis_legend = "where the run stopped";
  c.x_decimals = 2;
  c.y_decimals = 1;
  return RenderScatterChart(c);
}

}  // namespace ppsearch::report
