#include "util/round.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace ppsearch {
namespace {

TEST(RoundToInt64, AgreesWithLlroundOnHalvesNeighboursAndLargeValues) {
  const double below_half = std::nextafter(0.5, 0.0);
  for (double x : {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, below_half, -below_half,
                   std::nextafter(0.5, 1.0), 4503599627370495.5, 4503599627370496.0,
                   9007199254740993.0, -9007199254740993.0, 4.6e18, -4.6e18, 123456.49999999999,
                   std::numeric_limits<double>::denorm_min()})
    EXPECT_EQ(RoundToInt64(x), std::llround(x)) << x;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> ns(-1e12, 1e12);
  for (int i = 0; i < 100000; ++i) {
    const double x = ns(rng);
    ASSERT_EQ(RoundToInt64(x), std::llround(x)) << x;
    const double half = std::floor(x) + 0.5;  // exact halves, both signs
    ASSERT_EQ(RoundToInt64(half), std::llround(half)) << half;
  }
}

}  // namespace
}  // namespace ppsearch
