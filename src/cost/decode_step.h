#pragma once
// A decode step as the GPU runs it: one token per running sequence through
// every layer of a stage. Memory-bound at the batch sizes serving sees, so
// what matters is what the step reads: every dense weight of the rank once,
// the routed experts the batch touches, and each sequence's KV cache or
// recurrent state. The formulas that do not need the layout are here as pure
// functions; LayoutCostModel's decode path (decode_step.cc) applies them.

#include <cstdint>
#include <string>
#include <vector>

#include "cost/gemm.h"
#include "model/model.h"

namespace ppsearch::cost {

// SGLang's default decode CUDA-graph capture list (server_args.py
// _generate_cuda_graph_batch_sizes, no speculative decoding, padding on):
// [1, 2, 4, 8, 12] + 16..256 step 8 + 272..496 step 16 + 512..max_bs step 32,
// kept <= max_bs and <= the request pool (runner/base_cuda_graph_runner.py
// clamps to req_to_token_pool.size). Empty when max_bs <= 0 (no graphs).
std::vector<int> DecodeCaptureBatchSizes(int max_bs, int max_running_requests);

// The batch size a decode step of `batch` sequences runs at: the smallest
// captured size >= batch (the graph replays padded rows), or `batch` itself
// when it exceeds every captured size (an eager forward, no padding).
int64_t PaddedDecodeBatch(int64_t batch, const std::vector<int>& captured);

// Expected distinct experts a batch of `tokens` touches on one EP rank, each
// token routed to top_k of num_experts uniformly: an expert is missed by one
// token with probability 1 - k/E, by all with (1 - k/E)^B, so
// E_local * (1 - (1 - k/E)^B). B = 1 touches k/EP experts per rank; a few
// dozen tokens already touch nearly all of them.
double ExpectedExpertsTouched(int64_t local_experts, int64_t num_experts, int64_t top_k,
                              int64_t tokens);

// A GEMM of a decode step, ns: a roofline of the weights streamed once (plus
// the thin activations, bf16) against the tensor cores' work with M padded
// to the M tile (TileM: 16 rows up to m = 16, multiples of 128 past 128).
// No wave or K-loop derate as in EstimateGemm: the kernels SGLang runs at
// decode shapes (split-K GEMV-like dense GEMMs, the MoE runner's small-M
// configurations) spread the weight stream over every SM. `scale`: the
// calibrated efficiency of the operator class.
double DecodeGemmNs(const GemmShape& shape, double peak_tflops, double memory_bw_gbps,
                    double scale);

// Bytes the sampler reads per step on the last stage: SGLang's sampler turns
// the batch's fp32 logits into probabilities (softmax), applies top-k/top-p
// and draws, about three passes over batch x vocab x 4 bytes (an estimate;
// flashinfer's fused top-k/top-p sampling reads them at least once).
double SamplingBytes(int64_t batch, int64_t vocab);

// The kernels one layer's decode step launches on a rank, by what they do.
// Each costs at least decode_kernel_us whatever its work (parameters.h), so
// at small batches a layer's step has a floor of total() x that, on top of
// the bytes and FLOPs the rest of the model charges. The collectives are
// not here: their latency is in their own cost (collective.h). Counted from
// the forward code of SGLang's decode path, an estimate per family:
struct DecodeKernels {
  // One per GEMM (projections merged into one GEMM count once; the routed
  // experts' grouped GEMMs, gate-up and down, one each).
  int gemms = 0;
  // FP8 GEMMs quantize their activations first (per-token-group FP8
  // quantization before each block-scaled GEMM): one kernel each.
  int activation_quant = 0;
  // The input and post-attention RMSNorms (residual add fused), plus MLA's
  // q_a and kv_a norms and KDA's gated output norm.
  int norms = 0;
  // Attention besides its projections: rope and the cache write (MLA
  // adds the absorbed value bmm beside the one kv_b counts), the decode
  // kernel(s) of the backend (AttentionDecodeKernels), KDA's short-conv
  // update and recurrent step.
  int attention = 0;
  // MoE routing: top-k over the router's logits, then the sort of tokens
  // by expert (moe_align_block_size).
  int routing = 0;
  // The FFN's other kernels: the SiLU-and-multiply activation (one per
  // MLP or expert set), the routed experts' weighted sum.
  int ffn = 0;
  int total() const { return gemms + activation_quant + norms + attention + routing + ffn; }
};

// Kernels the decode attention of `backend` launches per layer: the split-KV
// kernel and its combine (triton's stage 1 and 2, fa3's and flashmla's
// split combine), else one fused kernel (flashinfer, trtllm_mla, cutlass_mla).
int AttentionDecodeKernels(const std::string& backend);

DecodeKernels DecodeKernelsPerLayer(const model::LayerDesc& layer, const std::string& backend);

}  // namespace ppsearch::cost
