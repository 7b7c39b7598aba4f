#pragma once
// The performance model of one layout: what a micro-batch costs on each
// pipeline stage (operators of its layers on one TP rank, the TP collectives
// of its group, the hand-off to the next stage). Implements sim::CostModel.

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cost/calibration.h"
#include "cost/collective.h"
#include "cost/gemm.h"
#include "cost/mla_prefill.h"
#include "cost/moe_dispatch.h"
#include "hardware/hardware.h"
#include "model/model.h"
#include "sim/cost_model.h"

namespace ppsearch::cost {

inline constexpr double kBf16Bytes = 2;
// Kernels per layer besides one per GEMM: norms, rope/gates, attention,
// activation, routing and permutation, residual adds (an estimate).
inline constexpr int kExtraKernelsPerLayer = 8;

// What the cost model needs of a planned layout (built from plan::LayoutPlan).
struct StageShape {
  int first_layer = 0;  // [first_layer, end_layer)
  int end_layer = 0;
  bool has_embedding = false;
  bool has_lm_head = false;
  int tp_nodes = 1;                // nodes the stage's TP group spans
  bool hop_crosses_nodes = false;  // the hand-off to the next stage leaves the node
  // TP groups of busy stages on the stage's node(s), itself included: they
  // share the node's PCIe/NVLink fabric (PP8/TP4 on 8-GPU nodes: 2).
  int groups_per_node = 1;
};

struct LayoutShape {
  int pp = 1;
  int tp = 1;
  int ep = 1;
  // DP attention ranks (SGLang --dp-size with --enable-dp-attention): each
  // runs attention on attn_tp() = tp / dp GPUs over its own requests; the
  // FFN/MoE runs over the whole TP group on every rank's tokens (dp_step.cc).
  int dp = 1;
  std::vector<StageShape> stages;
  // Decode batch sizes captured as CUDA graphs, ascending (DecodeCaptureBatchSizes);
  // a decode step runs at the next captured size. Empty: eager decode, no padding.
  std::vector<int> decode_graph_batch_sizes;
  // --moe-a2a-backend deepep (EP = TP): a MoE layer reduce-scatters its
  // attention output, runs the router, shared experts and latent projections
  // whole on the rank's 1/tp of the tokens, dispatches to and combines from
  // the experts through DeepEP (moe_dispatch.h) and all-gathers the tokens
  // before the next attention; false: the all-reduce path.
  bool deepep = false;
  DeepEpMode deepep_mode = DeepEpMode::kAuto;  // --deepep-mode
  // DeepEP dispatches BF16 in both kernels whatever the experts' dtype (the
  // MoE runner quantizes inside: plan::DeepEpDispatchesBf16).
  bool deepep_bf16_dispatch = false;
  // Which prefill batches run MLA in the absorbed form (the default: none).
  MlaPrefillRule mla_prefill;
  int moe_tp() const { return tp / (ep > 0 ? ep : 1); }
  int attn_tp() const { return dp > 1 && tp % dp == 0 ? tp / dp : tp; }
};

// Estimates, not fitted; each is explained where it is defined.
struct KernelConstants {
  double kda_flops_per_token_head = 3.05e6;
  double elementwise_passes = 12;    // hidden-size bf16 reads+writes per token per layer
  double kernel_gap_us = 1.0;        // idle gap between dependent kernels
  double ingest_us_per_token = 0.2;  // tokenizer manager / IPC per prompt token
  double ingest_fixed_us = 1000;
  double stream_out_us = 1000;  // detokenizer + HTTP chunk to the client
};

// A stage's time split by operator class, for the breakdown.
struct StageBreakdown {
  double gemm_ns = 0;
  double routed_gemm_ns = 0;  // the routed experts', in gemm_ns too
  double moe_permute_ns = 0;  // routed tokens' permutation (memory-bound), in elementwise_ns too
  double attention_ns = 0;
  double elementwise_ns = 0;
  double gaps_ns = 0;
  double allreduce_ns = 0;  // transfer of the TP collectives
  int allreduce_calls = 0;
  // Waits inside the collectives (exposed like them): for the busiest EP
  // rank's experts, and for the last rank to arrive.
  double imbalance_wait_ns = 0;
  double jitter_wait_ns = 0;
  double attn_res_ns = 0;  // block attention residuals (memory-bound), in elementwise_ns too
  double recv_allgather_ns = 0;
  double a2a_ns = 0;       // DeepEP dispatch + combine (exposed like the collectives)
  double sampling_ns = 0;  // decode: the sampler on the last stage, in elementwise_ns too
};

class LayoutCostModel : public sim::CostModel {
 public:
  LayoutCostModel(const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                  const LayoutShape& layout, const Calibration& calibration,
                  const KernelConstants& constants = {});

