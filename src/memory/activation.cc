// Live activation bytes of a prefill chunk per TP rank. Follows SGLang
// v0.5.18, python/sglang/srt/: models/deepseek_v2.py (MLA prefill, MoE),
// models/kimi_linear.py (KDA), layers/logits_processor.py (logits),
// layers/moe/fused_moe_triton and the FlashInfer CUTLASS MoE runner
// (routed-expert workspaces), managers/scheduler_pp_mixin.py (PP receives).

#include "memory/activation.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsearch::memory {
namespace {

using model::Linear;
using model::OpRole;
using model::Sharding;

constexpr double kBf16 = 2;
constexpr double kFp32 = 4;
constexpr double kInt32 = 4;

// Elements per token of one rank's copy of a projection's output. A
// column-parallel (or vocab-parallel) projection writes its 1/tp slice; a
// replicated one and a row-parallel one write the full width (the row output
// is a partial sum that the all-reduce reduces in place).
double OutWidth(const Linear& l, int tp) {
  const double out = static_cast<double>(l.out_features);
  return l.sharding == Sharding::kColumn || l.sharding == Sharding::kVocab ? out / tp : out;
}

// A row-parallel projection reads a tensor that no projection wrote (the
// attention kernel's output, the activation function's output), 1/tp of its
// input width on each rank.
double RowInputWidth(const Linear& l, int tp) {
  return l.sharding == Sharding::kRow ? static_cast<double>(l.in_features) / tp : 0;
}

bool IsAttention(const Linear& l) { return l.role == OpRole::kAttention; }

// Attention sublayer, bytes per token: every projection's output and the
// attention kernel's output are live together (the forward functions keep
// them in locals until they return). That covers q/k/v/o (and KDA's gates
// and beta, MLA's q_a/q_b/kv_a/kv_b) at their per-rank widths. Two buffers no
// projection writes:
//   MLA prefill runs as multi-head attention: kv_b expands the latent into
//     per-head k_nope and v, and K is assembled per head from k_nope and the
//     shared rope key, heads/tp x (nope + rope) more.
//   KDA's short causal convolutions write new q, k and v, 3 x heads/tp x head_dim.
double AttentionBytesPerToken(const model::ModelDesc& model, const model::LayerDesc& layer,
                              int tp) {
  double width = 0;
  for (const Linear& l : layer.linears)
    if (IsAttention(l)) width += OutWidth(l, tp) + RowInputWidth(l, tp);
  if (layer.attention == model::AttentionKind::kMla)
    width += static_cast<double>(model.mla.num_heads) / tp *
             (model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim);
  if (layer.attention == model::AttentionKind::kKda)
    width += 3.0 * model.kda.num_heads / tp * model.kda.head_dim;
  return width * kBf16;
}

// Routed experts, bytes per token. With moe-a2a-backend "none" every rank sees
// every token with its full top-k routing, and the fused MoE kernels size
// their buffers for all C x top_k routed pairs on the host, before the device
// knows how many land on this rank's experts: EP does not shrink them, MoE-TP
// (tp / ep) shrinks the intermediate. Per routed pair: the permuted input at
// the experts' width (the permutation buffer), and for each expert GEMM its
// intermediate side / moe_tp (gate_up's output; down's input, the activation
// output) plus down's full-width output. Per token: the combined (unpermuted)
// output at the experts' width.
double RoutedBytesPerToken(const model::LayerDesc& layer, int moe_tp) {
  const Linear* first = nullptr;
  double per_pair = 0;
  int64_t pairs = 0;
  for (const Linear& l : layer.linears) {
    if (l.role != OpRole::kRoutedExpert) continue;
    const bool reads_dispatch = first == nullptr;
    if (first == nullptr) first = &l;
    pairs = std::max(pairs, l.active_count);
    const double in = static_cast<double>(l.in_features);
    const double out = static_cast<double>(l.out_features);
    // The first GEMM reads the dispatched tokens and writes the split
    // intermediate; a later one reads the split intermediate and writes the
    // experts' width.
    per_pair += reads_dispatch ? out / moe_tp : in / moe_tp + out;
  }
  if (first == nullptr) return 0;
  const double width = static_cast<double>(first->in_features);
  return (static_cast<double>(pairs) * (width + per_pair) + width) * kBf16;
}

// MLP/MoE sublayer, bytes per token: the dense MLP's, shared experts' and the
// latent projections' outputs (and the row projections' inputs) at their
// per-rank widths, the router's scores in fp32 with the top-k ids (int32) and
// weights (fp32), and the routed experts' buffers.
double FfnBytesPerToken(const model::LayerDesc& layer, int tp, int moe_tp) {
  double bytes = 0;
  int64_t top_k = 0;
  for (const Linear& l : layer.linears) {
    if (IsAttention(l) || l.role == OpRole::kRoutedExpert) {
      if (l.role == OpRole::kRoutedExpert) top_k = std::max(top_k, l.active_count);
      continue;
    }
    if (l.role == OpRole::kRouter) {
      bytes += OutWidth(l, tp) * kFp32;
      continue;
    }
    bytes += (OutWidth(l, tp) + RowInputWidth(l, tp)) * kBf16;
  }
  bytes += static_cast<double>(top_k) * (kInt32 + kFp32);
  return bytes + RoutedBytesPerToken(layer, moe_tp);
}

const char* FfnName(const model::LayerDesc& layer) {
  return layer.ffn == model::FfnKind::kMoe ? "MoE experts" : "dense MLP";
}

}  // namespace

