#include "decide/rules.h"

#include <algorithm>
#include <cmath>

namespace ppsearch::decide {

std::vector<double> RelativeScores(const std::vector<std::vector<double>>& values,
                                   bool lower_is_better) {
  std::vector<double> scores(values.size(), 0.0);
  const size_t levels = values.empty() ? 0 : values.front().size();
  for (size_t l = 0; l < values.size(); ++l) {
    double log_sum = 0;
    int n = 0;
    for (size_t c = 0; c < levels; ++c) {
      double best = 0;
      for (const std::vector<double>& other : values) {
        const double value = other[c];
        if (best == 0 || (lower_is_better ? value < best : value > best)) best = value;
      }
      const double value = values[l][c];
      if (value <= 0 || best <= 0) continue;
      log_sum += std::log(lower_is_better ? best / value : value / best);
      ++n;
    }
    scores[l] = n > 0 ? std::exp(log_sum / n) : 0;
  }
  return scores;
}

std::vector<bool> ParetoOptimal(const std::vector<std::pair<double, double>>& points) {
  std::vector<bool> optimal(points.size(), true);
  for (size_t i = 0; i < points.size(); ++i)
    for (const auto& q : points) {
      const auto& p = points[i];
      const bool no_worse = q.first >= p.first && q.second <= p.second;
      if (no_worse && (q.first > p.first || q.second < p.second)) {
        optimal[i] = false;
        break;
      }
    }
  return optimal;
}

double KeepingUpRps(double rate, double requests, double e2e_p50_s) {
  if (!(rate > 0) || !(requests > 0)) return 0;
  return requests / (requests / rate + std::max(e2e_p50_s, 0.0));
}

double KeepingUpFloorRps(double rate, double requests, double e2e_p50_s) {
  if (!(requests > 0)) return 0;
  const double margin = std::min(3 / std::sqrt(requests), 0.5);
  return (1 - margin) * KeepingUpRps(rate, requests, e2e_p50_s);
}

double CapRps(int cap, double e2e_p50_s) {
  if (cap <= 0 || !(e2e_p50_s > 0)) return INFINITY;
  return cap / e2e_p50_s;
}

bool FillsTheCap(double rate, int cap, double requests, double e2e_p50_s) {
  return requests > cap && rate > CapRps(cap, e2e_p50_s);
}

bool KeepsUp(double rate, int cap, double requests, double request_rps, double e2e_p50_s) {
  if (!(rate > 0) || !(requests > 0)) return false;
  return request_rps >= KeepingUpFloorRps(rate, requests, e2e_p50_s) &&
         !FillsTheCap(rate, cap, requests, e2e_p50_s);
}

}  // namespace ppsearch::decide
