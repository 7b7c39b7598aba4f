#include "report/uncertainty_tables.h"

#include <fmt/format.h>

#include "report/result_table.h"
#include "util/format.h"

namespace ppsearch::report {

table::Table SensitivityTable(const uncertainty::UncertaintySummary& s,
                              const cost::Calibration& calibration) {
  table::Table t;
  t.header = {"PP / TP / EP", "Model form / parameters", "Moves input TPS most", "Second", "Third"};
  t.left = {true, true, true, true, true};
  for (const uncertainty::LayoutSensitivity& l : s.sensitivity) {
    // How the interval's (log-space) variance splits between the model's
    // form and the parameters.
    std::vector<std::string> row = {
        LayoutCell(l.layout),
        FormatPercent(l.model_form_share, 0) + " / " + FormatPercent(1 - l.model_form_share, 0)};
    for (const uncertainty::ParamShare& p : l.top)
      row.push_back(fmt::format(
          "{} {} ({}, {})", cost::Info(p.param).name, FormatPercent(p.share, 0),
          cost::ParamStatusName(calibration.Status(p.param)), p.correlation >= 0 ? "+" : "-"));
    row.resize(t.header.size(), "-");
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::vector<std::string> DecisionUncertaintyLines(const uncertainty::UncertaintySummary& s,
                                                  const decide::Objective& objective) {
  if (s.ranking.size() < 2) return {};
  const uncertainty::LayoutScore& a = s.ranking[0];
  const uncertainty::LayoutScore& b = s.ranking[1];
  // The draws rank by the objective where they carry it, else by input TPS
  // (decide::Objective::Drawn): another objective is not what they ranked,
  // and the line says so.
  const std::string by =
      objective.adaptive()
          ? fmt::format(
                "by objective `{}`: the geometric mean over the concurrency levels, as "
                "the decision ranks",
                objective.name())
          : fmt::format(
                "by {}: the geometric mean over the concurrency levels; the "
                "draws do not carry objective `{}`",
                objective.Drawn().label(), objective.name());
  std::vector<std::string> out = {
      fmt::format("predicted best {}, runner-up {} ({} lower score {})", a.layout.Label(),
                  b.layout.Label(), FormatPercent(a.score > 0 ? 1 - b.score / a.score : 0), by)};
  out.push_back(s.overlap_note);
  if (s.next) {
    out.push_back(
        fmt::format("the runner-up ranks first in {} of {} draws", s.next->flips, s.next->members));
    out.push_back(uncertainty::NextMeasurementLine(*s.next));
  }
  return out;
}

std::string IntervalMeaning(int members, uint64_t seed) {
  return fmt::format(
      "in brackets, the 10th\u201390th percentile over {} draws (seed {}) of the parameters the "
      "calibration left uncertain, widened by the model's form error (throughput and TTFT; "
      "fitted to the backtest's misses, growing with extrapolation from what was calibrated, "
      "widest with no calibration); "
      "not measurement noise",
      members, seed);
}

Section UncertaintySection(const uncertainty::UncertaintySummary& s,
                           const cost::Calibration& calibration, const decide::Objective& objective,
                           int members, uint64_t seed) {
  Section sec{"Uncertainty", {}};
  sec.blocks.push_back(Block::Paragraph(
      "Intervals: " + IntervalMeaning(members, seed) +
      ". How much of each layout's input TPS interval is model form and how much parameters "
      "(log-space variance shares), and each parameter's share of the variance of a layout's "
      "predicted input TPS that it explains alone (squared rank correlation across the draws, "
      "normalised; + when TPS rises "
      "with it), with its calibration status:"));
  sec.blocks.push_back(Block::TableBlock(SensitivityTable(s, calibration)));
  const std::vector<std::string> lines = DecisionUncertaintyLines(s, objective);
  if (!lines.empty()) sec.blocks.push_back(Block::Bullets(lines));
  return sec;
}

}  // namespace ppsearch::report
