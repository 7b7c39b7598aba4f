#pragma once
// The layout planner: for every PP/TP/EP layout of a spec, where each rank
// runs, which GPUs form each TP group and on which nodes, where the pipeline
// stage boundaries fall, which transfers and collectives cross nodes, what
// each rank holds in memory, and whether SGLang would accept the layout.
// Pure functions of (spec, model, hardware); rendering is in render_*.cc.
// Facts about SGLang come from its v0.5.18 source (github.com/sgl-project/sglang,
// python/sglang/srt/); each .cc file names the modules it follows.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hardware/hardware.h"
#include "memory/memory_model.h"
#include "model/model.h"
#include "plan/engine_config.h"
#include "spec/spec.h"
#include "util/source_loc.h"

namespace ppsearch::plan {

// An error or warning tied to the spec key that causes it. `message` is the
// complete line a user reads, already prefixed with location.Where().
struct Diagnostic {
  std::string message;
  SourceLoc location;
  // A layout error's kind, one word per check ("gpu_count", "kv_room", ...;
  // kReasons in validation.cc lists them): what a search counts refusals by.
  // Empty for warnings.
  std::string reason;
};

// Every reason a layout error can carry, in the order the checks run.
const std::vector<std::string>& ErrorReasons();

// One global rank: rank = pp_rank * tp + tp_rank (SGLang's PP groups take
// every tp-th rank), filling nodes in order (node = rank / gpus_per_node).
struct RankPlacement {
  int rank = 0;
  int node = 0;       // index into the cluster's hosts
  int local_gpu = 0;  // CUDA device on that node
  int pp_rank = 0;
  int tp_rank = 0;
  int moe_ep_rank = 0;  // tp_rank / moe_tp: EP groups are built inside the TP group
  int moe_tp_rank = 0;  // tp_rank % moe_tp
};

// The TP group of one pipeline stage. All of its all-reduces travel over the
// slowest link among `nodes`, so a group spanning nodes pays NIC latency and
// bandwidth on every collective.
struct TpGroup {
  int pp_rank = 0;
  std::vector<int> ranks;
  std::vector<int> nodes;  // distinct node indices, ascending
  bool crosses_nodes() const { return nodes.size() > 1; }
};

// With DP attention, one attention group of a stage: the tp / dp ranks of
// its TP group that run attention together for one DP rank's requests
// (SGLang layers/dp_attention.py: dp_rank = tp_rank / attn_tp_size). Each
// holds its own copy of the attention weights and its own KV pool.
struct AttentionGroup {
  int pp_rank = 0;
  int dp_rank = 0;
  std::vector<int> ranks;
  std::vector<int> nodes;  // distinct node indices, ascending
};

// Collectives one forward pass of a stage issues with moe-a2a-backend "none".
struct StageCollectives {
  int allreduce_count = 0;  // 2 per layer (o_proj, MLP/MoE), +1 for the embedding on stage 0
  int allgather_count = 0;  // lm_head logits on the last stage
  // DeepEP's dispatch and combine, 2 per MoE layer (moe-a2a-backend deepep,
  // where a MoE layer's two TP collectives are a reduce-scatter and an
  // all-gather of the same bytes rather than two all-reduces).
  int alltoall_count = 0;
  int64_t allreduce_bytes_per_token = 0;     // hidden x bf16
  int64_t allgather_bytes_per_sequence = 0;  // vocab x bf16 logits, last token of each sequence
  int nodes_spanned = 1;                     // nodes the stage's TP group spans
  bool crosses_nodes() const { return nodes_spanned > 1; }
};

struct StagePlan {
  int pp_rank = 0;
  int first_layer = 0;  // layers [first_layer, end_layer)
  int end_layer = 0;
  std::vector<int> nodes;  // distinct node indices its ranks run on
  int mla_layers = 0;
  int kda_layers = 0;
  int gqa_layers = 0;
  int dense_layers = 0;
  int moe_layers = 0;
  bool has_embedding = false;  // stage 0
  bool has_lm_head = false;    // last stage computes the logits
  // Models whose SGLang class builds ParallelLMHead on every PP rank hold its
  // weights on every stage (SGLang v0.5.18 models/llama.py, qwen3_moe.py;
  // deepseek_v2.py builds it on the last stage only).
  bool holds_lm_head_weights = false;
  double weight_mib_per_rank = 0;
  int64_t kv_bytes_per_token_per_rank = 0;       // MLA latent + GQA K/V of this stage's layers
  int64_t state_bytes_per_request_per_rank = 0;  // KDA recurrent state of this stage's layers
  StageCollectives collectives;

