#include "compare/match.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "evidence/point_columns.h"
#include "stats/stats.h"

namespace ppsearch::compare {
namespace {

std::string PointLabel(const analysis::PointSummary& p) {
  return fmt::format("{} C={}", p.layout.Label(), p.concurrency);
}

const analysis::PointSummary* FindPoint(const SidePoints& side, const spec::LayoutSpec& layout,
                                        int concurrency) {
  for (const auto& p : side.points)
    if (p.layout == layout && p.concurrency == concurrency) return &p;
  return nullptr;
}

std::optional<double> KnownSpread(const SidePoints& side, const analysis::PointSummary& p,
                                  double spread) {
  if (!side.spreads_recorded || !evidence::SpreadsKnown(p)) return std::nullopt;
  return spread;
}

MetricDiff Diff(const std::string& name, std::optional<double> a, std::optional<double> b,
                std::optional<double> spread_a, std::optional<double> spread_b) {
  MetricDiff d;
  d.name = name;
  d.a = a;
  d.b = b;
  if (a && b) d.abs = *b - *a;
  if (a && b && *a != 0) d.rel = *b / *a - 1;
  if (spread_a || spread_b) d.noise = std::max(spread_a.value_or(0), spread_b.value_or(0));
  if (d.rel && d.noise) d.within_noise = std::fabs(*d.rel) <= *d.noise;
  return d;
}

// The point's median of `member`, where its side holds it.
std::optional<double> Known(const analysis::PointSummary& p, double stats::Figures::*member) {
  return evidence::ValueOf(*evidence::ColumnOf(member), p);
}

std::optional<double> Error(double predicted, double measured) {
  if (measured == 0) return std::nullopt;
  return predicted / measured - 1;
}

}  // namespace

PointMatch MatchPoints(const SidePoints& a, const SidePoints& b) {
  // For each A point, its B point: the same layout, else (second pass) the
  // same PP/TP/C with another EP among the B points still free.
  std::vector<const analysis::PointSummary*> partner(a.points.size(), nullptr);
  std::set<const analysis::PointSummary*> taken;
  for (size_t i = 0; i < a.points.size(); ++i) {
    partner[i] = FindPoint(b, a.points[i].layout, a.points[i].concurrency);
    if (partner[i] != nullptr) taken.insert(partner[i]);
  }
  for (size_t i = 0; i < a.points.size(); ++i) {
    if (partner[i] != nullptr) continue;
    const analysis::PointSummary& pa = a.points[i];
    // Two deployments, or a deployment and a layout, pair only as equals
    // (their own sizes are no pool's).
    if (pa.layout.disaggregated()) continue;
    for (const auto& pb : b.points)
      if (!taken.count(&pb) && !pb.layout.disaggregated() && pb.layout.pp == pa.layout.pp &&
          pb.layout.tp == pa.layout.tp && pb.concurrency == pa.concurrency) {
        partner[i] = &pb;
        taken.insert(&pb);
        break;
      }
  }
  PointMatch m;
  for (size_t i = 0; i < a.points.size(); ++i) {
    const analysis::PointSummary& pa = a.points[i];
    const analysis::PointSummary* pb = partner[i];
    if (pb == nullptr) {
      m.only_a.push_back(PointLabel(pa));
      continue;
    }
    MatchedPoint mp;
    mp.layout = pa.layout;
    mp.b_layout = pb->layout;
    mp.concurrency = pa.concurrency;
    using F = stats::Figures;
    // A figure neither side holds is no row.
    auto add = [&](MetricDiff d) {
      if (d.a || d.b) mp.metrics.push_back(std::move(d));
    };
    add(Diff("input_tps", Known(pa, &F::input_tps), Known(*pb, &F::input_tps),
             KnownSpread(a, pa, pa.input_tps_spread), KnownSpread(b, *pb, pb->input_tps_spread)));
    add(Diff("ttft_p50_s", Known(pa, &F::ttft_p50_s), Known(*pb, &F::ttft_p50_s),
             KnownSpread(a, pa, pa.ttft_p50_s_spread), KnownSpread(b, *pb, pb->ttft_p50_s_spread)));
    // No repeat spread of p95 is kept: its noise is unknown.
    add(Diff("ttft_p95_s", Known(pa, &F::ttft_p95_s), Known(*pb, &F::ttft_p95_s), std::nullopt,
             std::nullopt));
    add(Diff("peak_gpu_mib", pa.peak_gpu_mib, pb->peak_gpu_mib, std::nullopt, std::nullopt));
    m.matched.push_back(std::move(mp));
  }
  for (const auto& pb : b.points)
    if (!taken.count(&pb)) m.only_b.push_back(PointLabel(pb));
  return m;
}

std::optional<std::pair<std::string, std::string>> ExpertParallelDifference(const PointMatch& m) {
  std::set<int> ep_a, ep_b;
  bool differs = false;
  for (const MatchedPoint& mp : m.matched) {
    ep_a.insert(mp.layout.ep);
    ep_b.insert(mp.b_layout.ep);
    differs = differs || mp.layout.ep != mp.b_layout.ep;
  }
  if (!differs) return std::nullopt;
  auto list = [](const std::set<int>& eps) {
    std::string out;
    for (int ep : eps) out += (out.empty() ? "" : ", ") + std::to_string(ep);
    return out;
  };
  return std::pair(list(ep_a), list(ep_b));
}

PredictionCheck CheckPrediction(const PointMatch& match, bool a_simulated) {
  PredictionCheck c;
  c.predicted_side = a_simulated ? 'A' : 'B';
  // Per concurrency: (measured tps, predicted tps, label) of every matched layout.
  std::map<int, std::vector<std::tuple<double, double, std::string>>> by_c;
  std::vector<double> abs_errors;
  for (const MatchedPoint& mp : match.matched) {
    // (predicted, measured); unknown where the measured or predicted side
    // does not hold the figure.
    auto values = [&](const std::string& name) -> std::pair<double, double> {
      for (const MetricDiff& d : mp.metrics)
        if (d.name == name && d.a && d.b)
          return a_simulated ? std::pair(*d.a, *d.b) : std::pair(*d.b, *d.a);
      return {0, 0};
    };
    PredictionPoint p;
    p.layout = mp.layout;
    p.concurrency = mp.concurrency;
    const auto [tps_pred, tps_meas] = values("input_tps");
    const auto [p50_pred, p50_meas] = values("ttft_p50_s");
    const auto [p95_pred, p95_meas] = values("ttft_p95_s");
    p.input_tps_error = Error(tps_pred, tps_meas);
    p.ttft_p50_error = Error(p50_pred, p50_meas);
    p.ttft_p95_error = Error(p95_pred, p95_meas);
    if (p.input_tps_error) abs_errors.push_back(std::fabs(*p.input_tps_error));
    c.points.push_back(p);
    // A layout ranks where both sides hold its input TPS.
    if (p.input_tps_error) by_c[mp.concurrency].emplace_back(tps_meas, tps_pred, mp.layout.Label());
  }
  if (!abs_errors.empty()) c.median_abs_input_tps_error = stats::Median(abs_errors);
  for (auto& [concurrency, rows] : by_c) {
    if (rows.size() < 2) continue;
    RankingCheck r;
    r.concurrency = concurrency;
    auto order = [&](bool measured) {
      std::vector<std::tuple<double, double, std::string>> sorted = rows;
      std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& x, const auto& y) {
        return measured ? std::get<0>(x) > std::get<0>(y) : std::get<1>(x) > std::get<1>(y);
      });
      std::vector<std::string> labels;
      for (const auto& row : sorted) labels.push_back(std::get<2>(row));
      return labels;
    };
    r.measured = order(true);
    r.predicted = order(false);
    r.agrees = r.measured == r.predicted;
    c.ranking_agrees = c.ranking_agrees && r.agrees;
    c.rankings.push_back(std::move(r));
  }
  return c;
}

}  // namespace ppsearch::compare