StageActivation EstimateStageActivation(const model::ModelDesc& model,
                                        const ActivationShape& shape) {
  StageActivation best;
  const int tp = std::max(shape.tp, 1);
  const int moe_tp = std::max(tp / std::max(shape.ep, 1), 1);
  const double tokens = static_cast<double>(std::max<int64_t>(shape.chunk_tokens, 0));
  // One hidden-size bf16 vector per token of the chunk, replicated on every
  // TP rank (each rank holds the full hidden states after the all-reduce).
  const double vector_bytes = tokens * model.hidden * kBf16;
  // SGLang's PP loop launches a micro-batch's forward asynchronously and
  // receives the next micro-batch's hidden states and residual stream while
  // the GPU still runs it, so one more set of what crosses the boundary is live.
  const double receive =
      shape.receives ? model.StreamVectorsAt(shape.first_layer) * vector_bytes : 0;
  const int end = std::min<int>(shape.end_layer, static_cast<int>(model.layers.size()));
  // One moment of the forward: its live terms and what names each; the
  // peak is named after its largest term. Names are written only for a new
  // peak (a prediction plans memory once per calibration member).
  auto consider = [&](double stream, const auto& stream_name, double sublayer,
                      const auto& sublayer_name, double logits) {
    const double total = stream + sublayer + logits + receive;
    if (total <= best.bytes) return;
    best = {stream, sublayer, logits, receive, total, stream_name()};
    double largest = stream;
    if (sublayer > largest) {
      largest = sublayer;
      best.peak = sublayer_name();
    }
    if (logits > largest) {
      largest = logits;
      best.peak = "LM head logits";
    }
    if (receive > largest) best.peak = "PP receive buffers";
  };
  auto stream_name = [&](int layer) {
    return fmt::format("{} (layer {})",
                       model.attn_res_block_size > 0 ? "block residuals" : "residual stream",
                       layer);
  };
  for (int i = std::max(shape.first_layer, 0); i < end; ++i) {
    const model::LayerDesc& layer = model.layers[i];
    // Hidden states plus the residual stream, live across the whole layer.
    const double stream = model.StreamVectorsAt(i) * vector_bytes;
    const double attention = tokens * AttentionBytesPerToken(model, layer, tp);
    const double ffn = tokens * FfnBytesPerToken(layer, tp, moe_tp);
    consider(
        stream, [&] { return stream_name(i); }, std::max(attention, ffn),
        [&] {
          return attention >= ffn ? fmt::format("{} attention (layer {})",
                                                model::AttentionKindName(layer.attention), i)
                                  : fmt::format("{} (layer {})", FfnName(layer), i);
        },
        0);
  }
  if (shape.has_lm_head) {
    // logits_processor.py: the LM head runs on the last token of each
    // sequence; each rank writes its vocab/tp slice in bf16, all-gathers the
    // full vocabulary and converts it to fp32 for sampling.
    const double vocab = static_cast<double>(model.lm_head.out_features);
    const double rows = static_cast<double>(std::max<int64_t>(shape.logit_rows, 1));
    const double logits =
        rows * (OutWidth(model.lm_head, tp) * kBf16 + vocab * kBf16 + vocab * kFp32);
    const int last = std::max(end - 1, 0);
    consider(
        model.StreamVectorsAt(last) * vector_bytes, [&] { return stream_name(last); }, 0,
        [] { return std::string(); }, logits);
  }
  return best;
}

}  // namespace ppsearch::memory
