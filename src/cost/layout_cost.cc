#include "cost/layout_cost.h"

#include <algorithm>
#include <cmath>

#include "cost/decode_step.h"
#include "cost/gemm.h"
#include "cost/tensor_burst.h"
#include "util/round.h"

namespace ppsearch::cost {
namespace {

using model::AttentionKind;
using model::DType;
using model::OpRole;
using model::Sharding;

// Whether two linears cost the same for every batch: every field the
// costing reads (LinearShape, Efficiency, DecodeLinearNs) is equal.
bool SameCost(const model::Linear& a, const model::Linear& b) {
  // The numbers first: a cost model is built per prediction, and most pairs
  // differ in shape before their names need comparing.
  return a.in_features == b.in_features && a.out_features == b.out_features && a.count == b.count &&
         a.active_count == b.active_count && a.dtype == b.dtype && a.sharding == b.sharding &&
         a.role == b.role && a.name == b.name && a.fused_gemm == b.fused_gemm;
}

// Whether every linear of `b` costs as the same linear of `a`, in order,
// under the same attention and FFN kinds: what the cost model derives from
// a layer (its distinct linears, merged widths, decode kernels) is then the same.
bool SameLayerCost(const model::LayerDesc& a, const model::LayerDesc& b) {
  if (a.attention != b.attention || a.ffn != b.ffn || a.linears.size() != b.linears.size())
    return false;
  for (size_t k = 0; k < a.linears.size(); ++k)
    if (!SameCost(a.linears[k], b.linears[k])) return false;
  return true;
}

}  // namespace

LayoutCostModel::LayoutCostModel(const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                                 const LayoutShape& layout, const Calibration& calibration,
                                 const KernelConstants& constants)
    : model_(model),
      hw_(hw),
      bf16_rate_tflops_(ModelBf16Tflops(hw)),
      layout_(layout),
      calibration_(calibration),
      k_(constants),
      links_(LinkParams::FromProfile(hw)),
      routed_experts_fp8_(RoutedExpertsFp8(model)) {
  links_.intra_bw_scale = calibration.Get(Param::kIntraLink);
  links_.inter_bw_eff = calibration.Get(Param::kInterLink);
  links_.rank_jitter_us = calibration.Get(Param::kRankJitter);
  decode_kernels_.assign(model.layers.size(), 0);
  for (const auto& st : layout_.stages) {
    StageLayers sl;
    const model::LayerDesc* previous = nullptr;
    std::vector<int64_t> fused_widths;  // the previous layer's, by linear (-1: not fused)
    for (int i = st.first_layer; i < st.end_layer && i < static_cast<int>(model.layers.size());
         ++i) {
      const auto& layer = model.layers[i];
      sl.layers.push_back(&layer);
      sl.mla += layer.attention == AttentionKind::kMla;
      sl.kda += layer.attention == AttentionKind::kKda;
      sl.gqa += layer.attention == AttentionKind::kGqa;
      int& kernels = decode_kernels_.at(static_cast<size_t>(layer.index));
      if (previous != nullptr && SameLayerCost(*previous, layer)) {
        // Priced as the layer before (most of a stack repeats one layer):
        // the same distinct linears, merged widths and decode kernels.
        const size_t first = sl.distinct_of.size() - layer.linears.size();
        for (size_t k = 0; k < layer.linears.size(); ++k) {
          sl.distinct_of.push_back(sl.distinct_of[first + k]);
          if (fused_widths[k] >= 0) fused_n_.emplace_back(&layer.linears[k], fused_widths[k]);
        }
        kernels = decode_kernels_[static_cast<size_t>(previous->index)];
        previous = &layer;
        continue;
      }
      kernels = DecodeKernelsPerLayer(layer, hw.attention_backend).total();
      fused_widths.assign(layer.linears.size(), -1);
      for (size_t k = 0; k < layer.linears.size(); ++k) {
        const model::Linear& l = layer.linears[k];
        auto it = std::find_if(sl.distinct.begin(), sl.distinct.end(),
                               [&](const model::Linear* d) { return SameCost(*d, l); });
        if (it == sl.distinct.end()) it = sl.distinct.insert(sl.distinct.end(), &l);
        sl.distinct_of.push_back(static_cast<int>(it - sl.distinct.begin()));
        // A merged GEMM's width on this rank: its members' outputs together.
        if (l.fused_gemm.empty()) continue;
        int64_t n = 0;
        for (const model::Linear& other : layer.linears)
          if (other.fused_gemm == l.fused_gemm) n += LinearShape(other, 1, 1).n;
        fused_n_.emplace_back(&l, n);
        fused_widths[k] = n;
      }
      previous = &layer;
    }
    stage_layers_.push_back(std::move(sl));
  }
  std::sort(fused_n_.begin(), fused_n_.end());
  for (int stage = 0; stage < num_stages(); ++stage)
    decode_attention_ns_per_token_.push_back(DecodeAttentionNsPerContextToken(stage));
}

double LayoutCostModel::RateTflops(DType dtype) const {
  switch (dtype) {
    case DType::kBf16:
      return bf16_rate_tflops_;
    case DType::kFp8:
      return hw_.fp8_tflops;
    case DType::kMxfp4:
      // FlashInfer's SM120 MXFP4 MoE path runs MXFP4 weights against MXFP8
      // activations (W4A8) at the FP8 tensor rate.
      return hw_.w4a8_tflops;
    case DType::kInt4:
      // W4A16 (Marlin-style) dequantizes to bf16 and runs at the bf16 rate.
      return bf16_rate_tflops_;
  }
  return bf16_rate_tflops_;
}

double LayoutCostModel::Efficiency(const model::Linear& l) const {
  if (l.role == OpRole::kRoutedExpert) return calibration_.Get(Param::kMoeGemm);
  switch (l.dtype) {
    case DType::kFp8:
    case DType::kMxfp4:
      return calibration_.Get(Param::kFp8Gemm);
    case DType::kBf16:
    case DType::kInt4:
      return calibration_.Get(Param::kDenseGemm);
  }
  return calibration_.Get(Param::kDenseGemm);
}

double LayoutCostModel::MemoryBw() const {
  return hw_.memory_bw_gbps * 1e9 * calibration_.Get(Param::kMemory);
}

double LayoutCostModel::ExpertSkew() const {
  // The parameter is the busiest rank's load over the mean at EP8; the
  // maximum of more ranks' loads lies further out, roughly with log2(EP)
  // (the expected maximum of EP draws), and one rank has no imbalance.
  if (layout_.ep <= 1) return 1.0;
  return 1.0 + (calibration_.Get(Param::kExpertSkew) - 1.0) * std::log2(layout_.ep) / 3.0;
}

bool LayoutCostModel::RoutedExpertsFp8(const model::ModelDesc& model) {
  // DeepEP's normal kernels dispatch FP8 when the experts run DeepGEMM's
  // block-FP8 path (token_dispatcher/deepep.py), BF16 for other experts.
  for (const auto& layer : model.layers)
    for (const model::Linear& l : layer.linears)
      if (l.role == OpRole::kRoutedExpert) return l.dtype == DType::kFp8;
  return false;
}

int LayoutCostModel::BoundaryVectors(int stage) const {
  if (stage <= 0 || stage >= static_cast<int>(layout_.stages.size())) return 2;
  return model_.StreamVectorsAt(layout_.stages[stage].first_layer);
}

int64_t LayoutCostModel::FfnAllReduceWidth(const model::LayerDesc& layer) const {
  const auto& moe = model_.moe;
  if (layer.ffn != model::FfnKind::kMoe || moe.expert_hidden == model_.hidden) return model_.hidden;
  // Latent MoE (SGLang's kimi_k3.py, KimiK3MoE): the experts' TP-partial
  // sums are reduced in latent space, before the latent RMSNorm and the
  // replicated up-projection (the norm of a sum is not the sum of norms),
  // and the shared experts' partial sums at full width; _forward_fused
  // lands both in one [latent | shared] buffer and all-reduces it once
  // (_forward_unfused reduces the same bytes in two calls).
  return moe.expert_hidden + (moe.num_shared_experts > 0 ? model_.hidden : 0);
}

double LayoutCostModel::FfnAllReduceNs(const model::LayerDesc& layer, int64_t tokens,
                                       const GroupSpan& group, double hidden_allreduce_ns) const {
  const int64_t width = FfnAllReduceWidth(layer);
  if (width == model_.hidden) return hidden_allreduce_ns;
  return static_cast<double>(
      AllReduceNs(static_cast<double>(width) * tokens * kBf16Bytes, group, links_));
}

GroupSpan LayoutCostModel::TpGroup(int stage) const {
  const StageShape& st = layout_.stages[stage];
  return GroupSpan{layout_.tp, st.tp_nodes, st.groups_per_node};
}

double LayoutCostModel::EmbeddingNs(int64_t tokens) const {
  // A gather of `tokens` rows of this rank's vocabulary shard: memory only.
  const double bytes = 2.0 * tokens * model_.hidden * kBf16Bytes;
  return bytes / MemoryBw() * 1e9;
}

GemmShape LayoutCostModel::LinearShape(const model::Linear& l, int64_t tokens,
                                       int64_t logit_rows) const {
  const int tp = layout_.tp;
  GemmShape g;
  g.m = tokens;
  g.k = l.in_features;
  g.n = l.out_features;
  g.weight_bytes_per_param = model::BytesPerParam(l.dtype);
  switch (l.role) {
    case OpRole::kLmHead:
      g.m = logit_rows;  // logits only for each sequence's last position
      g.n = CeilDiv(l.out_features, tp);
      break;
    case OpRole::kRoutedExpert: {
      // Uniform routing: every expert receives tokens * top_k / experts rows;
      // EP keeps experts / ep experts per rank, MoE-TP splits each expert's
      // intermediate dimension (column for gate_up, row for down).
      const int64_t local = std::max<int64_t>(l.count / layout_.ep, 1);
      g.groups = local;
      g.m = CeilDiv(tokens * l.active_count, l.count);
      const int moe_tp = std::max(layout_.moe_tp(), 1);
      // gate_up is column-parallel (n split), down row-parallel (k split);
      // decided by the weight, not by sizes that can coincide.
      if (l.name.find("gate_up") != std::string::npos)
        g.n = CeilDiv(l.out_features, moe_tp);
      else
        g.k = CeilDiv(l.in_features, moe_tp);
      break;
    }
    case OpRole::kRouter:
    case OpRole::kSharedExpert:
    case OpRole::kLatentProj:
      if (layout_.deepep) {
        // On the rank's 1/tp shard of the tokens, whole: the shared experts
        // are built with tp_size 1 under DeepEP (deepseek_v2.py, kimi_k3.py),
        // the router and latent projections are replicated anyway.
        g.m = CeilDiv(tokens, tp);
        g.groups = l.count;
        break;
      }
      [[fallthrough]];
    default: {
      // With DP attention the attention projections split over the
      // attention-TP group only, tp / dp GPUs (layers/dp_attention.py
      // compute_dp_attention_world_info).
      const int split = l.role == OpRole::kAttention ? layout_.attn_tp() : tp;
      if (l.sharding == Sharding::kColumn || l.sharding == Sharding::kVocab)
        g.n = CeilDiv(l.out_features, split);
      else if (l.sharding == Sharding::kRow)
        g.k = CeilDiv(l.in_features, split);
      g.groups = l.count;
      break;
    }
  }
  return g;
}

std::vector<double> LayoutCostModel::LinearNsInOrder(
    int stage, const std::function<double(const model::Linear&)>& cost) const {
  const StageLayers& sl = stage_layers_[stage];
  std::vector<double> distinct_ns;
  distinct_ns.reserve(sl.distinct.size());
  for (const model::Linear* l : sl.distinct) distinct_ns.push_back(cost(*l));
  std::vector<double> out;
  out.reserve(sl.distinct_of.size());
  for (int d : sl.distinct_of) out.push_back(distinct_ns[static_cast<size_t>(d)]);
  return out;
}

double LayoutCostModel::LinearNs(const model::Linear& l, int64_t tokens, int64_t logit_rows,
                                 double rate_scale) const {
  if (l.role == OpRole::kEmbedding) return EmbeddingNs(tokens);
  const GemmShape shape = LinearShape(l, tokens, logit_rows);
  GemmShape tiling = shape;
  const auto it = std::lower_bound(fused_n_.begin(), fused_n_.end(), &l,
                                   [](const auto& entry, const model::Linear* key) {
                                     return std::less<const model::Linear*>()(entry.first, key);
                                   });
  if (it != fused_n_.end() && it->first == &l) tiling.n = it->second;
  return static_cast<double>(EstimateGemm(shape, RateTflops(l.dtype) * rate_scale, MemoryBw() / 1e9,
                                          hw_.sm_count, Efficiency(l), tiling)
                                 .ns);
}

std::vector<double> LayoutCostModel::WithTensorBurst(
    int stage, int64_t tokens, int64_t logit_rows, std::vector<double> sustained_ns,
    const std::function<double(const model::LayerDesc&)>& before_ffn_ns,
    const std::function<double(const model::LayerDesc&)>& after_ffn_ns) const {
  const auto& layers = stage_layers_[stage].layers;
  if (layers.empty()) return sustained_ns;
  const double burst_ratio = hw_.TensorBurstRatio(), payback_ratio = hw_.TensorPaybackRatio();
  const std::vector<double> burst_ns = LinearNsInOrder(
      stage, [&](const model::Linear& l) { return LinearNs(l, tokens, logit_rows, burst_ratio); });
  std::vector<double> payback_ns = sustained_ns;
  if (payback_ratio < 1) {
    payback_ns = LinearNsInOrder(stage, [&](const model::Linear& l) {
      return LinearNs(l, tokens, logit_rows, payback_ratio);
    });
  }
  BurstBudget budget;
  budget.window_ns = hw_.burst_window_ms * 1e6;
  budget.payback_ns = payback_ratio < 1 ? hw_.burst_payback_ms * 1e6 : 0;
  budget.refill_ratio = hw_.burst_refill_ratio;
  // Which phase a linear runs in; the latent up-projection (back to the
  // hidden size) follows the FFN's all-reduce.
  auto in_attention_phase = [&](const model::Linear& l) {
    return l.role == OpRole::kAttention ||
           (l.role == OpRole::kLatentProj && l.out_features == model_.hidden);
  };
  std::vector<BurstPhase> phases;
  std::vector<std::vector<size_t>> linears;  // each phase's kernels in sustained_ns
  size_t next = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    // The stage's first phase follows the previous step's last collective.
    const model::LayerDesc& before = *layers[i == 0 ? layers.size() - 1 : i - 1];
    BurstPhase attention{after_ffn_ns(before), {}}, ffn{before_ffn_ns(*layers[i]), {}};
    std::vector<size_t> in_attention, in_ffn;
    for (const auto& l : layers[i]->linears) {
      const bool first = in_attention_phase(l);
      (first ? attention : ffn)
          .kernels.push_back({sustained_ns[next], burst_ns[next], payback_ns[next]});
      (first ? in_attention : in_ffn).push_back(next++);
    }
    phases.push_back(std::move(attention));
    phases.push_back(std::move(ffn));
    linears.push_back(std::move(in_attention));
    linears.push_back(std::move(in_ffn));
  }
  const std::vector<std::vector<double>> times = SteadyStepNs(phases, budget);
  std::vector<double> out = sustained_ns;
  for (size_t p = 0; p < phases.size(); ++p)
    for (size_t k = 0; k < linears[p].size(); ++k) out[linears[p][k]] = times[p][k];
  return out;
}

