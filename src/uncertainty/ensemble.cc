#include "uncertainty/ensemble.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "stats/stats.h"
#include "util/matrix.h"
#include "workload/workload.h"

namespace ppsearch::uncertainty {
namespace {

// Fisher-Yates over 0..n-1, with the one seeded generator (workload's
// SplitMix64: draws defined by its arithmetic alone, the same with every
// standard library; the modulo bias is below 2^-50 for a few hundred members).
std::vector<int> Shuffled(int n, workload::SplitMix64& rng) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  for (int i = n - 1; i > 0; --i) std::swap(v[i], v[rng.UniformInt(0, i)]);
  return v;
}

// Iman and Conover's restricted pairing: the strata of a random pairing are
// re-paired so that the columns' rank correlations are close to zero. With
// 32 members a random pairing leaves chance correlations of 0.2 or more
// between parameters, and the sensitivity table would credit a parameter for
// its chance partner's effect. Each parameter keeps its strata (the Latin
// hypercube stays one); only which member gets which changes. Needs more
// members than parameters; otherwise the random pairing stays.
void RestrictPairing(std::array<std::vector<int>, cost::kParamCount>& strata, int members) {
  constexpr int n = cost::kParamCount;
  if (members <= n) return;
  std::array<std::vector<double>, n> z;
  for (int d = 0; d < n; ++d)
    for (int i = 0; i < members; ++i)
      z[d].push_back(stats::NormalQuantile((strata[d][i] + 0.5) / members));
  std::vector<double> corr(n * n);
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) corr[a * n + b] = a == b ? 1.0 : stats::Correlation(z[a], z[b]);
  const std::optional<std::vector<double>> q = Cholesky(corr, n);
  if (!q) return;
  // Each member's scores decorrelated: solve Q y = z (Q lower-triangular).
  std::array<std::vector<double>, n> y;
  for (int d = 0; d < n; ++d) y[d].resize(members);
  for (int i = 0; i < members; ++i)
    for (int d = 0; d < n; ++d) {
      double v = z[d][i];
      for (int k = 0; k < d; ++k) v -= (*q)[d * n + k] * y[k][i];
      y[d][i] = v / (*q)[d * n + d];
    }
  // Member i takes the stratum of its decorrelated score's rank.
  for (int d = 0; d < n; ++d) {
    std::vector<int> order(members);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return y[d][a] < y[d][b]; });
    for (int rank = 0; rank < members; ++rank) strata[d][order[rank]] = rank;
  }
}

}  // namespace

std::vector<double> CorrelationFactor(const std::vector<double>& cov, int n) {
  std::vector<int> active;
  double largest = 0;
  for (int d = 0; d < n; ++d)
    if (cov[d * n + d] > 0) {
      active.push_back(d);
      largest = std::max(largest, cov[d * n + d]);
    }
  const int m = static_cast<int>(active.size());
  std::vector<double> sub(static_cast<size_t>(m) * m);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) sub[i * m + j] = cov[active[i] * n + active[j]];
  std::optional<std::vector<double>> l = Cholesky(sub, m);
  // A semi-definite posterior (two parameters only the data's sum of which
  // is known): a little jitter on the diagonal, growing, at most 1e-6.
  for (double jitter = 1e-12; !l && jitter <= 1e-6; jitter *= 10) {
    std::vector<double> j = sub;
    for (int i = 0; i < m; ++i) j[i * m + i] += jitter * largest;
    l = Cholesky(j, m);
  }
  std::vector<double> out(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      out[active[i] * n + active[j]] =
          l ? (*l)[i * m + j] : (i == j ? std::sqrt(sub[i * m + i]) : 0.0);
  return out;
}

Ensemble DrawEnsemble(const cost::Calibration& central, const hardware::HardwareProfile& hw,
                      const EnsembleOptions& options) {
  constexpr int n = cost::kParamCount;
  Ensemble e;
  const int members = std::max(options.members, 0);
  const std::vector<double> cov = cost::LogCovariance(central, hw);
  const std::vector<double> l = CorrelationFactor(cov, n);
  for (int d = 0; d < n; ++d) e.varies[d] = cov[d * n + d] > 0;

  workload::SplitMix64 rng(options.seed);
  // strata[d][i]: which of the `members` equal-probability strata member i
  // takes on parameter d; the draw is the stratum's middle quantile (before
  // the covariance correlates them).
  std::array<std::vector<int>, n> strata;
  for (int d = 0; d < n; ++d) strata[d] = Shuffled(members, rng);
  // Each pass leaves smaller chance correlations (ranks are coarse at 32 members).
  for (int pass = 0; pass < 4; ++pass) RestrictPairing(strata, members);

  std::array<double, n> centre{};
  for (const auto& info : cost::AllParams()) {
    const int d = cost::Index(info.param);
    // A value at zero (a jitter fitted onto its bound) is spread from 1% of
    // its prior's top, as PriorLogSigma does.
    const double floor = cost::Prior(info.param, hw).hi * 0.01;
    centre[d] = std::log(std::max(central.value[d], floor));
  }
  for (int i = 0; i < members; ++i) {
    std::array<double, n> z{};
    for (int d = 0; d < n; ++d)
      z[d] = stats::NormalQuantile((strata[d][i] + 0.5) / static_cast<double>(members));
    cost::Calibration c = central;
    std::array<double, n> logs{};
    for (const auto& info : cost::AllParams()) {
      const int d = cost::Index(info.param);
      if (!e.varies[d]) {
        logs[d] = std::log(std::max(central.value[d], 1e-300));
        continue;
      }
      double x = centre[d];
      for (int k = 0; k <= d; ++k) x += l[d * n + k] * z[k];
      const cost::Range b = cost::Bounds(info.param, hw);
      const double v = std::clamp(std::exp(x), b.lo, b.hi);
      c.value[d] = v;
      logs[d] = std::log(std::max(v, 1e-300));
    }
    c.source = central.source + " (ensemble member " + std::to_string(i + 1) + ")";
    e.members.push_back(std::move(c));
    e.log_values.push_back(logs);
  }
  return e;
}

}  // namespace ppsearch::uncertainty
