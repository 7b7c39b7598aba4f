#pragma once
// A GPU and cluster kind as data: compute rates, memory, and the links that
// collectives and pipeline transfers use. Loaded from data/hardware/*.toml;
// data/hardware/README.md documents every field, its unit and its sources.

#include <map>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::hardware {

// One NCCL collective inside one node for a group of `group_size` GPUs.
struct IntraCollective {
  int group_size = 0;
  double busbw_gbps = 0;  // large-message bus bandwidth, GB/s (nccl-tests busbw)
  double latency_us = 0;  // small-message floor, microseconds
  // All-reduce entries only, optional (0, 0: none stated): the busbw that
  // other hosts of this board measured, lowest and highest, where the entry
  // is borrowed from them rather than measured on the target. The
  // calibration's prior on intra_bw_scale widens so that its +-2 sigma
  // reach it (cost::Prior).
  double busbw_lo_gbps = 0;
  double busbw_hi_gbps = 0;
};

// The most memory a profile's GPU may have, MiB: a pebibyte, past any GPU.
inline constexpr double kMaxGpuMemoryMib = 1 << 30;

struct HardwareProfile {
  std::string name;      // profile id, e.g. "rtx-6000d"
  std::string gpu_name;  // as nvidia-smi prints it
  std::string source_path;
  // The files it was read from: source_path, then its base's, and so on
  // (what a run records the hashes of).
  std::vector<std::string> files;
  int sm_count = 0;
  double memory_mib = 0;      // total per GPU as nvidia-smi reports it
  double memory_bw_gbps = 0;  // DRAM bandwidth, GB/s
  // Sustained dense tensor rates, TFLOPS.
  double bf16_tflops = 0;
  // The GEMM shape bf16_tflops was measured at, when the profile gives it
  // (`bf16_tflops = { measured = .., m = .., n = .., k = .. }`); all zero
  // when bf16_tflops is the cost model's rate itself, as `ppsearch probe`
  // writes it. The model derates every GEMM by its tile, wave and K-loop
  // efficiency, so a measured rate is divided by the model's efficiency at
  // its shape first (cost::ModelBf16Tflops), else the shape that defines the
  // rate would be predicted below it.
  struct GemmDims {
    int m = 0, n = 0, k = 0;
  };
  GemmDims bf16_measured_at;
  double fp8_tflops = 0;
  double fp4_tflops = 0;  // FP4 x FP4; the FP8 rate where there are no FP4 tensor cores
  // Effective MXFP4-weight MoE grouped GEMM at prefill token counts: x MXFP8
  // activations on Blackwell SM120, x BF16 on Hopper.
  double w4a8_tflops = 0;
  // Sustained prefill attention (QK^T and PV) rate of the profile's attention
  // backend, TFLOPS: below the BF16 GEMM rate (softmax, masking, small tiles).
  double attention_tflops = 0;
  // The backend attention_tflops was measured with (SGLang's
  // --attention-backend name), and other backends' rates where the profile
  // knows them ([attention_backends] table, optional).
  std::string attention_backend;
  std::map<std::string, double> attention_backends;
  bool fp4_tensor_cores = false;  // false: FP4 operands are widened (Hopper)
  // A tensor rate held down only under sustained load ([tensor_burst] table,
  // optional; 0 when absent), as a budget (src/cost/tensor_burst.h): after
  // the tensor cores have been idle, the first burst_window_ms of tensor work
  // runs at burst_bf16_tflops, and every tensor rate above scales by the same
  // ratio for that time; running it dry is paid back with burst_payback_ms
  // at burst_payback_bf16_tflops for a whole window spent, pro rata for less
  // (0: no payback); idle time regains burst_refill_ratio ms of window per ms.
  double burst_bf16_tflops = 0;
  double burst_window_ms = 0;
  double burst_payback_bf16_tflops = 0;
  double burst_payback_ms = 0;
  double burst_refill_ratio = 1;
  int gpus_per_node = 0;
  // Intra-node links.
  bool nvlink = false;  // false: GPUs talk over PCIe only
  int pcie_gen = 0;
  std::vector<IntraCollective> intra_allreduce;  // by group size, ascending
  std::vector<IntraCollective> intra_alltoall;   // by group size, ascending
  double p2p_gbps = 0;                           // GPU-to-GPU unidirectional, GB/s
  double p2p_latency_us = 0;
  // Inter-node links.
  double nic_gbps_per_gpu = 0;  // per-GPU share of the node's NICs, GB/s
  double inter_latency_us = 0;  // small-message latency across nodes

  // Burst over sustained tensor rate; 1 without a [tensor_burst] table.
  double TensorBurstRatio() const {
    return burst_window_ms > 0 && bf16_tflops > 0 ? burst_bf16_tflops / bf16_tflops : 1.0;
  }
  // The payback's rate over the sustained one (1: no payback).
  double TensorPaybackRatio() const {
    return TensorBurstRatio() > 1 && burst_payback_ms > 0 && burst_payback_bf16_tflops > 0
               ? burst_payback_bf16_tflops / bf16_tflops
               : 1.0;
  }

  // The burst for a reader ("rtx-6000d: 241 TFLOPS for the first 2.5 ms of
  // tensor work after idle, 143 sustained"); "" without a [tensor_burst].
  std::string TensorBurstText() const;

  // The all-reduce entry for a node-local group of `group_size` GPUs:
  // exact match, else the nearest larger group (conservative), else the
  // largest. Loaded profiles always have an entry for gpus_per_node.
  const IntraCollective& IntraFor(int group_size) const;
  // The same lookup in the all-to-all table.
  const IntraCollective& IntraAllToAllFor(int group_size) const;
};

// Bytes a BF16 GEMM of m x n x k moves at least: both operands read and
// the output written once. Below the roofline's ridge (FLOPs per byte under
// TFLOPS / DRAM bandwidth) a GEMM's time says nothing of the tensor rate.
double Bf16GemmMinBytes(double m, double n, double k);

// Makes attention_tflops the rate of `backend` (the spec's
// --prefill-attention-backend or --attention-backend; empty: the profile's
// own). A backend the profile has no rate for is an error naming the known ones.
Status SelectAttentionBackend(HardwareProfile& hw, const std::string& backend);

// Loads data/hardware/<name>.toml (DataDir()), or the file when
// `name_or_path` ends in ".toml". Every key is required and unknown keys are
// rejected, so a typo cannot silently leave a rate at zero.
Result<HardwareProfile> LoadHardwareProfile(const std::string& name_or_path);

// Profile names shipped in DataDir()/hardware, sorted.
std::vector<std::string> ListHardwareProfiles();

}  // namespace ppsearch::hardware
