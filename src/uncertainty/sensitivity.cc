#include "uncertainty/sensitivity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "decide/rules.h"
#include "stats/stats.h"
#include "uncertainty/model_error.h"
#include "util/format.h"

namespace ppsearch::uncertainty {
namespace {

std::vector<spec::LayoutSpec> LayoutsOf(const std::vector<PointUncertainty>& points) {
  std::vector<spec::LayoutSpec> out;
  for (const PointUncertainty& p : points)
    if (std::find(out.begin(), out.end(), p.layout) == out.end()) out.push_back(p.layout);
  return out;
}

const PointUncertainty* Find(const std::vector<PointUncertainty>& points,
                             const spec::LayoutSpec& layout, int concurrency) {
  for (const PointUncertainty& p : points)
    if (p.layout == layout && p.concurrency == concurrency) return &p;
  return nullptr;
}

double SafeLog(double v) { return std::log(std::max(v, 1e-300)); }

// Each member's decision score of `layouts` (rows: layouts, as given) from
// `value(point, member)`; member -1 is the central prediction.
template <typename F>
std::vector<double> Scores(const std::vector<PointUncertainty>& points,
                           const std::vector<spec::LayoutSpec>& layouts,
                           const std::vector<int>& levels, const decide::Objective& objective,
                           F value) {
  std::vector<std::vector<double>> values;
  for (const spec::LayoutSpec& l : layouts) {
    values.emplace_back();
    for (int c : levels) {
      const PointUncertainty* p = Find(points, l, c);
      values.back().push_back(p ? value(*p) : 0.0);
    }
  }
  return decide::RelativeScores(values, objective.lower_is_better());
}

}  // namespace

double ObjectiveValue(const MemberValues& v, const decide::Objective& objective) {
  return objective.Of(ObjectiveDraw(v));
}

std::vector<LayoutSensitivity> ParameterSensitivity(const std::vector<PointUncertainty>& points,
                                                    const Ensemble& ensemble, int top) {
  std::vector<LayoutSensitivity> out;
  const size_t members = ensemble.members.size();
  for (const spec::LayoutSpec& layout : LayoutsOf(points)) {
    LayoutSensitivity ls;
    ls.layout = layout;
    // The layout's mean log input TPS over its concurrency levels, per member.
    std::vector<double> y(members, 0.0);
    int n_points = 0;
    for (const PointUncertainty& p : points) {
      if (!(p.layout == layout)) continue;
      ls.model_form_share += ModelFormShare({p.input_tps, p.parameter.input_tps, p.model_form_rel},
                                            p.central.input_tps);
      ++n_points;
      for (size_t m = 0; m < members && m < p.members.size(); ++m)
        y[m] += SafeLog(p.members[m].input_tps);
    }
    if (n_points > 0) ls.model_form_share /= n_points;
    std::vector<ParamShare> shares;
    double total = 0;
    for (const auto& info : cost::AllParams()) {
      const int d = cost::Index(info.param);
      if (!ensemble.varies[d]) continue;
      std::vector<double> x;
      for (size_t m = 0; m < members; ++m) x.push_back(ensemble.log_values[m][d]);
      const double r = stats::RankCorrelation(x, y);
      shares.push_back({info.param, r * r, r});
      total += r * r;
    }
    if (total > 0) {
      for (ParamShare& s : shares) s.share /= total;
      std::stable_sort(shares.begin(), shares.end(),
                       [](const ParamShare& a, const ParamShare& b) { return a.share > b.share; });
      shares.resize(std::min<size_t>(shares.size(), static_cast<size_t>(std::max(top, 0))));
      ls.top = std::move(shares);
    }
    out.push_back(std::move(ls));
  }
  return out;
}

std::vector<LayoutScore> RankLayouts(const std::vector<PointUncertainty>& points,
                                     const std::vector<spec::LayoutSpec>& candidates,
                                     const std::vector<int>& levels,
                                     const decide::Objective& objective) {
  std::vector<spec::LayoutSpec> complete;
  for (const spec::LayoutSpec& l : candidates)
    if (std::all_of(levels.begin(), levels.end(),
                    [&](int c) { return Find(points, l, c) != nullptr; }))
      complete.push_back(l);
  const std::vector<double> scores =
      Scores(points, complete, levels, objective,
             [&](const PointUncertainty& p) { return ObjectiveValue(p.central, objective); });
  std::vector<LayoutScore> out;
  for (size_t i = 0; i < complete.size(); ++i) out.push_back({complete[i], scores[i]});
  std::stable_sort(out.begin(), out.end(),
                   [](const LayoutScore& a, const LayoutScore& b) { return a.score > b.score; });
  return out;
}

std::optional<NextMeasurement> BestNextMeasurement(const std::vector<PointUncertainty>& points,
                                                   const std::vector<LayoutScore>& ranked,
                                                   const std::vector<int>& levels,
                                                   const decide::Objective& objective,
                                                   const std::vector<spec::LayoutSpec>& measured) {
  if (ranked.size() < 2 || points.empty()) return std::nullopt;
  const size_t members = points.front().members.size();
  if (members == 0) return std::nullopt;
  NextMeasurement n;
  n.primary = ranked[0].layout;
  n.runner_up = ranked[1].layout;
  n.members = static_cast<int>(members);
  // Every candidate competes in each member's score, as in the decision;
  // the margin is between the two the central prediction ranks first.
  std::vector<spec::LayoutSpec> layouts;
  for (const LayoutScore& s : ranked) layouts.push_back(s.layout);
  std::vector<double> margin;
  for (size_t m = 0; m < members; ++m) {
    const std::vector<double> s = Scores(points, layouts, levels, objective, [&](const auto& p) {
      return m < p.members.size() ? ObjectiveValue(p.members[m], objective) : 0.0;
    });
    margin.push_back(SafeLog(s[0]) - SafeLog(s[1]));
    if (s[1] > s[0]) ++n.flips;
  }
  for (const PointUncertainty& p : points) {
    if (std::find(measured.begin(), measured.end(), p.layout) != measured.end()) continue;
    std::vector<double> x;
    for (size_t m = 0; m < members && m < p.members.size(); ++m)
      x.push_back(SafeLog(ObjectiveValue(p.members[m], objective)));
    const double r = stats::Correlation(x, margin);
    if (r * r > n.explained) {
      n.explained = r * r;
      n.layout = p.layout;
      n.concurrency = p.concurrency;
    }
  }
  return n;
}

std::string NextMeasurementLine(const NextMeasurement& n) {
  const std::string pair = n.primary.Label() + "-vs-" + n.runner_up.Label();
  if (!n.layout)
    return fmt::format(
        "no unmeasured point's prediction moves with the margin of {}: measuring one would not "
        "narrow the decision",
        pair);
  return fmt::format("measure {} at C={} next: it explains {} of the uncertainty in {}",
                     n.layout->Label(), n.concurrency, FormatPercent(n.explained, 0), pair);
}

}  // namespace ppsearch::uncertainty