StageBreakdown LayoutCostModel::TokenPart(int stage, int64_t tokens, int64_t logit_rows,
                                          int64_t decode_sequences) const {
  if (auto it = cache_.find({stage, tokens, logit_rows, decode_sequences}); it != cache_.end())
    return it->second;
  StageBreakdown b;
  const StageShape& st = layout_.stages[stage];
  const GroupSpan group = TpGroup(stage);
  const double act_bytes = static_cast<double>(tokens) * model_.hidden * kBf16Bytes;
  const double allreduce_ns = static_cast<double>(AllReduceNs(act_bytes, group, links_));
  const double arrival_ns = ArrivalWaitUs(group, links_) * 1e3;
  const double skew = ExpertSkew();
  auto linear_ns = [&](const model::Linear& l) {
    return decode_sequences >= 0 ? DecodeLinearNs(l, tokens, decode_sequences)
                                 : LinearNs(l, tokens, logit_rows);
  };
  std::vector<double> linears_ns = LinearNsInOrder(stage, linear_ns);
  // DeepEP's MoE layers: the reduce-scatter after attention, the all-gather
  // before the next one, and the rank's dispatch and combine.
  double reduce_scatter_ns = 0, all_gather_ns = 0;
  DispatchTime dispatch;
  if (layout_.deepep && layout_.tp > 1) {
    reduce_scatter_ns = static_cast<double>(ReduceScatterNs(act_bytes, group, links_));
    all_gather_ns = static_cast<double>(AllGatherNs(act_bytes, group, links_));
    DispatchShape d;
    d.rows = CeilDiv(tokens, layout_.tp);
    d.width = model_.moe.expert_hidden;
    d.experts = model_.moe.num_experts;
    d.top_k = model_.moe.top_k;
    d.kernels = KernelsFor(layout_.deepep_mode, decode_sequences >= 0);
    d.fp8_dispatch = !layout_.deepep_bf16_dispatch &&
                     (d.kernels == DeepEpKernels::kLowLatency || routed_experts_fp8_);
    dispatch = DeepEpNs(d, group, links_);
  }
  auto scattered = [&](const model::LayerDesc& layer) {
    return layout_.deepep && layer.ffn == model::FfnKind::kMoe;
  };
  // The collectives on either side of a layer's FFN.
  auto before_ffn_ns = [&](const model::LayerDesc& layer) {
    return scattered(layer) ? reduce_scatter_ns + dispatch.dispatch_ns : allreduce_ns;
  };
  auto after_ffn_ns = [&](const model::LayerDesc& layer) {
    return scattered(layer) ? dispatch.combine_ns + all_gather_ns
                            : FfnAllReduceNs(layer, tokens, group, allreduce_ns);
  };
  // A prefill's phases between TP collectives start after the tensor cores
  // idled through the collective (decode is bandwidth-bound: no burst).
  if (hw_.burst_window_ms > 0 && decode_sequences < 0 && layout_.tp > 1)
    linears_ns = WithTensorBurst(stage, tokens, logit_rows, std::move(linears_ns), before_ffn_ns,
                                 after_ffn_ns);
  size_t next = 0;
  for (const auto* layer : stage_layers_[stage].layers) {
    for (const auto& l : layer->linears) {
      const double ns = linears_ns[next++];
      b.gemm_ns += ns;
      // Every rank waits, inside the next all-reduce, for the busiest EP
      // rank's experts: the mean rank computes `ns`, the slowest skew x ns.
      if (l.role == OpRole::kRoutedExpert) {
        b.imbalance_wait_ns += (skew - 1.0) * ns;
        b.routed_gemm_ns += ns;
      }
    }
    // Memory-bound element-wise work over hidden-size activations; MoE adds
    // permute/unpermute (read + write, each way) of the top_k copies routed
    // to this rank's experts (1/ep of them) at the experts' width.
    double bytes = k_.elementwise_passes * act_bytes;
    if (layer->ffn == model::FfnKind::kMoe) {
      const double permute =
          4.0 * tokens * model_.moe.top_k * model_.moe.expert_hidden * kBf16Bytes / layout_.ep;
      bytes += permute;
      b.moe_permute_ns += permute / MemoryBw() * 1e9;
    }
    // Block attention residuals: before the attention and before the FFN,
    // each token's input is a softmax-weighted sum over the completed block
    // summaries and the running block sum (read, scored, summed: memory-bound).
    if (model_.attn_res_block_size > 0) {
      const double vectors = model_.ResidualVectorsAt(layer->index);
      const double res_ns = 2.0 * vectors * act_bytes / MemoryBw() * 1e9;
      b.attn_res_ns += res_ns;
      b.elementwise_ns += res_ns;
    }
    b.elementwise_ns += bytes / MemoryBw() * 1e9;
    b.gaps_ns += KernelGapsNs(*layer, decode_sequences >= 0);
    if (layout_.tp > 1 && scattered(*layer)) {
      b.allreduce_ns += reduce_scatter_ns + all_gather_ns;
      b.allreduce_calls += 2;
      b.a2a_ns += dispatch.total_ns();
      b.jitter_wait_ns += 4 * arrival_ns;  // every rank meets in all four
    } else if (layout_.tp > 1) {
      // A2A disabled: one all-reduce after attention, one after the MLP/MoE,
      // the latter as wide as the sums the FFN leaves partial.
      b.allreduce_ns += allreduce_ns + after_ffn_ns(*layer);
      b.allreduce_calls += 2;
      b.jitter_wait_ns += 2 * arrival_ns;
    }
  }
  if (st.has_embedding) {
    b.gemm_ns += EmbeddingNs(tokens);
    if (layout_.tp > 1) {  // VocabParallelEmbedding sums its shards
      b.allreduce_ns += allreduce_ns;
      b.allreduce_calls += 1;
      b.jitter_wait_ns += arrival_ns;
    }
  }
  if (st.has_lm_head) {
    b.gemm_ns += linear_ns(model_.lm_head);
    b.allreduce_ns += static_cast<double>(
        AllGatherNs(static_cast<double>(logit_rows) * model_.vocab * kBf16Bytes, group, links_));
  }
  if (stage > 0 && layout_.tp > 1) {
    // send-allgather: each rank received 1/tp of what crosses the boundary;
    // the stage all-gathers it before its first layer.
    b.recv_allgather_ns =
        static_cast<double>(AllGatherNs(BoundaryVectors(stage) * act_bytes, group, links_));
  }
  cache_.emplace(std::make_tuple(stage, tokens, logit_rows, decode_sequences), b);
  return b;
}

