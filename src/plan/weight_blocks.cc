// Block-FP8 weights and TP: a checkpoint quantized in blocks (DeepSeek-V3's
// and Qwen3-235B-A22B-FP8's 128 x 128) carries one scale per block, so SGLang
// refuses to load a layout whose shard of such a weight holds part of a block
// (python/sglang/srt/layers/quantization/fp8.py: validate_block_quant_shapes
// for linears, the FP8 MoE method's create_weights for experts). The rules,
// as SGLang applies them:
//   - row-parallel weights split over their group: input features per rank
//     % block_k;
//   - column-parallel weights split over their group, and every part of a
//     merged one (GQA's QKV, gate/up) even unsplit: output features per rank
//     % block_n;
//   - routed experts: moe_intermediate_size / MoE-TP % block_n (gate/up, at
//     any MoE-TP) and % block_k (down, when MoE-TP > 1);
//   - replicated weights are whole everywhere.
// The group is TP, except where SGLang builds a weight over another one:
// moe-dense-tp-size = 1 (the only other value SGLang accepts) keeps the dense
// MLP layers of MoE models whole; the dispatching moe-a2a backends keep the
// shared experts whole (models/deepseek_v2.py: deepep, mooncake,
// ascend_fuseep, flashinfer) and force EP = TP, so MoE-TP = 1.
// A width that does not divide over its group at all is CheckEvenSplits'
// error (validation.cc), not a partial block.

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "plan/plan_internal.h"

