#pragma once
// The planner's building blocks, shared by its .cc files and unit tests; not
// part of the planner's public interface (plan.h).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "plan/plan.h"
#include "util/format.h"

namespace ppsearch::plan {

// --- rank_map.cc ---

// Every rank of a pp x tp world on nodes of `gpus_per_node` GPUs. Matches
// SGLang's _calculate_rank_ranges for shapes where stages or TP groups tile
// the nodes (the only shapes it accepts without idle GPUs).
std::vector<RankPlacement> MapRanks(int pp, int tp, int ep, int gpus_per_node);

// One TP group per stage, from the rank map.
std::vector<TpGroup> BuildTpGroups(const std::vector<RankPlacement>& ranks, int pp);

// The dp attention groups of every stage (dp > 1 dividing tp), else none.
std::vector<AttentionGroup> BuildAttentionGroups(const std::vector<RankPlacement>& ranks, int pp,
                                                 int tp, int dp);

// The pp - 1 hops between consecutive stages.
std::vector<StageBoundary> BuildStageBoundaries(const std::vector<RankPlacement>& ranks, int pp,
                                                int tp, const model::ModelDesc& model,
                                                const std::vector<StagePlan>& stages);

// Host name of a node index, or "node<i>?" when the cluster has no such host
// (a layout that needs more GPUs than the cluster has).
std::string HostName(const ClusterSummary& cluster, int node);

// --- stages.cc ---

// SGLang's get_pp_indices: [first, end) layers of stage `pp_rank`; the last
// num_layers % pp stages get one extra layer. A `partition`
// (SGLANG_PP_LAYER_PARTITION) with one entry per stage summing to
// num_layers gives each stage its entry instead; SGLang refuses any other
// (PartitionError), and the even split stands in for it here.
std::pair<int, int> StageLayerRange(int num_layers, int pp, int pp_rank,
                                    const std::vector<int>& partition = {});

// SGLang's ValueError for a partition that does not fit the layout, in its
// words; "" when it fits or is unset.
std::string PartitionError(const std::vector<int>& partition, int num_layers, int pp);

// Layer range, layer counts, nodes, memory and collectives of every stage.
std::vector<StagePlan> BuildStages(const model::ModelDesc& model, const spec::LayoutSpec& layout,
                                   const EngineConfig& engine,
                                   const std::vector<TpGroup>& tp_groups);

// --- memory.cc ---

// Whether SGLang's model class builds lm_head on every PP rank (v0.5.18
// models/llama.py, qwen3_moe.py: yes; deepseek_v2.py: last rank only).
bool LmHeadOnEveryStage(const model::ModelDesc& model);

// The groups a layer's weights are split over: attention over attn_tp
// (tp / dp with DP attention, else tp), everything else over tp.
struct TpSplit {
  int tp = 1;
  int attn_tp = 1;
  bool whole_shared_experts = false;  // SharedExpertsWhole: every rank holds them all
};
TpSplit SplitOf(const spec::LayoutSpec& layout);

// The groups the vocabulary-parallel embedding and LM head are split over.
// With DP attention SGLang builds the embedding whole on every rank
// (VocabParallelEmbedding(enable_tp=not dp attention): models/qwen2_moe.py,
// qwen2.py, deepseek_v2.py) and the LM head over the attention TP group with
// --enable-dp-lm-head (ParallelLMHead(use_attn_tp_group=...)), over TP
// otherwise; without DP attention both are split over TP.
struct VocabSplit {
  int embedding_tp = 1;
  int lm_head_tp = 1;
};
VocabSplit VocabSplitOf(const spec::LayoutSpec& layout, const EngineConfig& engine);

// Weight bytes one TP rank of `stage` holds.
double StageWeightBytesPerRank(const model::ModelDesc& model, const StagePlan& stage,
                               const TpSplit& split, const VocabSplit& vocab);

// Of those, the embedding (stage 0) and the LM head with the final norm.
double StageEmbeddingBytesPerRank(const model::ModelDesc& model, const StagePlan& stage, int tp);
double StageLmHeadBytesPerRank(const model::ModelDesc& model, const StagePlan& stage, int tp);

// KV cache bytes per token of context one rank of `stage` holds, its
// attention split over attn_tp ranks.
int64_t StageKvBytesPerTokenPerRank(const model::ModelDesc& model, const StagePlan& stage,
                                    int attn_tp);

// Linear-attention state bytes per request one rank of `stage` holds.
int64_t StageStateBytesPerRequestPerRank(const model::ModelDesc& model, const StagePlan& stage,
                                         int attn_tp);

// --- validation.cc ---

// Why SGLang would reject (or silently change) this layout on this cluster;
// empty when it is fine. `planned` supplies the per-stage memory.
std::vector<Diagnostic> ValidateLayout(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                       const model::ModelDesc& model,
                                       const hardware::HardwareProfile& hw,
                                       const LayoutPlan& planned);

// --- weight_blocks.cc ---

// A block-FP8 weight whose shard on one rank holds part of a block.
struct PartialBlock {
  std::string weight;  // "experts.gate_up_proj"
  model::OpRole role = model::OpRole::kAttention;
  int64_t per_rank = 0;  // the shard's size along the blocked dimension
  int ways = 1;          // the ranks it is split over (1: the whole width is not whole blocks)
  std::string how;       // "2,048 moe_intermediate_size / MoE-TP 32"
  std::string refusal;   // SGLang's message for it
};

// MoE-TP as SGLang runs it: TP / EP, with EP = TP under the backends that force it.
int MoeTpOf(const spec::LayoutSpec& layout, const EngineConfig& engine);
// How many ranks SGLang splits a (non-expert) weight over: TP, or 1 for the
// dense MLP of an MoE model under moe-dense-tp-size = 1 and for the shared
// experts under the dispatching moe-a2a backends.
int GroupOf(const model::Linear& l, const model::ModelDesc& model, const spec::LayoutSpec& layout,
            const EngineConfig& engine);

// Every distinct block-FP8 weight this layout shards into partial blocks, in
// the order SGLang builds them; empty when the checkpoint is not
// block-quantized or every shard holds whole blocks.
std::vector<PartialBlock> PartialBlocks(const spec::LayoutSpec& layout, const EngineConfig& engine,
                                        const model::ModelDesc& model);

// The layout error for a non-empty PartialBlocks(): SGLang's message for the
// first, the others' per-rank sizes, and the changes that would load.
std::string PartialBlockError(const spec::LayoutSpec& layout, const model::ModelDesc& model,
                              const std::vector<PartialBlock>& partial);

// --- warnings.cc ---

// Spec settings that make measurements misleading (harmful flags, workload shapes).
std::vector<Diagnostic> SpecWarnings(const spec::Spec& spec, const EngineConfig& engine);

// Settings that are fine for some layouts but risky for this one (weights
// that leave no KV room are an error, ValidateLayout's).
std::vector<Diagnostic> LayoutWarnings(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                       const model::ModelDesc& model,
                                       const hardware::HardwareProfile& hw,
                                       const LayoutPlan& planned);

// --- format.cc (FormatThousands comes from util/format.h) ---

// MiB rounded to a whole number with thousands separators.
std::string FormatMib(double mib);
// Parameter counts as people quote them: "2.80T", "61.4B", "7.17M".
std::string FormatParams(int64_t params);
// Bytes as "14,336 B", "28.0 KiB", "3.50 MiB".
std::string FormatBytes(int64_t bytes);

constexpr double kBytesPerMib = 1024.0 * 1024.0;
constexpr int64_t kBf16Bytes = 2;

}  // namespace ppsearch::plan
