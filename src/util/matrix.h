#pragma once
// Small dense symmetric positive-definite algebra for the calibration fit and
// the uncertainty propagation (a dozen parameters: no library needed).
// Matrices are row-major n x n vectors.

#include <optional>
#include <vector>

namespace ppsearch {

// Lower-triangular L with L L^T = a; nullopt when a is not positive definite.
std::optional<std::vector<double>> Cholesky(const std::vector<double>& a, int n);

// x with a x = b for SPD a; nullopt when a is not positive definite.
std::optional<std::vector<double>> SolveSpd(const std::vector<double>& a, int n,
                                            const std::vector<double>& b);

// a^-1 for SPD a; nullopt when a is not positive definite.
std::optional<std::vector<double>> InverseSpd(const std::vector<double>& a, int n);

}  // namespace ppsearch
