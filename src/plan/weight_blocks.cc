// Block-FP8 weights and TP: a checkpoint quantized in blocks (DeepSeek-V3's
// and Qwen3-235B-A22B-FP8's 128 x 128) carries one scale per block, so SGLang
// refuses to load a layout whose shard of such a weight holds part of a block
// (SGLang v0.5.18 python/sglang/srt/layers/quantization/fp8.py,
// validate_block_quant_shapes for linears, Fp8MoEMethod.create_weights for
// experts). The rules, as SGLang applies them:
//   - row-parallel weights split over TP: input features / TP % block_k;
//   - column-parallel weights split over TP, and every part of a merged one
//     (QKV, gate/up) even at TP 1: output features per rank % block_n;
//   - routed experts: moe_intermediate_size / MoE-TP % block_n (gate/up) and
//     % block_k (down), MoE-TP = TP / EP, at any MoE-TP;
//   - replicated weights are whole everywhere.
// Where SGLang builds a weight over another group it is checked over that
// group: --moe-dense-tp-size for the dense MLP layers; one whole copy per rank
// of the shared experts under the dispatching moe-a2a backends
// (models/deepseek_v2.py: deepep, mooncake, ascend_fuseep, flashinfer).

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

bool SharedExpertsWhole(const spec::EngineSpec& engine) {
  static const std::set<std::string> kBackends = {"deepep", "mooncake", "ascend_fuseep",
                                                  "flashinfer"};
  return kBackends.count(MoeA2aBackend(engine)) > 0;
}