double LayoutCostModel::AttentionNs(int stage, const sim::MicroBatch& batch) const {
  const StageLayers& sl = stage_layers_[stage];
  const int tp = layout_.attn_tp();  // heads split over the attention-TP group
  const double att_rate = hw_.attention_tflops * 1e12 * calibration_.Get(Param::kAttention);
  const double kda_rate = bf16_rate_tflops_ * 1e12 * calibration_.Get(Param::kLinearAttention);
  const double bw = MemoryBw();
  int64_t prefix_sum = 0;
  for (const auto& e : batch.entries) prefix_sum += e.prefix_tokens;
  const bool absorbed = batch.is_prefill && AbsorbedPrefill(layout_.mla_prefill, prefix_sum);
  double ns = 0;
  for (const auto& e : batch.entries) {
    const double n = static_cast<double>(e.extend_tokens);
    const double p = static_cast<double>(e.prefix_tokens);
    // Causal: token i of the chunk attends to the prefix and i earlier tokens.
    const double ctx = p + (n + 1) / 2;
    if (sl.mla > 0) {
      const auto& m = model_.mla;
      const double heads = std::max(1.0, static_cast<double>(m.num_heads) / tp);
      const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
      double t;
      if (absorbed) {
        // Absorbed-form prefill: scores against the latent and rope key,
        // values summed in the latent (kv_lora + rope + kv_lora per pair);
        // nothing is re-expanded. Absorbing q and un-absorbing the output
        // cost what kv_b costs the MHA form per chunk token: the linears.
        t = 2.0 * heads * n * ctx * (2.0 * m.kv_lora_rank + m.qk_rope_head_dim) / att_rate;
      } else if (batch.is_prefill) {
        // MHA-form prefill: QK^T and PV over the context, plus re-expanding
        // the cached prefix latent through kv_b for this chunk.
        double flops = 2.0 * heads * n * ctx * (qk + m.v_head_dim) +
                       2.0 * p * m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim);
        t = flops / att_rate;
      } else {
        // Absorbed decode: read the latent cache once per sequence.
        double lat = m.kv_lora_rank + m.qk_rope_head_dim;
        t = std::max(4.0 * heads * (p + 1) * lat / att_rate, (p + 1) * lat * kBf16Bytes / bw);
      }
      ns += sl.mla * t * 1e9;
    }
    if (sl.kda > 0) {
      const auto& kd = model_.kda;
      const double heads = std::max(1.0, static_cast<double>(kd.num_heads) / tp);
      // Chunkwise delta rule, linear in tokens: anchored on 0.70 us/token/layer
      // at 96 heads measured on an RTX PRO 6000 (~418 TFLOPS sustained bf16),
      // i.e. ~3.05 MFLOP-equivalent per token per head at the model's BF16
      // rate (ModelBf16Tflops, the one every BF16 GEMM runs at).
      double t = n * heads * k_.kda_flops_per_token_head / kda_rate;
      if (!batch.is_prefill)  // decode reads and writes the fp32 state
        t = std::max(t, 2.0 * heads * kd.head_dim * kd.head_dim * 4 / bw);
      ns += sl.kda * t * 1e9;
    }
    if (sl.gqa > 0) {
      const auto& g = model_.gqa;
      const double heads = std::max(1.0, static_cast<double>(g.num_heads) / tp);
      const double kv_heads = std::max(1.0, static_cast<double>(g.num_kv_heads) / tp);
      double t = 4.0 * heads * n * ctx * g.head_dim / att_rate;
      if (!batch.is_prefill) t = std::max(t, (p + 1) * kv_heads * g.head_dim * 2 * kBf16Bytes / bw);
      ns += sl.gqa * t * 1e9;
    }
  }
  return ns;
}

