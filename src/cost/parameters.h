#pragma once
// The named physical parameters of the performance model: what each one
// means, the physical bound it may not cross and the prior range it keeps
// when the data cannot determine it. Every efficiency is a fraction of a rate
// the hardware profile states as measured, so 1.0 is the hardware's limit.

#include <array>
#include <string>
#include <string_view>

#include "hardware/hardware.h"

namespace ppsearch::cost {

enum class Param {
  kDenseGemm,        // BF16 GEMMs: fraction of bf16_tflops
  kFp8Gemm,          // FP8 dense GEMMs: fraction of fp8_tflops
  kMoeGemm,          // grouped routed-expert GEMMs: fraction of their dtype path's rate
  kAttention,        // prefill attention: fraction of attention_tflops
  kLinearAttention,  // KDA chunked delta rule: fraction of the measured anchor's rate
  kMemory,           // memory-bound kernels: fraction of memory_bw_gbps
  kIntraLink,        // multiplies the profile's intra-node collective busbw table
  kInterLink,        // fraction of the NIC line rate a cross-node ring reaches
  kExpertSkew,       // slowest EP rank's routed load over the mean, at EP8
  kRankJitter,       // spread of ranks' arrival at a collective, microseconds (1 sigma)
  kHostOverhead,     // host time per scheduler iteration, microseconds
  kWorkspace,        // GPU memory in use beyond the pools and computed activations, MiB
  kDecodeKernel,     // time every kernel of a CUDA-graph decode step takes at least, us
};
constexpr int kParamCount = 13;

struct ParamInfo {
  Param param;
  std::string_view name;  // the key in calibration files and reports
  std::string_view unit;
  double nominal;             // the prior's centre
  double prior_lo, prior_hi;  // documented prior range (docs/model.md)
  double bound_lo, bound_hi;  // physical bounds; see Bounds() for profile-dependent ones
  // Why the physical bound is where it is: the upper bound, or for a
  // parameter whose lower bound is 0 that one ("none below zero"); the
  // other end only closes the range a fit searches (calibrate's BoundReason).
  std::string_view bound_why;
  std::string_view meaning;
};

const std::array<ParamInfo, kParamCount>& AllParams();
const ParamInfo& Info(Param p);
int Index(Param p);
// The parameter called `name`, or nullptr.
const ParamInfo* FindParam(std::string_view name);

struct Range {
  double lo = 0, hi = 0;
};
// Physical bounds of `p` on this hardware. The intra-node busbw may rise to
// the link's line rate (the profile's P2P rate, or its best measured busbw on
// NVSwitch), so its upper bound depends on the profile's table.
Range Bounds(Param p, const hardware::HardwareProfile& hw);
// The prior range clipped to the bounds; intra_bw_scale's widened to reach
// the busbw range a borrowed all-reduce table states (busbw_range_gbps).
Range Prior(Param p, const hardware::HardwareProfile& hw);

}  // namespace ppsearch::cost
