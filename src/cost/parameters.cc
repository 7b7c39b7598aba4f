#include "cost/parameters.h"

#include <algorithm>

#include "memory/memory_model.h"

namespace ppsearch::cost {
namespace {

// Priors are estimates with reasons (docs/model.md, "Calibration parameters"):
// serving kernels run below the large-GEMM sustained rates the profiles
// state; the MoE rate in a profile is already an effective grouped rate.
const std::array<ParamInfo, kParamCount> kParams = {{
    {Param::kDenseGemm, "dense_gemm_eff", "fraction of bf16_tflops", 0.90, 0.70, 1.00, 0.05, 1.0,
     "the profile's measured sustained BF16 GEMM rate",
     "BF16 projections, shared experts, dense MLP, router and LM head, after the tile, wave and "
     "K-loop losses the GEMM model computes"},
    {Param::kFp8Gemm, "fp8_gemm_eff", "fraction of fp8_tflops", 0.85, 0.60, 1.00, 0.05, 1.0,
     "the profile's sustained FP8 GEMM rate",
     "FP8 block-scaled dense GEMMs (DeepSeek-V3, Qwen3 FP8): scale handling costs a little"},
    {Param::kMoeGemm, "moe_gemm_eff", "fraction of the expert dtype's rate", 0.85, 0.60, 1.00, 0.05,
     1.0, "the profile's effective grouped-GEMM rate for the experts' dtype",
     "routed-expert grouped GEMMs at the dtype's rate (w4a8_tflops for MXFP4 experts)"},
    {Param::kAttention, "attention_eff", "fraction of attention_tflops", 0.85, 0.60, 1.00, 0.05,
     1.0, "the profile's sustained attention rate for its backend",
     "prefill attention (QK^T, PV, MLA prefix re-expansion)"},
    {Param::kLinearAttention, "linear_attention_eff", "fraction of the KDA anchor rate", 0.85, 0.50,
     1.00, 0.05, 1.0, "the chunk_kda kernel's measured rate, scaled by the profile's BF16 rate",
     "KDA linear attention (chunked delta rule)"},
    {Param::kMemory, "memory_bw_eff", "fraction of memory_bw_gbps", 0.85, 0.60, 1.00, 0.05, 1.0,
     "the profile's DRAM bandwidth",
     "memory-bound kernels: norms, activations, residual adds, MoE permutation, thin GEMMs"},
    {Param::kIntraLink, "intra_bw_scale", "x the profile's nccl-tests busbw", 1.00, 0.70, 1.10,
     0.05, 1.0, "the link's line rate (P2P rate, or the best measured busbw on NVSwitch)",
     "intra-node collective bandwidth for each group size, relative to the profile's table"},
    {Param::kInterLink, "inter_bw_eff", "fraction of the NIC line rate", 0.70, 0.15, 1.00, 0.01,
     1.0, "the NICs' line rate (nic_gbps_per_gpu)",
     "bandwidth a ring reaches through the NICs when it crosses two nodes; wider rings lose "
     "more (see the link model)"},
    {Param::kExpertSkew, "expert_skew", "max / mean EP-rank load at EP8", 1.20, 1.05, 1.45, 1.0,
     4.0, "the slowest rank cannot carry more than all tokens' experts",
     "routing imbalance: every MoE layer lasts as long as its busiest EP rank"},
    {Param::kRankJitter, "rank_jitter_us", "us (one sigma)", 4.0, 1.0, 15.0, 0.0, 2000.0,
     "none below zero",
     "spread of ranks' arrival at each collective (launch and clock jitter); the wait grows "
     "with the group size"},
    {Param::kHostOverhead, "host_overhead_us", "us per scheduler iteration", 2000, 1000, 4000, 0,
     100000, "none below zero", "scheduler, batch building and launch time per micro-batch"},
    {Param::kWorkspace, "runtime_workspace_mib", "MiB per GPU", memory::kDefaultWorkspaceMib, 1000,
     12000, 0, 65536, "none below zero",
     "GPU memory in use beyond the static pools and the computed chunk activations (allocator "
     "cache and fragmentation, NCCL buffers, graph pools); only a measured peak determines it"},
    // A kernel replayed from a CUDA graph costs its node's launch on the
    // GPU (about 0.5 us: NVIDIA's "Getting Started with CUDA Graphs" blog
    // measures 3.4 us per 2.9 us kernel replayed, against 3.8 us launched
    // from a stream) plus a small kernel's own floor: the grid's ramp-up,
    // one DRAM round trip for its first operands and the tail waiting on
    // its last block, 1-3 us whatever the work. The 2.5 us centre is their
    // sum; the prior spans a fused elementwise kernel (1.5) to a split-K
    // GEMM with its reduction (4.5).
    {Param::kDecodeKernel, "decode_kernel_us", "us per kernel of a decode step", 2.5, 1.5, 4.5, 0.0,
     50.0, "none below zero",
     "the least time each kernel of a CUDA-graph decode step takes whatever its work (graph "
     "launch, ramp-up, first memory round trip, tail); times the kernels each layer launches "
     "(cost/decode_step.h DecodeKernelsPerLayer)"},
}};

}  // namespace

const std::array<ParamInfo, kParamCount>& AllParams() { return kParams; }
int Index(Param p) { return static_cast<int>(p); }
const ParamInfo& Info(Param p) { return kParams[Index(p)]; }

const ParamInfo* FindParam(std::string_view name) {
  for (const auto& p : kParams)
    if (p.name == name) return &p;
  return nullptr;
}

Range Bounds(Param p, const hardware::HardwareProfile& hw) {
  const ParamInfo& info = Info(p);
  Range r{info.bound_lo, info.bound_hi};
  if (p == Param::kIntraLink && !hw.intra_allreduce.empty()) {
    double best = 0, worst = hw.intra_allreduce.front().busbw_gbps;
    for (const auto& e : hw.intra_allreduce) {
      best = std::max(best, e.busbw_gbps);
      worst = std::min(worst, e.busbw_gbps);
    }
    const double line = std::max(hw.p2p_gbps, best);
    // The scale may lift every group size up to the line rate; each group
    // size is also capped at it (LinkParams), so the scale's own bound is
    // what the slowest table entry could reach.
    r.hi = std::max(1.0, line / worst);
  }
  return r;
}

Range Prior(Param p, const hardware::HardwareProfile& hw) {
  const ParamInfo& info = Info(p);
  const Range b = Bounds(p, hw);
  Range r{info.prior_lo, info.prior_hi};
  // A table borrowed from other hosts of the board states the busbw they
  // spanned; the target may be like any of them, so the scale's prior
  // reaches every one (data/hardware/README.md, busbw_range_gbps).
  if (p == Param::kIntraLink) {
    for (const auto& e : hw.intra_allreduce) {
      if (!(e.busbw_lo_gbps > 0) || !(e.busbw_gbps > 0)) continue;  // none stated
      r.lo = std::min(r.lo, e.busbw_lo_gbps / e.busbw_gbps);
      r.hi = std::max(r.hi, e.busbw_hi_gbps / e.busbw_gbps);
    }
  }
  return {std::clamp(r.lo, b.lo, b.hi), std::clamp(r.hi, b.lo, b.hi)};
}

}  // namespace ppsearch::cost
