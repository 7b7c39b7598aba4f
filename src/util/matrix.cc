#include "util/matrix.h"

#include <cmath>

namespace ppsearch {

std::optional<std::vector<double>> Cholesky(const std::vector<double>& a, int n) {
  std::vector<double> l(static_cast<size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      double sum = a[i * n + j];
      for (int k = 0; k < j; ++k) sum -= l[i * n + k] * l[j * n + k];
      if (i == j) {
        if (!(sum > 0)) return std::nullopt;
        l[i * n + i] = std::sqrt(sum);
      } else {
        l[i * n + j] = sum / l[j * n + j];
      }
    }
  }
  return l;
}

std::optional<std::vector<double>> SolveSpd(const std::vector<double>& a, int n,
                                            const std::vector<double>& b) {
  auto l = Cholesky(a, n);
  if (!l) return std::nullopt;
  std::vector<double> y(n), x(n);
  for (int i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= (*l)[i * n + k] * y[k];
    y[i] = s / (*l)[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {  // L^T x = y
    double s = y[i];
    for (int k = i + 1; k < n; ++k) s -= (*l)[k * n + i] * x[k];
    x[i] = s / (*l)[i * n + i];
  }
  return x;
}

std::optional<std::vector<double>> InverseSpd(const std::vector<double>& a, int n) {
  std::vector<double> inv(static_cast<size_t>(n) * n);
  for (int c = 0; c < n; ++c) {
    std::vector<double> e(n, 0.0);
    e[c] = 1;
    auto x = SolveSpd(a, n, e);
    if (!x) return std::nullopt;
    for (int r = 0; r < n; ++r) inv[r * n + c] = (*x)[r];
  }
  return inv;
}

}  // namespace ppsearch
