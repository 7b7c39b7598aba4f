#pragma once
// Time of a (grouped) GEMM on one GPU: a roofline over FLOPs and bytes whose
// compute side is derated by how the work maps onto the GPU's tiles, waves
// and K-loop, from first principles rather than a fitted table.

#include <cstdint>

#include "hardware/hardware.h"

namespace ppsearch::cost {

// ceil(a / b) for a >= 0, b > 0: tiles, waves and per-rank shares.
inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct GemmShape {
  int64_t m = 0;       // rows per group (tokens)
  int64_t n = 0;       // output features per rank
  int64_t k = 0;       // input features per rank
  int64_t groups = 1;  // independent GEMMs of this shape launched together (local experts)
  double weight_bytes_per_param = 2;  // storage of B (scales included)
};

struct GemmEfficiency {
  double tile = 1;      // useful fraction of the padded 128x128 output tiles
  double wave = 1;      // useful fraction of the last wave of tiles over the SMs
  double depth = 1;     // K-loop steady state vs prologue/epilogue
  double per_tile = 1;  // the tile configuration's own ceiling
  double total() const { return tile * wave * depth * per_tile; }
};

struct GemmTime {
  int64_t ns = 0;
  double flops = 0;
  double bytes = 0;
  GemmEfficiency efficiency;
  bool memory_bound = false;
};

// Output tile of the SM120 mma.sync CUTLASS/FlashInfer kernels (128 x 128).
// Thin GEMMs (decode, LM head rows) run kernels with a shorter M tile, down
// to one 16-row MMA: the M tile is the next power of two >= m in [16, 128].
constexpr int64_t kTileM = 128;
constexpr int64_t kMinTileM = 16;
int64_t TileM(int64_t m);
constexpr int64_t kTileN = 128;
// K-loop overhead expressed as equivalent K depth: filling the smem pipeline
// (about 2 stages of 64-wide K blocks) and the epilogue cost roughly as much
// as 128 extra K elements of steady-state MMA; an estimate, first-order only.
constexpr int64_t kDepthOverheadK = 128;

// Efficiency with the default 128 x 128 tile (M tile shortened for thin GEMMs).
GemmEfficiency EstimateEfficiency(const GemmShape& shape, int sm_count);

// One kernel tile configuration. Smaller tiles reuse each operand load over
// fewer MMAs, so they run below peak even when full: `per_tile` is that
// fraction (estimates: 64-wide tiles ~90%, 64 x 64 ~75% of a 128 x 128 tile).
struct TileConfig {
  int64_t m = 128;
  int64_t n = 128;
  double per_tile = 1.0;
};

GemmEfficiency EstimateEfficiency(const GemmShape& shape, int sm_count, const TileConfig& tile);

// What a GEMM library's heuristic or autotuner does: of the usual tile
// configurations, the one with the best tile x wave x per-tile efficiency.
GemmEfficiency BestEfficiency(const GemmShape& shape, int sm_count);

// `peak_tflops`: sustained dense rate for the GEMM's dtype; `scale`: the
// calibrated compute-efficiency factor (1 = the profile's sustained rate).
GemmTime EstimateGemm(const GemmShape& shape, double peak_tflops, double memory_bw_gbps,
                      int sm_count, double scale);
// A projection that runs inside a wider GEMM on the same input (SGLang's
// merged linears): its own FLOPs and bytes, at the tile, wave and depth
// efficiency of `tiling`, the whole GEMM's shape.
GemmTime EstimateGemm(const GemmShape& shape, double peak_tflops, double memory_bw_gbps,
                      int sm_count, double scale, const GemmShape& tiling);

// The BF16 rate the model's GEMMs run at before their efficiency: the
// profile's bf16_tflops, or, where the profile says which GEMM shape that
// rate was measured at, the rate over the model's efficiency at that shape,
// so that EstimateGemm of that very shape reproduces the measurement.
double ModelBf16Tflops(const hardware::HardwareProfile& hw);

}  // namespace ppsearch::cost
