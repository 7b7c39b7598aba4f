// The calibration's prior spreads and the covariance it propagates.

#include "cost/calibration.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsearch::cost {
namespace {

TEST(PriorWidthsOutside, CountsWholePriorWidthsBeyondTheNearerEdge) {
  // intra_bw_scale's prior is 0.7-1.1 (width 0.4) on any profile whose
  // bound reaches past 1.1 and whose table states no hosts' range.
  hardware::HardwareProfile hw;
  hw.intra_allreduce = {{8, 24.7, 24.2}};
  hw.p2p_gbps = 50;
  EXPECT_DOUBLE_EQ(PriorWidthsOutside(Param::kIntraLink, 0.9, hw), 0);
  EXPECT_DOUBLE_EQ(PriorWidthsOutside(Param::kIntraLink, 1.1, hw), 0);
  // (1.646 - 1.1) / 0.4 = 1.365: the PP1 baseline's value before the
  // latent all-reduce was counted.
  EXPECT_NEAR(PriorWidthsOutside(Param::kIntraLink, 1.646, hw), 1.365, 1e-9);
  // (0.7 - 0.5) / 0.4 = 0.5 below the lower edge.
  EXPECT_NEAR(PriorWidthsOutside(Param::kIntraLink, 0.5, hw), 0.5, 1e-9);
}

// A borrowed all-reduce table states the busbw other hosts of the board
// measured; intra_bw_scale's prior widens to reach each entry's range (and
// never narrows below the default), clipped to the link's bound.
TEST(CalibrationPrior, IntraLinkPriorReachesTheHostsRangeATableStates) {
  hardware::HardwareProfile hw;
  hw.p2p_gbps = 50;
  hw.intra_allreduce = {{4, 30.4, 12.9}, {8, 30.2, 24.2}};
  EXPECT_DOUBLE_EQ(Prior(Param::kIntraLink, hw).lo, 0.7);
  EXPECT_DOUBLE_EQ(Prior(Param::kIntraLink, hw).hi, 1.1);
  hw.intra_allreduce[0].busbw_lo_gbps = 26.4, hw.intra_allreduce[0].busbw_hi_gbps = 35.0;
  hw.intra_allreduce[1].busbw_lo_gbps = 22.2, hw.intra_allreduce[1].busbw_hi_gbps = 41.1;
  // Highest: 41.1 / 30.2 (the 8-GPU hosts); lowest: the default 0.7, below
  // 22.2 / 30.2 = 0.735.
  EXPECT_DOUBLE_EQ(Prior(Param::kIntraLink, hw).hi, 41.1 / 30.2);
  EXPECT_DOUBLE_EQ(Prior(Param::kIntraLink, hw).lo, 0.7);
  EXPECT_NEAR(PriorLogSigma(Param::kIntraLink, hw), std::log(41.1 / 30.2 / 0.7) / 4, 1e-12);
  // A host far below the table's figure lowers the bottom: 15 / 30.4.
  hw.intra_allreduce[0].busbw_lo_gbps = 15;
  EXPECT_DOUBLE_EQ(Prior(Param::kIntraLink, hw).lo, 15 / 30.4);
  // A range past the line rate stops at the bound: 50 / 30.2.
  hw.intra_allreduce[1].busbw_hi_gbps = 80;
  EXPECT_DOUBLE_EQ(Prior(Param::kIntraLink, hw).hi, 50 / 30.2);
  // Other parameters keep theirs.
  EXPECT_DOUBLE_EQ(Prior(Param::kDenseGemm, hw).hi, 1.0);
}

TEST(CalibrationPrior, CovarianceDefaultsToThePriorsDiagonal) {
  hardware::HardwareProfile hw;
  Calibration c;
  const auto cov = LogCovariance(c, hw);
  ASSERT_EQ(cov.size(), static_cast<size_t>(kParamCount * kParamCount));
  // dense_gemm_eff's prior [0.70, 1.00] spans +-2 sigma in log space.
  const int d = Index(Param::kDenseGemm);
  EXPECT_NEAR(std::sqrt(cov[d * kParamCount + d]), std::log(1.0 / 0.7) / 4, 1e-12);
  EXPECT_DOUBLE_EQ(cov[d * kParamCount + d + 1], 0.0);
}

}  // namespace
}  // namespace ppsearch::cost
