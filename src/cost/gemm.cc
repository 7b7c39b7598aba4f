#include "cost/gemm.h"

#include <algorithm>
#include <cmath>

#include "util/round.h"

namespace ppsearch::cost {

int64_t TileM(int64_t m) {
  int64_t t = kMinTileM;
  while (t < m && t < kTileM) t *= 2;
  return t;
}

GemmEfficiency EstimateEfficiency(const GemmShape& s, int sm_count) {
  return EstimateEfficiency(s, sm_count, TileConfig{TileM(s.m), kTileN, 1.0});
}

GemmEfficiency BestEfficiency(const GemmShape& s, int sm_count) {
  const int64_t thin = TileM(s.m);  // 16..128
  const TileConfig candidates[] = {{thin, 128, 1.0},
                                   {thin, 64, 0.9},
                                   {std::min<int64_t>(thin, 64), 128, 0.9},
                                   {std::min<int64_t>(thin, 64), 64, 0.75}};
  GemmEfficiency best = EstimateEfficiency(s, sm_count, candidates[0]);
  for (const auto& c : candidates) {
    GemmEfficiency e = EstimateEfficiency(s, sm_count, c);
    if (e.total() > best.total()) best = e;
  }
  return best;
}

GemmEfficiency EstimateEfficiency(const GemmShape& s, int sm_count, const TileConfig& cfg) {
  GemmEfficiency e;
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.groups <= 0) return e;
  e.per_tile = cfg.per_tile;
  const int64_t tiles_per_group = CeilDiv(s.m, cfg.m) * CeilDiv(s.n, cfg.n);
  // Padded tiles compute the full tile whatever the real edge.
  e.tile = static_cast<double>(s.m * s.n) / static_cast<double>(tiles_per_group * cfg.m * cfg.n);
  // A grouped GEMM schedules every group's tiles over the SMs together; the
  // last wave runs partly empty.
  const int64_t tiles = tiles_per_group * s.groups;
  const int64_t waves = CeilDiv(tiles, sm_count);
  e.wave = static_cast<double>(tiles) / static_cast<double>(waves * sm_count);
  e.depth = static_cast<double>(s.k) / static_cast<double>(s.k + kDepthOverheadK);
  return e;
}

GemmTime EstimateGemm(const GemmShape& s, double peak_tflops, double memory_bw_gbps, int sm_count,
                      double scale) {
  return EstimateGemm(s, peak_tflops, memory_bw_gbps, sm_count, scale, s);
}

GemmTime EstimateGemm(const GemmShape& s, double peak_tflops, double memory_bw_gbps, int sm_count,
                      double scale, const GemmShape& tiling) {
  GemmTime t;
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.groups <= 0) return t;
  t.efficiency = BestEfficiency(tiling, sm_count);
  // 2 FLOPs (multiply, add) per m*n*k.
  t.flops = 2.0 * s.m * s.n * s.k * s.groups;
  // B read once, A read and C written once, bf16 activations.
  t.bytes = s.groups * (s.n * s.k * s.weight_bytes_per_param + 2.0 * s.m * s.k + 2.0 * s.m * s.n);
  const double compute_s = t.flops / (peak_tflops * 1e12 * t.efficiency.total() * scale);
  const double memory_s = t.bytes / (memory_bw_gbps * 1e9);
  t.memory_bound = memory_s > compute_s;
  t.ns = static_cast<int64_t>(RoundToInt64(std::max(compute_s, memory_s) * 1e9));
  return t;
}

double ModelBf16Tflops(const hardware::HardwareProfile& hw) {
  const auto& at = hw.bf16_measured_at;
  if (at.m <= 0 || at.n <= 0 || at.k <= 0) return hw.bf16_tflops;
  const double efficiency = BestEfficiency(GemmShape{at.m, at.n, at.k}, hw.sm_count).total();
  return efficiency > 0 ? hw.bf16_tflops / efficiency : hw.bf16_tflops;
}

}  // namespace ppsearch::cost