std::vector<LayoutCostModel::OperatorTime> LayoutCostModel::OperatorTimes(int stage,
                                                                          int64_t tokens) const {
  std::vector<OperatorTime> out;
  for (const auto* layer : stage_layers_[stage].layers)
    for (const auto& l : layer->linears) {
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const OperatorTime& o) { return o.name == l.name; });
      if (it == out.end()) {
        out.push_back({l.name, 0, l.sharding == Sharding::kReplicated && layout_.tp > 1});
        it = out.end() - 1;
      }
      it->ns += LinearNs(l, tokens, 1);
    }
  std::sort(out.begin(), out.end(),
            [](const OperatorTime& a, const OperatorTime& b) { return a.ns > b.ns; });
  return out;
}

StageBreakdown LayoutCostModel::Breakdown(int stage, const sim::MicroBatch& batch) const {
  if (!batch.dp_ranks.empty()) return DpBreakdown(stage, batch);
  if (!batch.is_prefill) return DecodeBreakdown(stage, batch);
  StageBreakdown b =
      TokenPart(stage, batch.extend_tokens(), static_cast<int64_t>(batch.entries.size()));
  b.attention_ns = AttentionNs(stage, batch);
  return b;
}

sim::StageTime LayoutCostModel::StageCost(int stage, const sim::MicroBatch& batch) const {
  return TimeOf(Breakdown(stage, batch));
}