  int num_stages() const override { return static_cast<int>(layout_.stages.size()); }
  sim::StageTime StageCost(int stage, const sim::MicroBatch& batch) const override;
  // Decode steps (decode_step.cc): TokenPart and every DP rank's side are
  // the same for each step of a batch; only attention grows, by the same
  // time per token of context whatever the sequence.
  bool DecodeStepGrowth(int stage, const sim::MicroBatch& batch,
                        sim::DecodeGrowth* growth) const override;
  int64_t HopNs(int from_stage, const sim::MicroBatch& batch) const override;
  int64_t OutputReturnNs(const sim::MicroBatch& batch) const override;
  int64_t ScheduleNs(const sim::MicroBatch& batch) const override;
  int64_t IngestNs(int64_t input_tokens) const override;
  int64_t StreamOutNs() const override;

  // Time of each named linear summed over the stage's layers for a prefill
  // of `tokens`, largest first; `replicated`: every TP rank runs it whole.
  struct OperatorTime {
    std::string name;
    double ns = 0;
    bool replicated = false;
  };
  std::vector<OperatorTime> OperatorTimes(int stage, int64_t tokens) const;

  // The full split for one stage and batch (StageCost sums it).
  StageBreakdown Breakdown(int stage, const sim::MicroBatch& batch) const;
  const LinkParams& links() const { return links_; }

 private:
  // Token-count-dependent part of a stage (GEMMs, element-wise, collectives),
  // cached: prefill batches repeat the same token counts.
  // `decode_sequences` >= 0: a decode step of that many sequences padded to
  // `tokens`, whose routed experts are costed for the experts it touches.
  StageBreakdown TokenPart(int stage, int64_t tokens, int64_t logit_rows,
                           int64_t decode_sequences = -1) const;
  // A decode step (decode_step.cc).
  StageBreakdown DecodeBreakdown(int stage, const sim::MicroBatch& batch) const;
  // A step of every DP attention rank's batch (dp_step.cc): the busiest
  // rank's attention side, then the FFN on the gathered tokens.
  StageBreakdown DpBreakdown(int stage, const sim::MicroBatch& step) const;
  // DpBreakdown's parts: the shared side and each rank's side, in rank order.
  StageBreakdown DpSides(int stage, const sim::MicroBatch& step,
                         std::vector<StageBreakdown>* rank_sides) const;
  // DpBreakdown of DpSides' shared side `shared` and its rank sides.
  static StageBreakdown DpCombined(StageBreakdown shared, const std::vector<StageBreakdown>& sides);
  // Decode attention time per token of one sequence's context (AttentionNs
  // is affine in it: each sequence reads its cache once); per stage in
  // decode_attention_ns_per_token_.
  double DecodeAttentionNsPerContextToken(int stage) const;
  // The time `layer`'s kernels cost beyond their work: in a decode step
  // (a CUDA-graph replay) each kernel's floor, decode_kernel_us x
  // DecodeKernelsPerLayer; in a prefill the idle gap between dependent
  // kernels. Fixed per step, so constant over a decode stretch.
  double KernelGapsNs(const model::LayerDesc& layer, bool decode) const;
  // What StageCost makes of a breakdown.
  static sim::StageTime TimeOf(const StageBreakdown& b);
  // One DP rank's share of a DP step: attention projections, attention,
  // the element-wise work before the gather, embedding and sampling, on the
  // rank's own `rows` (its tokens, or its padded decode batch).
  StageBreakdown DpRankSide(int stage, const sim::MicroBatch& part, int64_t rows) const;
  // The part every rank runs together on `gathered` rows (`sequences`
  // decoding, or -1 for an extend step): FFN/MoE GEMMs, element-wise work,
  // kernel gaps, the gather and scatter collectives, the LM head.
  StageBreakdown DpSharedSide(int stage, int64_t gathered, int64_t sequences, int64_t logit_rows,
                              int64_t rank_rows, bool max_len_padding) const;
  // The attention-TP group of one DP rank in `stage`.
  GroupSpan AttnTpGroup(int stage) const;
  // A linear in a decode step of `sequences` padded to `padded` rows (DecodeGemmNs).
  double DecodeLinearNs(const model::Linear& linear, int64_t padded, int64_t sequences) const;
  // The GEMM a linear runs for `tokens` rows (LM head: `logit_rows`); not the embedding.
  GemmShape LinearShape(const model::Linear& linear, int64_t tokens, int64_t logit_rows) const;
  double EmbeddingNs(int64_t tokens) const;
  // `cost` of every linear of `stage`'s layers, layer by layer in order,
  // each distinct shape priced once (StageLayers::distinct).
  std::vector<double> LinearNsInOrder(
      int stage, const std::function<double(const model::Linear&)>& cost) const;
  double AttentionNs(int stage, const sim::MicroBatch& batch) const;
  // `rate_scale` multiplies the dtype's tensor rate (the profile's burst ratio).
  double LinearNs(const model::Linear& linear, int64_t tokens, int64_t logit_rows,
                  double rate_scale = 1.0) const;
  // `sustained_ns` (LinearNsInOrder's order) with the profile's burst budget
  // spent and paid back phase by phase (tensor_burst.h). A phase is the work
  // between two TP collectives: a layer's attention projections, with a
  // latent MoE's up-projection (it runs after the FFN's all-reduce), then its
  // FFN; the collective before it is idle that refills the budget
  // (`before_ffn_ns`, `after_ffn_ns` of the layer: the all-reduces, or
  // DeepEP's reduce-scatter and dispatch, combine and all-gather). A serving
  // stage runs the same step again and again, so the times are those of a
  // step that starts in the state the step before it left (its steady state).
  std::vector<double> WithTensorBurst(
      int stage, int64_t tokens, int64_t logit_rows, std::vector<double> sustained_ns,
      const std::function<double(const model::LayerDesc&)>& before_ffn_ns,
      const std::function<double(const model::LayerDesc&)>& after_ffn_ns) const;
  double RateTflops(model::DType dtype) const;
  // The calibrated efficiency of a linear's operator class.
  double Efficiency(const model::Linear& linear) const;
  double MemoryBw() const;  // bytes/s memory-bound kernels reach
  // Routed load of the busiest EP rank over the mean at this layout's EP size.
  double ExpertSkew() const;
  GroupSpan TpGroup(int stage) const;
  // Elements per token the all-reduce after a layer's FFN carries: the
  // hidden size, or for a latent MoE the latent plus the shared experts' output.
  int64_t FfnAllReduceWidth(const model::LayerDesc& layer) const;
  // Transfer time of the all-reduce after `layer`'s FFN for `tokens`
  // (`hidden_allreduce_ns`: the one at hidden width, shared when equal).
  double FfnAllReduceNs(const model::LayerDesc& layer, int64_t tokens, const GroupSpan& group,
                        double hidden_allreduce_ns) const;
  // Hidden-size vectors per token that enter `stage` from the one before:
  // the hidden state plus the residual stream (with block attention
  // residuals, every completed block summary and the running sum).
  int BoundaryVectors(int stage) const;
  static bool RoutedExpertsFp8(const model::ModelDesc& model);  // their weights are FP8

