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

namespace {

// The spread of a sample's Poisson sends, as a share: 3 / sqrt(N), at most
// half.
double SendsSpread(double requests) { return std::min(3 / std::sqrt(requests), 0.5); }

}  // namespace

double KeepingUpFloorRps(double rate, double requests, double e2e_p50_s) {
  if (!(requests > 0)) return 0;
  return (1 - SendsSpread(requests)) * KeepingUpRps(rate, requests, e2e_p50_s);
}

double KeepingUpPace(double requests) { return requests > 0 ? 1 - SendsSpread(requests) : 0; }

double CapRps(int cap, double e2e_p50_s) {
  if (cap <= 0 || !(e2e_p50_s > 0)) return INFINITY;
  return cap / e2e_p50_s;
}

bool FillsTheCap(double rate, int cap, double requests, double e2e_p50_s) {
  return requests > cap && rate > CapRps(cap, e2e_p50_s);
}

Behind HowBehind(const OpenLoopSample& s) {
  if (FillsTheCap(s.rate, s.cap, s.requests, s.e2e_p50_s)) return Behind::kFillsTheCap;
  if (s.request_rps < KeepingUpFloorRps(s.rate, s.requests, s.e2e_p50_s))
    return Behind::kCompletedTooFew;
  if (s.first_token_pace > 0 && s.first_token_pace < KeepingUpPace(s.requests))
    return Behind::kQueuedInTheServer;
  return Behind::kNo;
}

bool KeepsUp(const OpenLoopSample& s) {
  if (!(s.rate > 0) || !(s.requests > 0)) return false;
  return HowBehind(s) == Behind::kNo;
}

double BehindBy(const OpenLoopSample& s) {
  const auto over = [](double wanted, double got) { return got > 0 ? wanted / got - 1 : INFINITY; };
  switch (HowBehind(s)) {
    case Behind::kFillsTheCap:
      return over(s.rate, CapRps(s.cap, s.e2e_p50_s));
    case Behind::kCompletedTooFew:
      return over(KeepingUpFloorRps(s.rate, s.requests, s.e2e_p50_s), s.request_rps);
    case Behind::kQueuedInTheServer:
      return over(KeepingUpPace(s.requests), s.first_token_pace);
    case Behind::kNo:
      break;
  }
  return 0;
}

}  // namespace ppsearch::decide
