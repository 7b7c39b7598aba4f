#pragma once
// A GPU and a calibration of round numbers, for the cost model's hand-worked
// tests.

#include "cost/calibration.h"
#include "hardware/hardware.h"

namespace ppsearch::cost::testing {

// Round numbers: 100 SMs, 100 TFLOPS bf16, 1000 GB/s, 4 GPUs per node,
// PCIe P2P 50 GB/s / 5 us, NIC 25 GB/s per GPU / 10 us.
inline hardware::HardwareProfile TinyGpu() {
  hardware::HardwareProfile hw;
  hw.name = "tiny-gpu";
  hw.gpu_name = "NVIDIA Tiny";
  hw.sm_count = 100;
  hw.memory_mib = 80000;
  hw.memory_bw_gbps = 1000;
  hw.bf16_tflops = 100;
  hw.fp8_tflops = 200;
  hw.fp4_tflops = 400;
  hw.w4a8_tflops = 150;
  hw.attention_tflops = 50;
  hw.gpus_per_node = 4;
  hw.intra_allreduce = {{2, 40, 5}, {4, 30, 10}};
  hw.intra_alltoall = hw.intra_allreduce;
  hw.p2p_gbps = 50;
  hw.p2p_latency_us = 5;
  hw.nic_gbps_per_gpu = 25;
  hw.inter_latency_us = 10;
  return hw;
}

// Every efficiency at its physical bound (1.0 of the profile's rates), no
// waits: the hand-worked numbers below are the profile's own rates.
inline Calibration Ideal() {
  Calibration c;
  for (Param p : {Param::kDenseGemm, Param::kFp8Gemm, Param::kMoeGemm, Param::kAttention,
                  Param::kLinearAttention, Param::kMemory, Param::kIntraLink, Param::kInterLink,
                  Param::kExpertSkew})
    c.Set(p, 1.0);
  c.Set(Param::kRankJitter, 0);
  c.Set(Param::kHostOverhead, 2000);
  return c;
}

}  // namespace ppsearch::cost::testing
