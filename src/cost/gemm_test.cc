// The GEMM roofline against hand-worked numbers: tile, wave and depth
// efficiencies, FLOPs, bytes, and which side of the roofline wins.

#include "cost/gemm.h"

#include <gtest/gtest.h>

namespace ppsearch::cost {
namespace {

// Kimi K3's routed-expert gate_up at EP4 / MoE-TP8 for an 8192-token chunk:
// 8192 x top-16 / 896 experts = 146 rows per expert, 2 x 3072 / MoE-TP 8 = 768
// outputs, latent width k = 3584, 896 / EP 4 = 224 local experts.
GemmShape ExpertShape() {
  GemmShape s;
  s.m = 146;
  s.n = 768;
  s.k = 3584;
  s.groups = 224;
  s.weight_bytes_per_param = 17.0 / 32.0;  // MXFP4 with its E8M0 scales
  return s;
}

TEST(EstimateEfficiency, GroupedExpertGemmOn156Sms) {
  // tiles per group = ceil(146/128) * ceil(768/128) = 2 * 6 = 12
  // tile  = 146 * 768 / (12 * 128 * 128) = 112128 / 196608 = 0.5703125
  // tiles = 12 * 224 = 2688; waves = ceil(2688 / 156) = 18 (17 * 156 = 2652)
  // wave  = 2688 / (18 * 156) = 2688 / 2808 = 0.957264957...
  // depth = 3584 / (3584 + 128) = 28 / 29 = 0.965517241...
  // total = 0.5703125 * 0.957264957 * 0.965517241 = 0.527114648
  GemmEfficiency e = EstimateEfficiency(ExpertShape(), 156);
  EXPECT_DOUBLE_EQ(e.tile, 0.5703125);
  EXPECT_DOUBLE_EQ(e.wave, 2688.0 / 2808.0);
  EXPECT_DOUBLE_EQ(e.depth, 28.0 / 29.0);
  EXPECT_NEAR(e.total(), 0.527114648, 1e-9);
}

TEST(EstimateEfficiency, ExactTilesAndFullWavesLoseOnlyDepth) {
  // 256 x 512 -> 2 * 4 = 8 tiles per group, 13 groups = 104 tiles on 104 SMs:
  // tile = 1, wave = 104 / (1 * 104) = 1, depth = 896 / 1024 = 0.875.
  GemmShape s{.m = 256, .n = 512, .k = 896, .groups = 13};
  GemmEfficiency e = EstimateEfficiency(s, 104);
  EXPECT_DOUBLE_EQ(e.tile, 1.0);
  EXPECT_DOUBLE_EQ(e.wave, 1.0);
  EXPECT_DOUBLE_EQ(e.depth, 0.875);
  EXPECT_DOUBLE_EQ(e.total(), 0.875);
}

TEST(EstimateEfficiency, OneTileMoreThanTheSmsCostsAWholeWave) {
  // 129 x 128 -> 2 tiles, 100 groups = 200 tiles on 199 SMs: 2 waves,
  // wave = 200 / 398; tile = 129 * 128 / (2 * 16384) = 0.50390625.
  GemmShape s{.m = 129, .n = 128, .k = 128, .groups = 100};
  GemmEfficiency e = EstimateEfficiency(s, 199);
  EXPECT_DOUBLE_EQ(e.tile, 0.50390625);
  EXPECT_DOUBLE_EQ(e.wave, 200.0 / 398.0);
  EXPECT_DOUBLE_EQ(e.depth, 0.5);  // 128 / (128 + 128)
}

TEST(EstimateEfficiency, EmptyShapeIsNeutral) {
  for (GemmShape s :
       {GemmShape{.m = 0, .n = 1, .k = 1}, GemmShape{.m = 1, .n = 0, .k = 1},
        GemmShape{.m = 1, .n = 1, .k = 0}, GemmShape{.m = 1, .n = 1, .k = 1, .groups = 0}}) {
    GemmEfficiency e = EstimateEfficiency(s, 100);
    EXPECT_EQ(e.total(), 1.0);
  }
}

TEST(EstimateGemm, GroupedExpertGemmIsComputeBound) {
  // flops = 2 * 146 * 768 * 3584 * 224 = 180,036,304,896
  // bytes = 224 * (768 * 3584 * 17/32 + 2 * 146 * 3584 + 2 * 146 * 768)
  //       = 224 * (1,462,272 + 1,046,528 + 224,256) = 224 * 2,733,056 = 612,204,544
  // The best tile is 64 x 128 (per-tile 0.9): 3 x 6 = 18 tiles per group,
  // tile = 112128 / (18 * 8192) = 0.760417; 4032 tiles, 26 waves on 156 SMs,
  // wave = 4032 / 4056 = 0.994083; depth 28/29;
  // total = 0.760417 * 0.994083 * 0.965517 * 0.9 = 0.656866 (128 x 128 gives
  // 0.527115, 128 x 64 0.487960, 64 x 64 0.547388)
  // compute = 180,036,304,896 / (160e12 * 0.656866 * 0.5) = 3,426,047.3 ns
  // memory  = 612,204,544 / 1400e9 = 437,288.96 ns
  GemmTime t = EstimateGemm(ExpertShape(), 160, 1400, 156, 0.5);
  EXPECT_DOUBLE_EQ(t.flops, 180036304896.0);
  EXPECT_DOUBLE_EQ(t.bytes, 612204544.0);
  EXPECT_FALSE(t.memory_bound);
  EXPECT_EQ(t.ns, 3426047);
  EXPECT_NEAR(t.efficiency.total(), 0.6568659457, 1e-9);
  EXPECT_NEAR(BestEfficiency(ExpertShape(), 156).total(), 0.6568659457, 1e-9);
}

TEST(EstimateGemm, AProjectionInsideAWiderGemmTakesItsEfficiency) {
  // One KDA projection at TP32 for 8,192 tokens: m 8192, n 384, k 7168 on
  // 156 SMs at 143 TFLOPS; flops = 2 x 8192 x 384 x 7168 = 45,097,156,608.
  // Alone: 128 x 64 tiles (per-tile 0.9), 64 x 6 = 384 tiles, 3 waves of 156:
  //   0.9 x 384 / 468 x depth 7168 / 7296 = 0.725506 -> 434,682.4 ns.
  // As one of [q | k | v | g], n 1536: 128 x 128 tiles, 64 x 12 = 768, 5 waves:
  //   768 / 780 x 7168 / 7296 = 0.967341 -> 326,011.8 ns, 3/4 of the time.
  const GemmShape one{.m = 8192, .n = 384, .k = 7168};
  const GemmShape merged{.m = 8192, .n = 1536, .k = 7168};
  const GemmTime alone = EstimateGemm(one, 143, 1400, 156, 1.0);
  const GemmTime inside = EstimateGemm(one, 143, 1400, 156, 1.0, merged);
  EXPECT_EQ(alone.ns, 434682);
  EXPECT_EQ(inside.ns, 326012);
  EXPECT_DOUBLE_EQ(inside.flops, alone.flops);  // its own work and bytes
  EXPECT_DOUBLE_EQ(inside.bytes, alone.bytes);
  EXPECT_NEAR(inside.efficiency.total(), 0.9673414305, 1e-9);
}

TEST(EstimateGemm, ComputeBoundTimeIsInverseInScale) {
  // Same GEMM at scale 1: half of 3,426,047.3 ns = 1,713,023.7 ns.
  EXPECT_EQ(EstimateGemm(ExpertShape(), 160, 1400, 156, 1.0).ns, 1713024);
}

TEST(EstimateGemm, SingleRowIsMemoryBound) {
  // m = 1, n = 19968 = 156 x 128 (one full wave on 156 SMs), k = 4096, bf16.
  // M tile 16 (thin GEMM): tile = 1 / 16, wave = 156 / 156 = 1, depth = 4096 / 4224 = 32 / 33
  // flops = 2 * 19968 * 4096 = 163,577,856
  // bytes = 19968 * 4096 * 2 + 2 * 4096 + 2 * 19968 = 163,577,856 + 8,192 + 39,936
  //       = 163,625,984
  // compute = 163,577,856 / (1000e12 / 16 * 32/33) = 2,698.91 ns
  // memory  = 163,625,984 / 4000e9 = 40,906.50 ns -> memory bound, 40,906 ns
  // (llround of 40,906.496).
  GemmShape s{.m = 1, .n = 19968, .k = 4096};
  GemmTime t = EstimateGemm(s, 1000, 4000, 156, 1.0);
  EXPECT_DOUBLE_EQ(t.flops, 163577856.0);
  EXPECT_DOUBLE_EQ(t.bytes, 163625984.0);
  EXPECT_TRUE(t.memory_bound);
  EXPECT_EQ(t.ns, 40906);
  EXPECT_DOUBLE_EQ(t.efficiency.tile, 1.0 / 16.0);
}

TEST(EstimateGemm, MemoryBoundTimeIgnoresComputeScale) {
  GemmShape s{.m = 1, .n = 19968, .k = 4096};
  EXPECT_EQ(EstimateGemm(s, 1000, 4000, 156, 1.0).ns, EstimateGemm(s, 1000, 4000, 156, 1.5).ns);
}

TEST(EstimateGemm, MoreBandwidthOrComputeIsNeverSlower) {
  for (int64_t m : {1, 7, 128, 146, 1000, 8192}) {
    GemmShape s{.m = m, .n = 3072, .k = 7168, .groups = 4};
    int64_t base = EstimateGemm(s, 145, 1400, 156, 1.0).ns;
    EXPECT_LE(EstimateGemm(s, 290, 1400, 156, 1.0).ns, base) << m;
    EXPECT_LE(EstimateGemm(s, 145, 2800, 156, 1.0).ns, base) << m;
    EXPECT_LE(EstimateGemm(s, 145, 1400, 156, 2.0).ns, base) << m;
  }
}

TEST(ModelBf16Tflops, AMeasuredRateIsReproducedAtItsOwnShape) {
  hardware::HardwareProfile hw;
  hw.sm_count = 156;
  hw.bf16_tflops = 143.1;
  EXPECT_DOUBLE_EQ(ModelBf16Tflops(hw), 143.1);  // no shape: the model's rate as given

  // 10240^3 on 156 SMs: 6,400 tiles in 42 waves (41 x 156 = 6,396), wave
  // 6400 / 6552, depth 10240 / 10368: efficiency 0.964724...
  hw.bf16_measured_at = {10240, 10240, 10240};
  const double rate = ModelBf16Tflops(hw);
  EXPECT_NEAR(rate, 143.1 / (6400.0 / 6552.0 * 10240.0 / 10368.0), 1e-9);
  const GemmShape shape{10240, 10240, 10240};
  const GemmTime t = EstimateGemm(shape, rate, 1e9, hw.sm_count, 1.0);
  EXPECT_NEAR(t.flops / t.ns / 1e3, 143.1, 0.01);  // TFLOPS, as measured
}

TEST(EstimateGemm, EmptyShapeTakesNoTime) {
  GemmTime t = EstimateGemm(GemmShape{.m = 0, .n = 768, .k = 3584}, 160, 1400, 156, 1.0);
  EXPECT_EQ(t.ns, 0);
  EXPECT_EQ(t.flops, 0);
  EXPECT_EQ(t.bytes, 0);
  EXPECT_FALSE(t.memory_bound);
}

}  // namespace
}  // namespace ppsearch::cost
