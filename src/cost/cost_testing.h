#pragma once
// A GPU, a calibration and a model of round numbers, for the cost model's
// hand-worked tests.

#include "cost/calibration.h"
#include "hardware/hardware.h"
#include "model/model.h"
#include "model/model_testing.h"

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

// 4 dense GQA layers, hidden 1024: 16 query heads, 4 KV heads of 64, a
// SwiGLU MLP of width 4096, vocabulary 32768.
inline model::ModelDesc TinyDenseModel() {
  using model::OpRole;
  using model::Sharding;
  using model::testing::MakeLinear;
  model::ModelDesc m;
  m.name = "tiny-dense";
  m.family = "llama";
  m.hidden = 1024;
  m.vocab = 32768;
  m.num_layers = 4;
  m.num_attention_heads = 16;
  m.gqa = {16, 4, 64};
  m.dense_intermediate = 4096;
  for (int i = 0; i < m.num_layers; ++i) {
    model::LayerDesc layer;
    layer.index = i;
    layer.attention = model::AttentionKind::kGqa;
    layer.ffn = model::FfnKind::kDense;
    // q 16 x 64 + k 4 x 64 + v 4 x 64 = 1536 outputs.
    layer.linears.push_back(MakeLinear("qkv", 1024, 1536, Sharding::kColumn, OpRole::kAttention));
    layer.linears.push_back(MakeLinear("o_proj", 1024, 1024, Sharding::kRow, OpRole::kAttention));
    layer.linears.push_back(
        MakeLinear("gate_up", 1024, 8192, Sharding::kColumn, OpRole::kDenseMlp));
    layer.linears.push_back(MakeLinear("down", 4096, 1024, Sharding::kRow, OpRole::kDenseMlp));
    layer.kv_bytes_per_token = 4 * 64 * 2 * 2;
    m.layers.push_back(layer);
  }
  m.embedding = MakeLinear("embed_tokens", 32768, 1024, Sharding::kVocab, OpRole::kEmbedding);
  m.lm_head = MakeLinear("lm_head", 1024, 32768, Sharding::kVocab, OpRole::kLmHead);
  return m;
}

}  // namespace ppsearch::cost::testing