namespace ppsearch::plan {

namespace {

// SGLang builds these as one merged GEMM (MergedColumnParallelLinear,
// QKVParallelLinear), whose parts are checked even when TP does not split
// them. MLA and KDA projections are separate linears.
bool Merged(const model::Linear& l, model::AttentionKind attention) {
  const std::string& n = l.name;
  if (l.role == model::OpRole::kAttention)
    return attention == model::AttentionKind::kGqa &&
           (n == "q_proj" || n == "k_proj" || n == "v_proj");
  return l.sharding == model::Sharding::kColumn &&
         (n.ends_with("gate_proj") || n.ends_with("up_proj"));
}

std::string How(int64_t size, const char* what, const char* group, int ways) {
  return FormatThousands(size) + " " + what + " / " + group + " " + std::to_string(ways);
}

std::optional<PartialBlock> ExpertPartial(const model::Linear& l, const model::ModelDesc& model,
                                          int moe_tp) {
  const model::WeightBlock& block = model.fp8_block;
  const bool gate_up = l.name.find("gate_up") != std::string::npos;
  const int64_t inter = model.moe.moe_intermediate;
  if (inter % moe_tp != 0) return std::nullopt;  // CheckMoe's error
  if (!gate_up && moe_tp <= 1) return std::nullopt;
  const int b = gate_up ? block.n : block.k;
  PartialBlock p;
  p.weight = l.name;
  p.role = l.role;
  p.per_rank = inter / moe_tp;
  p.ways = moe_tp;
  if (p.per_rank % b == 0) return std::nullopt;
  p.how = How(inter, "moe_intermediate_size", "MoE-TP", moe_tp);
  p.refusal =
      fmt::format("The {} = {} is not divisible by weight quantization block_{} = {}.",
                  gate_up ? "output_size of gate's and up's weight" : "input_size of down's weight",
                  p.per_rank, gate_up ? "n" : "k", b);
  return p;
}

// The shard of `l` along its blocked dimension and SGLang's message when it
// holds part of a block; nullopt when it holds whole blocks.
std::optional<PartialBlock> PartialBlockOf(const model::Linear& l, model::AttentionKind attention,
                                           const model::ModelDesc& model,
                                           const spec::LayoutSpec& layout,
                                           const EngineConfig& engine) {
  if (l.role == model::OpRole::kRoutedExpert)
    return ExpertPartial(l, model, MoeTpOf(layout, engine));
  const model::WeightBlock& block = model.fp8_block;
  const int tp = GroupOf(l, model, layout, engine);
  PartialBlock p;
  p.weight = l.name;
  p.role = l.role;
  p.ways = tp;
  if (l.sharding == model::Sharding::kRow) {
    if (tp <= 1 || l.in_features % tp != 0 || (l.in_features / tp) % block.k == 0)
      return std::nullopt;
    p.per_rank = l.in_features / tp;
    p.how = How(l.in_features, "input features", "TP", tp);
    p.refusal = fmt::format(
        "Weight input_size_per_partition = {} is not divisible by weight quantization block_k "
        "= {}.",
        p.per_rank, block.k);
    return p;
  }
  if (l.sharding != model::Sharding::kColumn || (tp <= 1 && !Merged(l, attention)))
    return std::nullopt;
  if (l.out_features % tp != 0) return std::nullopt;
  p.per_rank = l.out_features / tp;
  p.how = tp > 1 ? How(l.out_features, "output features", "TP", tp)
                 : FormatThousands(l.out_features) + " output features, merged";
  // GQA K and V with fewer KV heads than ranks: each rank holds one whole head.
  const bool kv = l.name == "k_proj" || l.name == "v_proj";
  if (kv && attention == model::AttentionKind::kGqa && model.gqa.num_kv_heads > 0 &&
      model.gqa.num_kv_heads < tp) {
    p.per_rank = model.gqa.head_dim;
    p.how = fmt::format("one {}-wide KV head per rank ({} KV heads / TP {})", model.gqa.head_dim,
                        model.gqa.num_kv_heads, tp);
  }
  if (p.per_rank % block.n == 0) return std::nullopt;
  p.refusal = fmt::format(
      "Weight output_partition_size = {} is not divisible by weight quantization block_n = {}.",
      p.per_rank, block.n);
  return p;
}

// The smallest valid EP (divides TP and the expert count) that leaves every
// expert whole blocks; 0 when none does.
int WholeBlockEp(const spec::LayoutSpec& layout, const model::ModelDesc& model) {
  const int b = std::lcm(model.fp8_block.n, model.fp8_block.k);
  for (int ep = 1; ep <= layout.tp; ++ep) {
    if (layout.tp % ep != 0 || model.moe.num_experts % ep != 0) continue;
    const int moe_tp = layout.tp / ep;
    if (model.moe.moe_intermediate % moe_tp == 0 && (model.moe.moe_intermediate / moe_tp) % b == 0)
      return ep;
  }
  return 0;
}

// One change, of EP, moe-dense-tp-size and the a2a backend together, that
// makes every partial shard whole; empty when there is none (a partial
// attention weight, or a dense model's MLP, needs a smaller TP).
std::string TargetedFix(const spec::LayoutSpec& layout, const model::ModelDesc& model,
                        const std::vector<PartialBlock>& partial) {
  bool experts = false, dense = false, shared = false;
  for (const PartialBlock& p : partial) {
    if (p.ways <= 1) return "";  // not whole blocks on any layout
    switch (p.role) {
      case model::OpRole::kRoutedExpert:
        experts = true;
        break;
      case model::OpRole::kDenseMlp:
        if (!model.is_moe()) return "";
        dense = true;
        break;
      case model::OpRole::kSharedExpert:
        shared = true;
        break;
      default:
        return "";
    }
  }
  std::vector<std::string> parts;
  if (shared) {
    // A dispatching backend keeps the shared experts whole and sets EP = TP.
    const int64_t inter = model.moe.moe_intermediate;
    if (inter % std::lcm(model.fp8_block.n, model.fp8_block.k) != 0) return "";
    parts.push_back(fmt::format(
        "moe-a2a-backend = \"deepep\" with ep = {} (whole shared experts, one MoE-TP rank per "
        "expert)",
        layout.tp));
  } else if (experts) {
    const int ep = WholeBlockEp(layout, model);
    if (ep <= layout.ep) return "";
    parts.push_back(fmt::format("ep = {} (MoE-TP {} keeps whole blocks)", ep, layout.tp / ep));
  }
  if (dense) parts.push_back("moe-dense-tp-size = 1 (the dense MLP whole on every rank)");
  std::string fix;
  for (size_t i = 0; i < parts.size(); ++i) fix += (i == 0 ? "" : " and ") + parts[i];
  return fix;
}

}  // namespace

int MoeTpOf(const spec::LayoutSpec& layout, const EngineConfig& engine) {
  const int ep = A2aForcesEpEqTp(engine) ? layout.tp : std::max(layout.ep, 1);
  return std::max(layout.tp / ep, 1);
}

int GroupOf(const model::Linear& l, const model::ModelDesc& model, const spec::LayoutSpec& layout,
            const EngineConfig& engine) {
  if (l.role == model::OpRole::kDenseMlp && model.is_moe() && engine.moe_dense_tp_size == 1)
    return 1;
  if (l.role == model::OpRole::kSharedExpert && SharedExpertsWhole(engine)) return 1;
  if (l.role == model::OpRole::kAttention) return SplitOf(layout).attn_tp;
  return layout.tp;
}

std::vector<PartialBlock> PartialBlocks(const spec::LayoutSpec& layout, const EngineConfig& engine,
                                        const model::ModelDesc& model) {
  std::vector<PartialBlock> out;
  if (!model.fp8_block.any()) return out;
  // Each distinct weight once (the same name and shape recur in every layer).
  std::set<std::tuple<std::string, int64_t, int64_t>> seen;
  for (const auto& layer : model.layers)
    for (const auto& l : layer.linears) {
      if (l.dtype != model::DType::kFp8) continue;
      if (!seen.insert({l.name, l.in_features, l.out_features}).second) continue;
      if (std::optional<PartialBlock> p = PartialBlockOf(l, layer.attention, model, layout, engine))
        out.push_back(std::move(*p));
    }
  return out;
}

std::string PartialBlockError(const spec::LayoutSpec& layout, const model::ModelDesc& model,
                              const std::vector<PartialBlock>& partial) {
  // SGLang stops at the first weight it builds; the rest are listed so that
  // one change can fix them all.
  const PartialBlock& first = partial.front();
  std::string others;
  for (size_t i = 1; i < partial.size(); ++i)
    others += (others.empty() ? "" : ", ") + partial[i].weight + " " +
              std::to_string(partial[i].per_rank);
  const bool unsplit = std::any_of(partial.begin(), partial.end(),
                                   [](const PartialBlock& p) { return p.ways <= 1; });
  const std::string targeted = TargetedFix(layout, model, partial);
  const std::string fix = unsplit ? "an unquantized checkpoint (no layout makes these widths "
                                    "whole blocks)"
                          : targeted.empty()
                              ? "a smaller TP, or an unquantized checkpoint"
                              : targeted + "; or a smaller TP, or an unquantized checkpoint";
  return fmt::format(
      "splits block-FP8 weights (quantization_config.weight_block_size [{}, {}] in {}) into "
      "partial blocks, and SGLang refuses to load it: \"{}\" ({}: {}){}. Use {}",
      model.fp8_block.n, model.fp8_block.k, model.source_path, first.refusal, first.weight,
      first.how, others.empty() ? "" : "; also partial per rank: " + others, fix);
}

}  // namespace ppsearch::plan
