// Pipeline stages: layer split, what each stage holds, and the collectives
// its TP group runs per forward pass. Follows SGLang v0.5.18, python/sglang/srt/:
// distributed/utils.py get_pp_indices, models/*.py (lm_head placement) and
// managers/scheduler_pp_mixin.py _pp_send_dict_to_next_stage (send-allgather).

#include <fmt/format.h>

#include <tuple>

#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

void CountLayerKinds(const model::ModelDesc& model, StagePlan& stage) {
  for (int i = stage.first_layer; i < stage.end_layer; ++i) {
    if (i >= static_cast<int>(model.layers.size())) break;
    const model::LayerDesc& layer = model.layers[i];
    switch (layer.attention) {
      case model::AttentionKind::kMla:
        ++stage.mla_layers;
        break;
      case model::AttentionKind::kKda:
        ++stage.kda_layers;
        break;
      case model::AttentionKind::kGqa:
        ++stage.gqa_layers;
        break;
      case model::AttentionKind::kNone:
        break;
    }
    if (layer.ffn == model::FfnKind::kMoe) {
      ++stage.moe_layers;
    } else {
      ++stage.dense_layers;
    }
  }
}

// With moe-a2a-backend "none" every layer ends its attention with a
// row-parallel o_proj and its MLP/MoE with a row-parallel down projection (the
// MoE combines routed and shared experts before one reduction): two
// all-reduces of [tokens, hidden]. VocabParallelEmbedding adds one on stage 0;
// the logits of the last token of each sequence are all-gathered on the last.
// With "deepep" a MoE layer reduce-scatters attention's output and
// all-gathers its tokens before the next attention (as many bytes as the two
// all-reduces), and dispatches and combines through DeepEP.
StageCollectives StageCollectivesFor(const model::ModelDesc& model, const StagePlan& stage, int tp,
                                     int nodes_spanned, bool deepep) {
  StageCollectives c;
  c.nodes_spanned = nodes_spanned;
  c.allreduce_bytes_per_token = static_cast<int64_t>(model.hidden) * kBf16Bytes;
  c.allgather_bytes_per_sequence = static_cast<int64_t>(model.vocab) * kBf16Bytes;
  if (tp <= 1) return c;
  for (int i = stage.first_layer; i < stage.end_layer; ++i) {
    const bool has_attention = i >= static_cast<int>(model.layers.size()) ||
                               model.layers[i].attention != model::AttentionKind::kNone;
    c.allreduce_count += has_attention ? 2 : 1;
    if (deepep && i < static_cast<int>(model.layers.size()) &&
        model.layers[i].ffn == model::FfnKind::kMoe)
      c.alltoall_count += 2;
  }
  if (stage.has_embedding) ++c.allreduce_count;
  if (stage.has_lm_head) ++c.allgather_count;
  return c;
}

}  // namespace

std::string PartitionError(const std::vector<int>& partition, int num_layers, int pp) {
  if (partition.empty()) return "";
  if (static_cast<int>(partition.size()) != pp)
    return fmt::format("len(partitions)={} does not match pp_size={}.", partition.size(), pp);
  int64_t sum = 0;
  for (const int layers : partition) sum += layers;
  if (sum != num_layers)
    return fmt::format("sum(partitions)={} does not match num_hidden_layers={}.", sum, num_layers);
  return "";
}

std::pair<int, int> StageLayerRange(int num_layers, int pp, int pp_rank,
                                    const std::vector<int>& partition) {
  if (!partition.empty() && PartitionError(partition, num_layers, pp).empty()) {
    int first = 0;
    for (int s = 0; s < pp_rank; ++s) first += partition[static_cast<size_t>(s)];
    return {first, first + partition[static_cast<size_t>(pp_rank)]};
  }
  const int base = num_layers / pp;
  const int remainder = num_layers % pp;
  // Stages before pp - remainder get `base` layers, the rest base + 1.
  const int short_stages = pp - remainder;
  const int first = pp_rank <= short_stages
                        ? pp_rank * base
                        : short_stages * base + (pp_rank - short_stages) * (base + 1);
  const int size = pp_rank >= short_stages ? base + 1 : base;
  return {first, first + size};
}

std::vector<StagePlan> BuildStages(const model::ModelDesc& model, const spec::LayoutSpec& layout,
                                   const EngineConfig& engine,
                                   const std::vector<TpGroup>& tp_groups) {
  const int pp = layout.pp;
  const bool lm_head_everywhere = LmHeadOnEveryStage(model);
  std::vector<StagePlan> stages;
  for (int s = 0; s < pp; ++s) {
    StagePlan stage;
    stage.pp_rank = s;
    std::tie(stage.first_layer, stage.end_layer) =
        StageLayerRange(model.num_layers, pp, s, engine.pp_layer_partition);
    stage.nodes = tp_groups[s].nodes;
    stage.has_embedding = s == 0;
    stage.has_lm_head = s == pp - 1;
    stage.holds_lm_head_weights = stage.has_lm_head || lm_head_everywhere;
    CountLayerKinds(model, stage);
    TpSplit split = SplitOf(layout);
    split.whole_shared_experts = SharedExpertsWhole(engine);
    stage.weight_mib_per_rank =
        StageWeightBytesPerRank(model, stage, split, VocabSplitOf(layout, engine)) / kBytesPerMib;
    stage.kv_bytes_per_token_per_rank = StageKvBytesPerTokenPerRank(model, stage, split.attn_tp);
    stage.state_bytes_per_request_per_rank =
        StageStateBytesPerRequestPerRank(model, stage, split.attn_tp);
    stage.collectives =
        StageCollectivesFor(model, stage, layout.tp, static_cast<int>(tp_groups[s].nodes.size()),
                            engine.moe_a2a_backend == "deepep");
    stages.push_back(std::move(stage));
  }
  return stages;
}

}  // namespace ppsearch::plan
