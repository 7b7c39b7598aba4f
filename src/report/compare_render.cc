#include "report/compare_render.h"

#include <fmt/format.h>

#include <cmath>

#include "evidence/summary_json.h"
#include "report/result_table.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

using compare::MetricDiff;

struct MetricStyle {
  const char* label;
  const char* unit;  // appended to values: " s", " MiB", ""
  int decimals;
};

MetricStyle Style(const std::string& name) {
  if (name == "input_tps") return {"Input TPS", "", 2};
  if (name == "ttft_p50_s") return {"TTFT p50", " s", 2};
  if (name == "ttft_p95_s") return {"TTFT p95", " s", 2};
  return {"Peak GPU", " MiB", 0};
}

// "-" for a figure a side does not hold.
std::string Value(const std::optional<double>& v, const MetricStyle& s) {
  return v ? FormatNumber(*v, s.decimals) + s.unit : "-";
}

std::string Signed(const std::optional<double>& v, const MetricStyle& s) {
  if (!v) return "-";
  std::string out = *v >= 0 ? "+" : "-";
  out += FormatNumber(std::fabs(*v), s.decimals);
  return out + s.unit;
}

std::string Percent(const std::optional<double>& v) { return v ? FormatSignedPercent(*v) : "-"; }

std::string NoiseCell(const MetricDiff& d) {
  return d.noise ? FormatNumber(*d.noise * 100, 2) + "%" : "-";
}

std::string WithinCell(const MetricDiff& d) {
  if (!d.within_noise) return "unknown";
  return *d.within_noise ? "within noise" : "beyond noise";
}

std::string SideLine(const char* name, const compare::Side& s) {
  const compare::RunDescription& d = s.description;
  const std::string kind = !d.simulated   ? "engine kind not recorded"
                           : *d.simulated ? "simulated"
                                          : "measured";
  return fmt::format("# {}: {} ({}, {}, {} points)\n", name, d.source, d.what, kind,
                     s.points.points.size());
}

// A's layout; B's EP size too where the point was matched across EP sizes.
std::string MatchedLayoutCell(const compare::MatchedPoint& p) {
  std::string cell = LayoutCell(p.layout);
  if (p.b_layout.ep != p.layout.ep) cell += " (B: EP" + std::to_string(p.b_layout.ep) + ")";
  return cell;
}

std::string PointTable(const compare::PointMatch& m) {
  std::vector<std::vector<std::string>> cells;
  for (const compare::MatchedPoint& p : m.matched)
    for (const MetricDiff& d : p.metrics) {
      const MetricStyle s = Style(d.name);
      cells.push_back({MatchedLayoutCell(p), std::to_string(p.concurrency), s.label, Value(d.a, s),
                       Value(d.b, s), Signed(d.abs, s), Percent(d.rel), NoiseCell(d),
                       WithinCell(d)});
    }
  return table::RenderTextTable(
      {{"PP / TP / EP", "C", "metric", "A", "B", "B - A", "B vs A", "noise", "difference"},
       cells,
       {true, false, true, false, false, false, false, false, true}});
}

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string PredictionText(const compare::PredictionCheck& p) {
  const char measured = p.predicted_side == 'A' ? 'B' : 'A';
  std::string out = fmt::format(
      "\nPrediction check: {} is simulated, {} measured; error = predicted / measured - 1\n\n",
      p.predicted_side, measured);
  std::vector<std::vector<std::string>> cells;
  for (const auto& pt : p.points)
    cells.push_back({LayoutCell(pt.layout), std::to_string(pt.concurrency),
                     Percent(pt.input_tps_error), Percent(pt.ttft_p50_error),
                     Percent(pt.ttft_p95_error)});
  out += table::RenderTextTable(
      {{"PP / TP / EP", "C", "Input TPS error", "TTFT p50 error", "TTFT p95 error"},
       cells,
       {true}});
  if (p.median_abs_input_tps_error)
    out += fmt::format("\nmedian |Input TPS error| over {} points: {:.2f}%\n", p.points.size(),
                       *p.median_abs_input_tps_error * 100);
  if (p.rankings.empty())
    out += "ranking: not checked (fewer than two matched layouts at every concurrency)\n";
  for (const auto& r : p.rankings)
    out += r.agrees
               ? fmt::format("ranking by Input TPS at C={}: agrees ({})\n", r.concurrency,
                             Join(r.measured, " > "))
               : fmt::format("ranking by Input TPS at C={}: differs: measured {}, predicted {}\n",
                             r.concurrency, Join(r.measured, " > "), Join(r.predicted, " > "));
  return out;
}

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json SideJson(const compare::Side& s) {
  const compare::RunDescription& d = s.description;
  return {{"source", d.source},
          {"what", d.what},
          {"has_metadata", d.has_metadata},
          {"simulated", d.simulated ? nlohmann::json(*d.simulated) : nlohmann::json(nullptr)},
          {"points", s.points.points.size()},
          {"settings", d.settings}};
}