  const model::ModelDesc& model_;
  hardware::HardwareProfile hw_;
  double bf16_rate_tflops_ = 0;  // ModelBf16Tflops(hw_), once
  LayoutShape layout_;
  Calibration calibration_;
  KernelConstants k_;
  LinkParams links_;
  bool routed_experts_fp8_ = false;  // set once: what DeepEP's normal dispatch sends
  struct StageLayers {
    int mla = 0, kda = 0, gqa = 0;
    std::vector<const model::LayerDesc*> layers;
    // The stage's linears with equal shapes counted once (layers of one kind
    // repeat them), and for each linear of each layer, in order, its index
    // there (LinearNsInOrder).
    std::vector<const model::Linear*> distinct;
    std::vector<int> distinct_of;
  };
  std::vector<StageLayers> stage_layers_;
  std::vector<double> decode_attention_ns_per_token_;
  // DecodeKernelsPerLayer(layer).total() by the layer's index, counted once
  // (a decode step's pricing asks it per layer).
  std::vector<int> decode_kernels_;
  // Per-rank output width of the merged GEMM each fused linear runs in
  // (Linear::fused_gemm): its tile and wave efficiency is that GEMM's.
  // Sorted by the linear's address (a cost model is built per prediction:
  // one allocation, not one per linear).
  std::vector<std::pair<const model::Linear*, int64_t>> fused_n_;
  // The caches of token-count-dependent parts. Not locked: a cost model
  // belongs to one prediction, or to one serve-sim engine that calls it
  // under its own lock (a lock per lookup was 3% of a chat search's CPU).
  struct KeyHash {
    template <typename... T>
    size_t operator()(const std::tuple<T...>& key) const {
      size_t h = 0;
      std::apply(
          [&h](const auto&... v) {
            ((h ^= std::hash<int64_t>{}(static_cast<int64_t>(v)) + 0x9e3779b97f4a7c15ULL +
                   (h << 6) + (h >> 2)),
             ...);
          },
          key);
      return h;
    }
  };
  using TokenKey = std::tuple<int, int64_t, int64_t, int64_t>;
  mutable std::unordered_map<TokenKey, StageBreakdown, KeyHash> cache_;
  // DP steps' token-count-dependent parts: (kind, stage, and its counts).
  using DpKey = std::tuple<int, int, int64_t, int64_t, int64_t, int64_t>;
  mutable std::unordered_map<DpKey, StageBreakdown, KeyHash> dp_cache_;
};

}  // namespace ppsearch::cost
