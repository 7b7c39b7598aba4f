#include "compare/comparison.h"

#include <set>

namespace ppsearch::compare {
namespace {

std::string PointsHeld(const SidePoints& side) {
  std::set<std::string> layouts;
  std::set<int> concurrency;
  for (const auto& p : side.points) {
    layouts.insert(p.layout.Label());
    concurrency.insert(p.concurrency);
  }
  std::string out;
  for (const auto& l : layouts) out += (out.empty() ? "" : ", ") + l;
  out += " at C =";
  for (int c : concurrency) {
    out += ' ';
    out += std::to_string(c);
  }
  return layouts.empty() ? "no completed point" : out;
}

}  // namespace

Result<Comparison> Compare(Side a, Side b) {
  Comparison c;
  c.match = MatchPoints(a.points, b.points);
  if (c.match.matched.empty())
    return MakeError(
        "no matching points: A (" + a.description.source + ") holds " + PointsHeld(a.points) +
        "; B (" + b.description.source + ") holds " + PointsHeld(b.points) +
        "; points are matched by PP, TP and concurrency (EP too where both sides have it)");
  const std::optional<bool> sa = a.description.simulated, sb = b.description.simulated;
  // A CSV that does not say is taken as measured against a simulated run:
  // the baseline CSVs teams keep are measurements.
  const bool a_sim = sa.value_or(false), b_sim = sb.value_or(false);
  if (a_sim != b_sim) c.prediction = CheckPrediction(c.match, a_sim);
  c.confounders = FindConfounders(a.description, b.description);
  if (auto ep = ExpertParallelDifference(c.match))
    AddDifference(c.confounders, "layout.ep", "EP" + ep->first, "EP" + ep->second);
  c.a = std::move(a);
  c.b = std::move(b);
  return c;
}

}  // namespace ppsearch::compare