nlohmann::json PredictionJson(const compare::PredictionCheck& p) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& pt : p.points)
    points.push_back({{"layout", evidence::SummaryLayoutJson(pt.layout)},
                      {"concurrency", pt.concurrency},
                      {"input_tps_error", Optional(pt.input_tps_error)},
                      {"ttft_p50_error", Optional(pt.ttft_p50_error)},
                      {"ttft_p95_error", Optional(pt.ttft_p95_error)}});
  nlohmann::json rankings = nlohmann::json::array();
  for (const auto& r : p.rankings)
    rankings.push_back({{"concurrency", r.concurrency},
                        {"measured", r.measured},
                        {"predicted", r.predicted},
                        {"agrees", r.agrees}});
  return {{"predicted_side", std::string(1, p.predicted_side)},
          {"points", points},
          {"median_abs_input_tps_error", Optional(p.median_abs_input_tps_error)},
          {"rankings", rankings},
          {"ranking_agrees", p.ranking_agrees}};
}

}  // namespace

std::vector<Block> ConfounderBlocks(const compare::ConfounderReport& r) {
  std::vector<Block> blocks;
  if (r.differences.empty()) {
    blocks.push_back(
        Block::Paragraph("No recorded setting differs besides layout and concurrency."));
  } else {
    table::Table t{{"class", "kind", "setting", "A", "B", "why"}, {}, std::vector<bool>(6, true)};
    for (const compare::Difference& d : r.differences)
      t.rows.push_back({compare::SeverityName(d.what.severity), d.what.kind, d.what.label, d.a, d.b,
                        d.what.reason});
    blocks.push_back(Block::TableBlock(std::move(t)));
  }
  if (!r.unchecked.empty()) {
    blocks.push_back(Block::Paragraph("Not checked:"));
    blocks.push_back(Block::Bullets(r.unchecked));
  }
  blocks.push_back(Block::Paragraph("**Verdict:** " + r.verdict));
  return blocks;
}

std::string RenderConfounders(const compare::ConfounderReport& r) {
  std::vector<Block> blocks = ConfounderBlocks(r);
  blocks.back() = Block::Paragraph("verdict: " + r.verdict);  // a terminal shows no bold
  std::string out;
  for (const Block& b : blocks) {
    if (!out.empty()) out += "\n";
    switch (b.kind) {
      case Block::Kind::kTable:
        out += table::RenderTextTable(b.table);
        break;
      case Block::Kind::kBullets:
        for (const std::string& item : b.items) out += "- " + item + "\n";
        break;
      default:
        out += b.text + "\n";
    }
  }
  return out;
}

evidence::ConfounderCheck ConfounderCheckOf(const compare::ConfounderReport& r) {
  evidence::ConfounderCheck out;
  for (const compare::Difference& d : r.differences)
    out.differences.push_back({d.key, d.what.label, d.what.kind,
                               compare::SeverityName(d.what.severity), d.what.reason, d.a, d.b});
  out.unchecked = r.unchecked;
  out.comparable = r.comparable;
  out.verdict = r.verdict;
  return out;
}

std::string RenderComparisonText(const compare::Comparison& c) {
  std::string out = "# ppsearch compare\n";
  out += SideLine("A", c.a);
  out += SideLine("B", c.b);
  out += fmt::format("# {} points matched by layout and concurrency{}", c.match.matched.size(),
                     compare::ExpertParallelDifference(c.match) ? " (across EP sizes)" : "");
  if (!c.match.only_a.empty()) out += fmt::format("; only in A: {}", Join(c.match.only_a, ", "));
  if (!c.match.only_b.empty()) out += fmt::format("; only in B: {}", Join(c.match.only_b, ", "));
  out +=
      "\n# noise: the larger repeat spread ((max - min) / median) of the two sides' points; "
      "'unknown' without two repeats or a recorded spread\n\n";
  out += PointTable(c.match);
  if (c.prediction) out += PredictionText(*c.prediction);
  out += "\nConfounders (every recorded setting besides layout and concurrency):\n\n";
  out += RenderConfounders(c.confounders);
  return out;
}

nlohmann::json ComparisonJson(const compare::Comparison& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const compare::MatchedPoint& p : c.match.matched) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const MetricDiff& d : p.metrics)
      metrics[d.name] = {
          {"a", Optional(d.a)},
          {"b", Optional(d.b)},
          {"abs", Optional(d.abs)},
          {"rel", Optional(d.rel)},
          {"noise", Optional(d.noise)},
          {"within_noise", d.within_noise ? nlohmann::json(*d.within_noise) : nlohmann::json()}};
    points.push_back({{"layout", evidence::SummaryLayoutJson(p.layout)},
                      {"b_layout", evidence::SummaryLayoutJson(p.b_layout)},
                      {"concurrency", p.concurrency},
                      {"metrics", metrics}});
  }
  return {{"a", SideJson(c.a)},
          {"b", SideJson(c.b)},
          {"points", points},
          {"only_in_a", c.match.only_a},
          {"only_in_b", c.match.only_b},
          {"prediction", c.prediction ? PredictionJson(*c.prediction) : nlohmann::json(nullptr)},
          {"confounders", evidence::ConfounderCheckJson(ConfounderCheckOf(c.confounders))}};
}

}  // namespace ppsearch::report
