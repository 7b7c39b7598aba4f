#include "adaptive/policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "decide/rules.h"
#include "stats/stats.h"
#include "workload/workload.h"

namespace ppsearch::adaptive {
namespace {

// A standard normal from two 64-bit draws' worth of one: its quantile at a
// uniform in (0, 1). Deterministic on every platform, unlike
// std::normal_distribution.
double StandardNormal(workload::SplitMix64& rng) {
  const double u = (static_cast<double>(rng.Next() >> 11) + 0.5) * 0x1.0p-53;
  return stats::NormalQuantile(u);
}

// The joint draws and what each one ranks first and second.
struct Draws {
  int n = 0, candidates = 0, points = 0;
  std::vector<double> value;  // [draw][candidate][point]
  std::vector<double> score;  // [draw][candidate]; 0 for excluded candidates
  std::vector<int> first, second;
  // Draws where a value overflowed to infinity, underflowed to 0 or is not a
  // number, or a score is not finite: such a draw ranks nothing.
  int degenerate = 0;

  double& Value(int s, int c, int p) {
    return value[(static_cast<size_t>(s) * candidates + c) * points + p];
  }
  double Value(int s, int c, int p) const {
    return value[(static_cast<size_t>(s) * candidates + c) * points + p];
  }
  double Score(int s, int c) const { return score[static_cast<size_t>(s) * candidates + c]; }
};

// The member a draw takes its parameters from, at one point.
double MemberValue(const PointState& p, int draw) {
  if (p.members.empty()) return p.central;
  return p.members[static_cast<size_t>(draw) % p.members.size()];
}

// log(measured / member) averaged over a layout's measured points: how far
// this member misses the layout where it was measured.
double MeasuredMiss(const CandidateState& c, int draw) {
  double sum = 0;
  int n = 0;
  for (const PointState& p : c.points)
    if (p.measured && *p.measured > 0 && MemberValue(p, draw) > 0) {
      sum += std::log(*p.measured / MemberValue(p, draw));
      ++n;
    }
  return n > 0 ? sum / n : 0;
}

Draws MakeDraws(const Problem& pr) {
  Draws d;
  d.n = std::max(1, pr.draws);
  d.candidates = static_cast<int>(pr.candidates.size());
  d.points = static_cast<int>(pr.load_points.size());
  d.value.assign(static_cast<size_t>(d.n) * d.candidates * d.points, 0);
  workload::SplitMix64 rng(pr.seed);
  std::vector<char> broken(d.n, 0);
  for (int s = 0; s < d.n; ++s)
    for (int c = 0; c < d.candidates; ++c) {
      const CandidateState& cand = pr.candidates[c];
      const double z = StandardNormal(rng);  // the layout's discrepancy in this draw
      const bool anchored = cand.AnyMeasured();
      const double miss = anchored ? MeasuredMiss(cand, s) : 0;
      for (int p = 0; p < d.points; ++p) {
        const PointState& ps = cand.points[p];
        const double noise = StandardNormal(rng);
        const double base = ps.measured ? *ps.measured : MemberValue(ps, s);
        double v;
        if (ps.measured)
          v = base * std::exp(ps.measured_sigma * noise);
        else if (anchored)
          v = base * std::exp(miss + pr.within_sigma * z);
        else
          v = base * std::exp(ps.sigma * z);
        d.Value(s, c, p) = v;
        if (!cand.excluded && (!std::isfinite(v) || (v <= 0 && base > 0))) broken[s] = 1;
      }
    }
  // Each draw's scores over the candidates that can qualify.
  d.score.assign(static_cast<size_t>(d.n) * d.candidates, 0);
  d.first.assign(d.n, -1);
  d.second.assign(d.n, -1);
  std::vector<int> eligible;
  for (int c = 0; c < d.candidates; ++c)
    if (!pr.candidates[c].excluded) eligible.push_back(c);
  std::vector<std::vector<double>> values(eligible.size(), std::vector<double>(d.points));
  for (int s = 0; s < d.n; ++s) {
    for (size_t i = 0; i < eligible.size(); ++i)
      for (int p = 0; p < d.points; ++p) values[i][p] = d.Value(s, eligible[i], p);
    const std::vector<double> scores = decide::RelativeScores(values, pr.lower_is_better);
    int first = -1, second = -1;
    for (size_t i = 0; i < eligible.size(); ++i) {
      const int c = eligible[i];
      d.score[static_cast<size_t>(s) * d.candidates + c] = scores[i];
      if (first < 0 || scores[i] > d.Score(s, first)) {
        second = first;
        first = c;
      } else if (second < 0 || scores[i] > d.Score(s, second)) {
        second = c;
      }
    }
    d.first[s] = first;
    d.second[s] = second;
    for (double x : scores) broken[s] = broken[s] || !std::isfinite(x);
  }
  d.degenerate = static_cast<int>(std::count(broken.begin(), broken.end(), 1));
  return d;
}

// The assessment under draw weights `w` (summing to 1).
Assessment AssessWeighted(const Problem& pr, const Draws& d, const std::vector<double>& w) {
  Assessment a;
  const int nc = d.candidates;
  a.p_best.assign(nc, 0);
  a.p_top_two.assign(nc, 0);
  a.expected_score.assign(nc, 0);
  for (const auto& c : pr.candidates) a.eligible += c.excluded ? 0 : 1;
  for (int s = 0; s < d.n; ++s) {
    for (int c = 0; c < nc; ++c) a.expected_score[c] += w[s] * d.Score(s, c);
    if (d.first[s] >= 0) {
      a.p_best[d.first[s]] += w[s];
      a.p_top_two[d.first[s]] += w[s];
    }
    if (d.second[s] >= 0) a.p_top_two[d.second[s]] += w[s];
  }
  for (int c = 0; c < nc; ++c) {
    if (pr.candidates[c].excluded) continue;
    if (a.primary < 0 || a.expected_score[c] > a.expected_score[a.primary]) {
      a.fallback = a.primary;
      a.primary = c;
    } else if (a.fallback < 0 || a.expected_score[c] > a.expected_score[a.fallback]) {
      a.fallback = c;
    }
  }
  auto unmeasured = [&](int c) { return c >= 0 && !pr.candidates[c].FullyMeasured(); };
  for (int s = 0; s < d.n; ++s) {
    if (d.first[s] != a.primary || d.second[s] != a.fallback) a.p_wrong += w[s];
    if (unmeasured(d.first[s]) || unmeasured(d.second[s])) a.p_change += w[s];
  }
  const bool measured = a.primary >= 0 && !unmeasured(a.primary) && !unmeasured(a.fallback);
  // Draws that overflow or degenerate cannot say the choice is settled: a
  // p_change of 0 from them would be certainty about nothing.
  a.degenerate_draws = d.degenerate;
  a.settled = measured && a.p_change < pr.stop_probability && d.degenerate == 0;
  return a;
}

// Weighted quantile of `xs` at q.
double WeightedQuantile(std::vector<std::pair<double, double>> xw, double q) {
  std::sort(xw.begin(), xw.end());
  double acc = 0;
  for (const auto& [x, w] : xw) {
    acc += w;
    if (acc >= q) return x;
  }
  return xw.empty() ? 0 : xw.back().first;
}

// The expected p_wrong after measuring point (c, p): for each of `outcomes`
// equally likely values the measurement could give (the belief's
// quantiles), the draws are reweighted by how well they agree with it and
// the choice is made again. The kernel is the measurement's noise widened
// by a fraction of the belief's own spread, so a few hundred draws stay
// enough to reweight (an exact likelihood would leave one draw standing).
double ExpectedPWrongAfter(const Problem& pr, const Draws& d, int c, int p) {
  std::vector<std::pair<double, double>> xw(d.n);
  double mean = 0;
  for (int s = 0; s < d.n; ++s) {
    xw[s] = {std::log(std::max(d.Value(s, c, p), 1e-300)), 1.0 / d.n};
    mean += xw[s].first / d.n;
  }
  double var = 0;
  for (const auto& [x, w] : xw) var += (x - mean) * (x - mean) / d.n;
  const double noise = pr.candidates[c].points[p].measured_sigma;
  const double h = std::sqrt(noise * noise + 0.09 * var);
  const int k_outcomes = std::max(1, pr.outcomes);
  double total = 0;
  std::vector<double> w(d.n);
  for (int k = 0; k < k_outcomes; ++k) {
    const double y = WeightedQuantile(xw, (k + 0.5) / k_outcomes);
    double sum = 0;
    for (int s = 0; s < d.n; ++s) {
      const double r = (xw[s].first - y) / h;
      w[s] = std::exp(-0.5 * r * r);
      sum += w[s];
    }
    for (double& x : w) x /= sum;
    total += AssessWeighted(pr, d, w).p_wrong;
  }
  return total / k_outcomes;
}

std::vector<double> Uniform(int n) { return std::vector<double>(n, 1.0 / n); }

}  // namespace

bool CandidateState::FullyMeasured() const {
  return std::all_of(points.begin(), points.end(),
                     [](const PointState& p) { return p.measured.has_value(); });
}

bool CandidateState::AnyMeasured() const {
  return std::any_of(points.begin(), points.end(),
                     [](const PointState& p) { return p.measured.has_value(); });
}

Assessment Assess(const Problem& pr) {
  const Draws d = MakeDraws(pr);
  return AssessWeighted(pr, d, Uniform(d.n));
}

double PointCost(const Problem& pr, int candidate, int point, bool* server_start) {
  const CandidateState& c = pr.candidates[candidate];
  const int starts = pr.reuse_server ? (pr.running == c.id ? 0 : 1) : pr.repeats;
  if (server_start != nullptr) *server_start = starts > 0;
  const double wall = pr.repeats * c.points[point].sample_s + starts * pr.server_start_s;
  return c.gpus * wall / 3600;
}

double FullSweepGpuHours(const Problem& pr) {
  double total = 0;
  for (const CandidateState& c : pr.candidates) {
    const int starts = pr.reuse_server ? 1 : static_cast<int>(c.points.size()) * pr.repeats;
    double wall = starts * pr.server_start_s;
    for (const PointState& p : c.points) wall += pr.repeats * p.sample_s;
    total += c.gpus * wall / 3600;
  }
  return total;
}

std::optional<Choice> ChooseNext(const Problem& pr, const Assessment& now) {
  const Draws d = MakeDraws(pr);
  std::optional<Choice> best;
  double best_rate = -1;
  for (int c = 0; c < static_cast<int>(pr.candidates.size()); ++c) {
    const CandidateState& cand = pr.candidates[c];
    if (cand.excluded) continue;
    for (int p = 0; p < static_cast<int>(pr.load_points.size()); ++p) {
      if (cand.points[p].measured) continue;
      Choice ch;
      ch.candidate = c;
      ch.point = p;
      ch.cost_gpu_hours = PointCost(pr, c, p, &ch.server_start);
      ch.p_wrong_expected_after = ExpectedPWrongAfter(pr, d, c, p);
      ch.value_of_information = std::max(0.0, now.p_wrong - ch.p_wrong_expected_after);
      // Points no measurement would inform are still needed when they
      // belong to the estimated primary or fallback (the stop rule asks for
      // both measured everywhere): they rank by their chance of being in
      // the top two, scaled far below any informative point.
      const bool required = c == now.primary || c == now.fallback;
      const double floor = 1e-6 * (now.p_top_two[c] + (required ? 1.0 : 0.0));
      const double rate =
          std::max(ch.value_of_information, floor) / std::max(ch.cost_gpu_hours, 1e-9);
      if (rate > best_rate) {
        best_rate = rate;
        best = ch;
      }
    }
  }
  if (!best) return best;
  const CandidateState& cand = pr.candidates[best->candidate];
  const std::string point = fmt::format("{} at C={}", cand.label, pr.load_points[best->point]);
  if (best->value_of_information > 1e-6)
    best->reason = fmt::format(
        "{}: expected to lower the probability of a wrong choice from {:.1f}% to {:.1f}% for "
        "{:.2f} GPU-hours{}",
        point, now.p_wrong * 100, best->p_wrong_expected_after * 100, best->cost_gpu_hours,
        best->server_start ? " (a server start included)" : " (its server is up)");
  else if (best->candidate == now.primary || best->candidate == now.fallback)
    best->reason = fmt::format(
        "{}: no measurement is expected to change the choice, but the {} must be measured at "
        "every load point before the run can stop",
        point, best->candidate == now.primary ? "estimated primary" : "estimated fallback");
  else
    best->reason = fmt::format(
        "{}: no single measurement is expected to change the choice, and this layout is the "
        "likeliest of those not measured to enter the top two ({:.1f}%)",
        point, now.p_top_two[best->candidate] * 100);
  return best;
}

}  // namespace ppsearch::adaptive