sim::StageTime LayoutCostModel::TimeOf(const StageBreakdown& b) {
  sim::StageTime t;
  t.compute_ns = RoundToInt64(b.gemm_ns + b.attention_ns + b.elementwise_ns);
  t.gemm_ns = RoundToInt64(b.gemm_ns - b.routed_gemm_ns);
  t.moe_ns = RoundToInt64(b.routed_gemm_ns + b.moe_permute_ns);
  t.attention_ns = RoundToInt64(b.attention_ns);
  t.comm_ns = RoundToInt64(b.allreduce_ns + b.a2a_ns + b.imbalance_wait_ns + b.jitter_wait_ns);
  t.transfer_ns = RoundToInt64(b.recv_allgather_ns);
  t.overhead_ns = RoundToInt64(b.gaps_ns);
  t.allreduce_calls = b.allreduce_calls;
  return t;
}

int64_t LayoutCostModel::HopNs(int from_stage, const sim::MicroBatch& batch) const {
  // Hidden states and the residual stream in bf16; each TP rank sends its
  // 1/tp slice.
  double bytes = static_cast<double>(BoundaryVectors(from_stage + 1)) * batch.extend_tokens() *
                 model_.hidden * kBf16Bytes / layout_.tp;
  return PointToPointNs(bytes, layout_.stages[from_stage].hop_crosses_nodes, links_);
}

int64_t LayoutCostModel::OutputReturnNs(const sim::MicroBatch& batch) const {
  if (layout_.stages.size() <= 1) return 0;
  bool crosses = std::any_of(layout_.stages.begin(), layout_.stages.end(),
                             [](const StageShape& s) { return s.hop_crosses_nodes; });
  // next_token_ids: 4 bytes per sequence, latency-bound.
  return PointToPointNs(4.0 * batch.entries.size(), crosses, links_);
}

int64_t LayoutCostModel::ScheduleNs(const sim::MicroBatch&) const {
  return RoundToInt64(calibration_.Get(Param::kHostOverhead) * 1e3);
}

int64_t LayoutCostModel::IngestNs(int64_t input_tokens) const {
  return RoundToInt64((k_.ingest_fixed_us + k_.ingest_us_per_token * input_tokens) * 1e3);
}

int64_t LayoutCostModel::StreamOutNs() const { return RoundToInt64(k_.stream_out_us * 1e3); }

}  // namespace ppsearch::cost