// SGLang builds these as one merged GEMM (MergedColumnParallelLinear,
// QKVParallelLinear), whose parts are checked even when TP does not split them.
bool Merged(const model::Linear& l) {
  const std::string& n = l.name;
  auto ends = [&](const std::string& suffix) {
    return n.size() >= suffix.size() &&
           n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends("gate_proj") || ends("up_proj") ||
         (l.role == model::OpRole::kAttention && (n == "q_proj" || n == "k_proj" || n == "v_proj"));
}

struct Split {
  int64_t per_rank = 0;  // the shard's size along the blocked dimension
  std::string how;       // "18,432 output features / TP 32"
};

std::string How(int64_t size, const char* what, const char* group, int ways) {
  return FormatThousands(size) + " " + what + " / " + group + " " + std::to_string(ways);
}

// The shard of `l` along its blocked dimension and SGLang's message when it
// holds part of a block; nullopt when it holds whole blocks.
std::optional<PartialBlock> PartialBlockOf(const model::Linear& l, const model::ModelDesc& model,
                                           const spec::LayoutSpec& layout,
                                           const spec::EngineSpec& engine) {
  const model::WeightBlock& block = model.fp8_block;
  PartialBlock p;
  p.weight = l.name;
  p.role = l.role;
  if (l.role == model::OpRole::kRoutedExpert) {
    const int moe_tp = std::max(layout.tp / std::max(layout.ep, 1), 1);
    const bool gate_up = l.name.find("gate_up") != std::string::npos;
    const int b = gate_up ? block.n : block.k;
    p.per_rank = model.moe.moe_intermediate / moe_tp;
    if (p.per_rank % b == 0) return std::nullopt;
    p.how = How(model.moe.moe_intermediate, "moe_intermediate_size", "MoE-TP", moe_tp);
    p.refusal = fmt::format(
        "The {} = {} is not divisible by weight quantization block_{} = {}.",
        gate_up ? "output_size of gate's and up's weight" : "input_size of down's weight",
        p.per_rank, gate_up ? "n" : "k", b);
    return p;
  }
  int tp = layout.tp;
  const char* group = "TP";
  if (l.role == model::OpRole::kDenseMlp) {
    if (const std::optional<int64_t> dense = engine.ArgInt("moe-dense-tp-size")) {
      tp = static_cast<int>(std::max<int64_t>(*dense, 1));
      group = "moe-dense-tp-size";
    }
  }
  if (l.role == model::OpRole::kSharedExpert && SharedExpertsWhole(engine)) tp = 1;
  if (l.sharding == model::Sharding::kRow) {
    if (tp <= 1 || (l.in_features / tp) % block.k == 0) return std::nullopt;
    p.per_rank = l.in_features / tp;
    p.how = How(l.in_features, "input features", group, tp);
    p.refusal = fmt::format(
        "Weight input_size_per_partition = {} is not divisible by weight quantization block_k "
        "= {}.",
        p.per_rank, block.k);
    return p;
  }
  if (l.sharding != model::Sharding::kColumn || (tp <= 1 && !Merged(l))) return std::nullopt;
  p.per_rank = l.out_features / tp;
  p.how = How(l.out_features, "output features", group, tp);
  // GQA K and V with fewer KV heads than ranks: each rank holds one whole head.
  const bool kv = l.name == "k_proj" || l.name == "v_proj";
  if (kv && l.role == model::OpRole::kAttention && model.gqa.num_kv_heads > 0 &&
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

// The smallest EP that leaves every expert whole blocks and is a valid EP
// (divides TP and the expert count); 0 when none does.
int WholeBlockEp(const spec::LayoutSpec& layout, const model::ModelDesc& model) {
  const int b = std::lcm(model.fp8_block.n, model.fp8_block.k);
  for (int ep = 1; ep <= layout.tp; ++ep) {
    if (layout.tp % ep != 0 || model.moe.num_experts % ep != 0) continue;
    if ((model.moe.moe_intermediate / (layout.tp / ep)) % b == 0) return ep;
  }
  return 0;
}

}  // namespace

std::vector<PartialBlock> PartialBlocks(const spec::LayoutSpec& layout,
                                        const spec::EngineSpec& engine,
                                        const model::ModelDesc& model) {
  std::vector<PartialBlock> out;
  if (!model.fp8_block.any()) return out;
  // Each distinct weight once (the same name and shape recur in every layer).
  std::set<std::tuple<std::string, int64_t, int64_t>> seen;
  for (const auto& layer : model.layers)
    for (const auto& l : layer.linears) {
      if (l.dtype != model::DType::kFp8) continue;
      if (!seen.insert({l.name, l.in_features, l.out_features}).second) continue;
      if (std::optional<PartialBlock> p = PartialBlockOf(l, model, layout, engine))
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
  std::vector<std::string> fixes;
  auto has = [&](model::OpRole role) {
    return std::any_of(partial.begin(), partial.end(),
                       [&](const PartialBlock& p) { return p.role == role; });
  };
  if (has(model::OpRole::kRoutedExpert)) {
    const int ep = WholeBlockEp(layout, model);
    fixes.push_back(ep > 0 ? fmt::format("ep = {} for the experts (MoE-TP {} keeps whole blocks)",
                                         ep, layout.tp / ep)
                           : "a smaller TP for the experts");
  }
  if (has(model::OpRole::kDenseMlp)) fixes.push_back("moe-dense-tp-size = 1 for the dense MLP");
  if (has(model::OpRole::kSharedExpert) || has(model::OpRole::kAttention) ||
      (!has(model::OpRole::kRoutedExpert) && !has(model::OpRole::kDenseMlp)))
    fixes.push_back("a smaller TP");
  fixes.push_back("an unquantized checkpoint");
  std::string fix;
  for (size_t i = 0; i < fixes.size(); ++i)
    fix += (i == 0 ? "" : i + 1 == fixes.size() ? ", or " : ", ") + fixes[i];
  return fmt::format(
      "splits block-FP8 weights (quantization_config.weight_block_size [{}, {}] in {}) into "
      "partial blocks, and SGLang refuses to load it: \"{}\" ({}: {}){}. Use {}",
      model.fp8_block.n, model.fp8_block.k, model.source_path, first.refusal, first.weight,
      first.how, others.empty() ? "" : "; also partial per rank: " + others, fix);
}

}  // namespace ppsearch::plan
