#include "backtest/evaluate.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <utility>

namespace ppsearch::backtest {
namespace {

// Implied values closer than this (in log) are a tie: published ratios carry
// two or three digits.
constexpr double kTieLog = 1e-6;

const ConfigurationPrediction* FindPrediction(const std::vector<ConfigurationPrediction>& ps,
                                              const std::string& name) {
  for (const auto& p : ps)
    if (p.name == name) return &p;
  return nullptr;
}

// The 10th-90th percentile over the members of f(member index).
template <typename F>
uncertainty::Interval MemberInterval(size_t members, F f) {
  std::vector<double> values;
  for (size_t m = 0; m < members; ++m) values.push_back(f(m));
  return uncertainty::IntervalOf(values);
}

}  // namespace

double PerNodeWhileBusy(double tokens, double busy_share, int64_t window_ns, int pool_gpus,
                        int gpus_per_node) {
  const double busy_s = static_cast<double>(window_ns) / 1e9 * busy_share;
  const double nodes = static_cast<double>(pool_gpus) / std::max(gpus_per_node, 1);
  return busy_s > 0 && nodes > 0 ? tokens / busy_s / nodes : 0;
}

FigureResult MakeFigure(std::string label, std::string unit, double reference, double predicted,
                        double tolerance) {
  FigureResult f;
  f.label = std::move(label);
  f.unit = std::move(unit);
  f.reference = reference;
  f.predicted = predicted;
  f.error = reference != 0 ? predicted / reference - 1 : 0;
  f.tolerance = tolerance;
  f.within = reference != 0 && std::isfinite(f.error) && std::fabs(f.error) <= tolerance;
  return f;
}

std::vector<FigureResult> ReferenceFigures(
    const Case& c, const std::vector<ConfigurationPrediction>& predictions) {
  std::vector<FigureResult> out;
  for (const Reference& r : c.references) {
    const ConfigurationPrediction* a = FindPrediction(predictions, r.a);
    const ConfigurationPrediction* b = FindPrediction(predictions, r.b);
    if (r.kind == FigureKind::kTpsRatio && a != nullptr && b != nullptr) {
      const double predicted = b->input_tps > 0 ? a->input_tps / b->input_tps : 0;
      out.push_back(
          MakeFigure("input TPS " + r.a + " / " + r.b, "x", r.value, predicted, c.tolerance));
      // The same member in both: a ratio cancels what moves both alike.
      const size_t n = std::min(a->member_input_tps.size(), b->member_input_tps.size());
      out.back().parameter = MemberInterval(n, [&](size_t m) {
        return b->member_input_tps[m] > 0 ? a->member_input_tps[m] / b->member_input_tps[m] : 0;
      });
      out.back().has_interval = n > 0;
      // A ratio's discrepancy is that of b's prediction carried to a's.
      out.back().extrapolation = uncertainty::Distance(a->site, b->site);
    } else if (r.kind == FigureKind::kTtftP50 && a != nullptr) {
      out.push_back(MakeFigure("TTFT p50 " + r.a, "s", r.value, a->ttft_p50_s, c.tolerance));
      out.back().parameter = MemberInterval(a->member_ttft_p50_s.size(),
                                            [&](size_t m) { return a->member_ttft_p50_s[m]; });
      out.back().has_interval = !a->member_ttft_p50_s.empty();
      out.back().extrapolation = a->from_calibration;
    } else if (r.kind == FigureKind::kTpotMs && a != nullptr) {
      out.push_back(MakeFigure("TPOT p50 " + r.a, "ms", r.value, a->tpot_ms, c.tolerance));
      out.back().parameter =
          MemberInterval(a->member_tpot_ms.size(), [&](size_t m) { return a->member_tpot_ms[m]; });
      out.back().has_interval = !a->member_tpot_ms.empty();
      out.back().extrapolation = a->from_calibration;
    } else if ((r.kind == FigureKind::kPrefillTpsPerNode ||
                r.kind == FigureKind::kDecodeTpsPerNode) &&
               a != nullptr) {
      const bool prefill = r.kind == FigureKind::kPrefillTpsPerNode;
      out.push_back(MakeFigure(
          (prefill ? "prefill input TPS/node " : "decode output TPS/node ") + r.a, "tok/s", r.value,
          prefill ? a->prefill_tps_per_node : a->decode_tps_per_node, c.tolerance));
    } else {
      continue;
    }
    out.back().deployment = a->deployment;
    const Configuration* ca = c.Find(r.a);
    const Configuration* cb = r.b.empty() ? nullptr : c.Find(r.b);
    out.back().held_out = (ca != nullptr && !ca->calibrate) || (cb != nullptr && !cb->calibrate);
    out.back().what = r.what;
    out.back().known_miss = r.miss;
  }
  return out;
}

std::vector<FigureResult> ResidualFigures(const std::vector<calibrate::PointResidual>& residuals,
                                          const std::vector<std::string>& names, double tolerance) {
  std::vector<FigureResult> out;
  for (size_t i = 0; i < residuals.size(); ++i) {
    const calibrate::PointResidual& r = residuals[i];
    const std::string name = i < names.size() ? names[i] : r.layout.Label();
    const std::string at = " (fit, c=" + std::to_string(r.concurrency) + ")";
    out.push_back(
        MakeFigure(name + " input TPS" + at, "tok/s", r.measured_tps, r.predicted_tps, tolerance));
    if (r.measured_ttft_p50_s > 0)
      out.push_back(MakeFigure(name + " TTFT p50" + at, "s", r.measured_ttft_p50_s,
                               r.predicted_ttft_p50_s, tolerance));
  }
  return out;
}

std::vector<SignResult> ImpliedSigns(const Case& c,
                                     const std::vector<ConfigurationPrediction>& predictions) {
  std::vector<SignResult> out;
  std::set<std::pair<std::string, std::string>> seen;  // (metric + better, worse) pairs
  auto add = [&](const std::string& better, const std::string& worse, const std::string& metric,
                 const std::string& implied_by) {
    // A pair already implied (either way: references that disagree) is kept once.
    if (seen.count({metric + "|" + worse, better}) != 0) return;
    if (!seen.insert({metric + "|" + better, worse}).second) return;
    const ConfigurationPrediction* hi = FindPrediction(predictions, better);
    const ConfigurationPrediction* lo = FindPrediction(predictions, worse);
    if (hi == nullptr || lo == nullptr) return;
    SignResult s;
    s.better = better;
    s.worse = worse;
    s.metric = metric;
    s.implied_by = implied_by;
    s.right =
        metric == "TTFT p50" ? hi->ttft_p50_s < lo->ttft_p50_s : hi->input_tps > lo->input_tps;
    out.push_back(s);
  };

  // Ratios as edges: log tps(a) - log tps(b) = log value. Each connected
  // group gets log values from a breadth-first walk; any two members compare.
  std::map<std::string, std::vector<std::pair<std::string, double>>> edges;
  std::map<std::string, std::vector<std::string>> edge_refs;
  for (const Reference& r : c.references) {
    if (r.kind != FigureKind::kTpsRatio) continue;
    edges[r.a].push_back({r.b, -std::log(r.value)});
    edges[r.b].push_back({r.a, std::log(r.value)});
  }
  std::map<std::string, double> log_tps;
  std::map<std::string, int> group;
  int groups = 0;
  for (const Configuration& start : c.configurations) {
    if (edges.count(start.name) == 0 || group.count(start.name) != 0) continue;
    std::deque<std::string> queue = {start.name};
    log_tps[start.name] = 0;
    group[start.name] = groups;
    while (!queue.empty()) {
      const std::string at = queue.front();
      queue.pop_front();
      for (const auto& [next, delta] : edges[at]) {
        if (group.count(next) != 0) continue;
        group[next] = groups;
        log_tps[next] = log_tps[at] + delta;
        queue.push_back(next);
      }
    }
    ++groups;
  }
  for (size_t i = 0; i < c.configurations.size(); ++i)
    for (size_t j = i + 1; j < c.configurations.size(); ++j) {
      const std::string& a = c.configurations[i].name;
      const std::string& b = c.configurations[j].name;
      if (group.count(a) == 0 || group.count(b) == 0 || group[a] != group[b]) continue;
      const double d = log_tps[a] - log_tps[b];
      if (std::fabs(d) < kTieLog) continue;
      add(d > 0 ? a : b, d > 0 ? b : a, "input TPS", "ratios");
    }
  for (const Reference& r : c.references)
    if (r.kind == FigureKind::kBeats) add(r.a, r.b, "input TPS", "beats at " + r.origin.Position());

  std::vector<const Reference*> ttft;
  // A TTFT the case states the model misses, with its reason, orders
  // nothing: each sign against it would count that one miss again.
  for (const Reference& r : c.references)
    if (r.kind == FigureKind::kTtftP50 && r.miss.empty()) ttft.push_back(&r);
  for (size_t i = 0; i < ttft.size(); ++i)
    for (size_t j = i + 1; j < ttft.size(); ++j) {
      const Reference& x = *ttft[i];
      const Reference& y = *ttft[j];
      if (x.a == y.a || std::fabs(std::log(x.value / y.value)) < kTieLog) continue;
      add(x.value < y.value ? x.a : y.a, x.value < y.value ? y.a : x.a, "TTFT p50",
          "TTFT references");
    }
  return out;
}

}  // namespace ppsearch::backtest