  int num_layers() const { return end_layer - first_layer; }
};

// The hop from stage `from_stage` to from_stage + 1: rank s*tp+i sends to
// (s+1)*tp+i, each sending 1/tp of (hidden_states, residual) (send-allgather).
struct StageBoundary {
  int from_stage = 0;
  // Distinct (sender node, receiver node) pairs over the tp rank pairs.
  std::vector<std::pair<int, int>> node_pairs;
  int cross_node_rank_pairs = 0;         // how many of the tp rank pairs cross nodes
  int64_t bytes_per_token = 0;           // stream vectors x hidden x bf16 (4 x hidden without
                                         // block attention residuals)
  int64_t bytes_per_token_per_rank = 0;  // bytes_per_token / tp
  bool crosses_nodes() const { return cross_node_rank_pairs > 0; }
};

struct LayoutPlan {
  spec::LayoutSpec layout;
  // One instance's ranks (pp x tp); the rank map, stages and memory below are
  // one instance's, laid out on its own first node onwards.
  int world_size = 0;
  // The host indices each instance runs on: whole, disjoint nodes, instance i
  // on [i*k, (i+1)*k). One entry with a single instance.
  std::vector<std::vector<int>> instance_nodes;
  int moe_tp = 1;  // tp / ep
  // The engine settings the layout runs with (resolved once from the spec
  // and SGLang's defaults on this GPU): what the memory plan, the cost model
  // and the simulator read.
  EngineConfig engine;
  // The prefill attention backend (the hardware profile's selection), which
  // with engine's MLA settings decides the form MLA prefill takes
  // (cost/mla_prefill.h).
  std::string prefill_attention_backend;
  bool valid = true;
  std::vector<Diagnostic> errors;
  std::vector<Diagnostic> warnings;
  std::vector<RankPlacement> ranks;
  std::vector<TpGroup> tp_groups;                // one per stage
  int attn_tp = 1;                               // ranks one attention group spans: tp / dp, or tp
  std::vector<AttentionGroup> attention_groups;  // dp per stage with DP attention, else empty
  std::vector<StagePlan> stages;
  std::vector<StageBoundary> boundaries;  // pp - 1 hops
  int cross_node_stage_boundaries = 0;
  int allreduce_per_forward = 0;             // summed over stages
  int cross_node_allreduce_per_forward = 0;  // of those, in TP groups spanning nodes
  int allgather_per_forward = 0;
  int alltoall_per_forward = 0;             // DeepEP dispatch + combine
  int cross_node_alltoall_per_forward = 0;  // of those, in EP groups spanning nodes
  double weight_mib_per_rank_max = 0;
  // SGLang's memory sizing of this layout (memory/memory_model.h): KV pool,
  // per-stage activations, peaks, the tightest stage. Empty `stages` when the
  // GPU size is unknown or nothing could be laid out.
  memory::MemoryPlan memory;
};

struct ModelSummary {
  std::string name;
  std::string family;
  std::string source_path;
  int64_t total_params = 0;
  int64_t active_params = 0;
  int num_layers = 0;
  int hidden = 0;
  int vocab = 0;
  double weight_mib = 0;  // whole model, all ranks together
};

struct ClusterSummary {
  std::vector<std::string> hosts;
  int gpus_per_node = 0;
  int gpus = 0;
  std::string hardware;  // profile name
  std::string gpu_name;
  double gpu_memory_mib = 0;
};

struct Plan {
  std::string spec_path;
  ModelSummary model;
  ClusterSummary cluster;
  std::string moe_a2a_backend = "none";
  std::vector<LayoutPlan> layouts;
  std::vector<Diagnostic> warnings;  // spec-level, independent of the layout

  bool all_valid() const;
  // This plan with only `layout`'s plan (none if it has none), without
  // copying the others.
  Plan Only(const spec::LayoutSpec& layout) const;
};

// Plans one layout with the spec's engine configuration and a search's
// `knobs` over it. Never fails: problems become `errors` (valid = false) and
// whatever can still be computed (rank map, stages) is filled in.
LayoutPlan PlanLayout(const spec::LayoutSpec& layout, const spec::Spec& spec,
                      const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                      const EngineKnobs& knobs = {});

// What the memory model (memory/memory_model.h) needs of a planned layout:
// the GPU, the engine args that size memory, and each stage's footprint.
memory::MemoryInputs StageMemoryInputs(const LayoutPlan& plan, const spec::Spec& spec,
                                       const model::ModelDesc& model,
                                       const hardware::HardwareProfile& hw);

// The context length SGLang serves: [engine.args] context-length, else the
// model config's max_position_embeddings (0 when neither says).
int64_t ContextLength(const EngineConfig& engine, const model::ModelDesc& model);

// Plans every layout of spec.sweep.layouts (with a search's `knobs`) and
// collects the spec-level warnings.
Plan PlanSearch(const spec::Spec& spec, const model::ModelDesc& model,
                const hardware::HardwareProfile& hw, const EngineKnobs& knobs = {});

// nccl-tests-style text: a header with model and cluster, then one block per layout.
std::string RenderPlanText(const Plan& plan);

// Machine-readable form; key names are a contract (tests and other tools read them).
nlohmann::json PlanToJson(const Plan& plan);

}  // namespace ppsearch::plan
