// What one TP rank of a stage holds: weights, KV cache per token, linear-
// attention state per request. Follows SGLang v0.5.18, python/sglang/srt/:
// models/*.py (lm_head placement) and mem_cache/kv_cache_configurator.py.

#include <algorithm>
#include <cstdlib>

#include "memory/sglang_reserve.h"
#include "plan/disaggregation.h"
#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

// Every sharded kind leaves 1/tp of the tensor on a rank. kExpert too: EP
// splits the experts and MoE-TP (tp/ep) splits each expert's intermediate,
// so a rank holds (1/ep) x (1/moe_tp) = 1/tp of all routed-expert weights.
double LinearBytesPerRank(const model::Linear& linear, int tp) {
  const double bytes = static_cast<double>(linear.params()) * model::BytesPerParam(linear.dtype);
  return linear.sharding == model::Sharding::kReplicated ? bytes : bytes / tp;
}

// The group a linear is split over: with DP attention the attention
// projections are split over attn_tp = tp / dp ranks (each DP group holds a
// whole copy), the MLP and the experts over the whole TP group; shared
// experts are whole under the all-to-all backends that build them so.
int WaysOf(const model::Linear& linear, const TpSplit& split) {
  if (linear.role == model::OpRole::kSharedExpert && split.whole_shared_experts) return 1;
  return linear.role == model::OpRole::kAttention ? split.attn_tp : split.tp;
}

int64_t PrefillLogitRows(const spec::Spec& spec, int64_t chunk_tokens) {
  // A chunk ends the prompts that finish inside it: with prompts of at least
  // `shortest` tokens, at most chunk / shortest + 1 of them (one may finish
  // at its start), and never more than the chunk's tokens.
  const spec::WorkloadSpec& w = spec.workload;
  const double ratio = w.input_distribution == "fixed" ? 1.0 : w.range_ratio;
  const int64_t shortest =
      std::max<int64_t>(static_cast<int64_t>(static_cast<double>(w.input_tokens) * ratio), 1);
  return std::clamp<int64_t>(chunk_tokens / shortest + 1, 1, std::max<int64_t>(chunk_tokens, 1));
}

bool UsesAttention(const model::ModelDesc& model, model::AttentionKind kind) {
  return std::any_of(model.layers.begin(), model.layers.end(),
                     [&](const model::LayerDesc& l) { return l.attention == kind; });
}

// The CUDA graphs SGLang captures and what its reserve for them depends on,
// from the flags as cuda_graph_hook.py parse_cuda_graph_config and
// apply_cuda_graph_compatibility resolve them: --disable-cuda-graph turns
// both off; the per-phase switches and backends one; the prefill graph's
// default backend (breakable) is turned off at pp > 1, for KDA models and
// for an all-to-all backend it is not validated with, unless the prefill
// backend is chosen explicitly.
void ResolveGraphs(const EngineConfig& e, const model::ModelDesc& model,
                   const spec::LayoutSpec& layout, memory::MemoryInputs& in) {
  const int pp = layout.pp;
  const std::string& a2a = e.moe_a2a_backend;
  in.deepep = a2a == "deepep";
  // DP attention is a layout dimension ([sweep] dp), not an engine flag.
  in.dp_attention = layout.dp > 1;
  in.dp_size = std::max(layout.dp, 1);
  in.mla = UsesAttention(model, model::AttentionKind::kMla);
  const bool all_off = e.disable_cuda_graph;
  in.decode_graph = !all_off && !e.disable_decode_cuda_graph;
  if (e.cuda_graph_backend_decode) in.decode_graph = *e.cuda_graph_backend_decode != "disabled";
  if (e.cuda_graph_backend_prefill) {
    in.prefill_graph = *e.cuda_graph_backend_prefill != "disabled";
  } else {
    const bool validated_a2a =
        a2a == "none" || a2a == "deepep" || a2a == "megamoe" || a2a == "flashinfer";
    in.prefill_graph = !all_off && !e.disable_prefill_cuda_graph && pp == 1 &&
                       !UsesAttention(model, model::AttentionKind::kKda) && validated_a2a;
  }
  if (e.cuda_graph_max_bs) in.cuda_graph_max_bs = *e.cuda_graph_max_bs;
  if (e.cuda_graph_max_bs_prefill) in.prefill_graph_max_bs = *e.cuda_graph_max_bs_prefill;
}

// The state pool's settings (memory/state_pool.h) from the flags, the
// layout and the SGLang version.
memory::StatePoolSettings StatePoolSettingsOf(const EngineConfig& e, const model::ModelDesc& model,
                                              const spec::LayoutSpec& layout, int attn_tp,
                                              bool pd_server) {
  memory::StatePoolSettings s;
  s.full_memory_ratio = e.mamba_full_memory_ratio;
  s.max_cache_size = e.max_mamba_cache_size;
  s.radix_cache = !e.disable_radix_cache;
  memory::SlotRuleInputs rule;
  rule.radix_cache = s.radix_cache;
  rule.strategy = e.mamba_radix_cache_strategy;
  rule.overlap_disabled_by_user = e.disable_overlap_schedule;
  rule.page_size = e.page_size;
  rule.pp = std::max(layout.pp, 1);
  // The hybrid models ppsearch reads (Kimi Linear, Kimi K3) are on SGLang's
  // extra-buffer list, which needs the triton linear-attention backend.
  rule.extra_buffer_supported = e.linear_attn_backend == "triton";
  // The variable exists from 0.5.17 on; an older SGLang ignores it. The
  // lazy buffer's refusal under PD came with the same release.
  const bool since_0517 = e.version_code < 0 || e.version_code >= 517;
  rule.skip_decode_lock = e.mamba_skip_decode_lock && since_0517;
  rule.pd_refuses_lazy = pd_server && since_0517;
  const memory::SlotRule resolved = memory::ResolveSlotRule(rule);
  s.slots_per_request = resolved.slots_per_request;
  s.decode_slots_per_request = resolved.decode_slots_per_request;
  s.rule_refusal = resolved.refusal;
  // Before 0.5.17 (PR #33666) every stage paid for the whole model's state
  // (at PP1 the same bytes) and the padding slot was left out of the solve.
  s.whole_model_per_stage = e.version_code >= 0 && e.version_code < 517;
  s.version_known = e.version_code >= 0;
  StagePlan whole;
  whole.first_layer = 0;
  whole.end_layer = static_cast<int>(model.layers.size());
  s.whole_model_bytes_per_request =
      static_cast<double>(StageStateBytesPerRequestPerRank(model, whole, attn_tp));
  return s;
}

}  // namespace

TpSplit SplitOf(const spec::LayoutSpec& layout) {
  TpSplit split;
  split.tp = std::max(layout.tp, 1);
  // SGLang's attn_tp_size = tp_size // dp_size (layers/dp_attention.py
  // compute_dp_attention_world_info); a dp that does not divide tp is refused
  // (validation.cc) and planned here as plain TP.
  split.attn_tp = layout.dp > 1 && split.tp % layout.dp == 0 ? split.tp / layout.dp : split.tp;
  return split;
}

VocabSplit VocabSplitOf(const spec::LayoutSpec& layout, const EngineConfig& engine) {
  const TpSplit split = SplitOf(layout);
  const bool dp_attention = split.attn_tp != split.tp;
  VocabSplit vocab;
  vocab.embedding_tp = dp_attention ? 1 : split.tp;
  vocab.lm_head_tp = dp_attention && engine.enable_dp_lm_head ? split.attn_tp : split.tp;
  return vocab;
}

bool LmHeadOnEveryStage(const model::ModelDesc& model) {
  // llama.py and qwen3_moe.py construct ParallelLMHead unconditionally;
  // deepseek_v2.py (and the Kimi classes built on it) only on the last rank.
  return model.family == "llama" || model.family == "qwen3_moe";
}

double StageWeightBytesPerRank(const model::ModelDesc& model, const StagePlan& stage,
                               const TpSplit& split, const VocabSplit& vocab) {
  double bytes = 0;
  for (int i = stage.first_layer; i < stage.end_layer; ++i) {
    if (i >= static_cast<int>(model.layers.size())) break;
    const model::LayerDesc& layer = model.layers[i];
    for (const model::Linear& linear : layer.linears)
      bytes += LinearBytesPerRank(linear, WaysOf(linear, split));
    bytes += static_cast<double>(layer.norm_params) * kBf16Bytes;  // norms are replicated
  }
  return bytes + StageEmbeddingBytesPerRank(model, stage, vocab.embedding_tp) +
         StageLmHeadBytesPerRank(model, stage, vocab.lm_head_tp);
}

int64_t StageKvBytesPerTokenPerRank(const model::ModelDesc& model, const StagePlan& stage,
                                    int attn_tp) {
  const int tp = attn_tp;  // KV heads are split like the attention that reads them
  int64_t bytes = 0;
  for (int i = stage.first_layer; i < stage.end_layer; ++i) {
    if (i >= static_cast<int>(model.layers.size())) break;
    const model::LayerDesc& layer = model.layers[i];
    if (layer.attention == model::AttentionKind::kGqa && model.gqa.num_kv_heads > 0) {
      // K/V heads are split over TP; with fewer heads than ranks each rank
      // keeps a replica of one head (at least one head per rank).
      const int kv_heads = model.gqa.num_kv_heads;
      const int heads_per_rank = std::max(1, kv_heads / tp);
      bytes += layer.kv_bytes_per_token * heads_per_rank / kv_heads;
    } else {
      // MLA's compressed latent (kv_lora_rank + rope dim) is not split by head,
      // so every TP rank caches all of it.
      bytes += layer.kv_bytes_per_token;
    }
  }
  return bytes;
}

int64_t StageStateBytesPerRequestPerRank(const model::ModelDesc& model, const StagePlan& stage,
                                         int attn_tp) {
  // KDA's recurrent and conv states are per head; heads are split over the
  // attention's TP group.
  const int tp = attn_tp;
  int64_t bytes = 0;
  for (int i = stage.first_layer; i < stage.end_layer; ++i) {
    if (i >= static_cast<int>(model.layers.size())) break;
    bytes += model.layers[i].state_bytes_per_request / tp;
  }
  return bytes;
}

double StageEmbeddingBytesPerRank(const model::ModelDesc& model, const StagePlan& stage, int tp) {
  return stage.has_embedding ? LinearBytesPerRank(model.embedding, tp) : 0;
}

double StageLmHeadBytesPerRank(const model::ModelDesc& model, const StagePlan& stage, int tp) {
  // A tied LM head shares the embedding's storage only where both live on
  // the same stage; the last stage of a pipeline loads its own copy.
  double bytes = 0;
  if (stage.holds_lm_head_weights && !(model.tie_word_embeddings && stage.has_embedding))
    bytes += LinearBytesPerRank(model.lm_head, tp);
  if (stage.has_lm_head) bytes += static_cast<double>(model.final_norm_params) * kBf16Bytes;
  return bytes;
}

memory::MemoryInputs StageMemoryInputs(const LayoutPlan& plan, const spec::Spec& spec,
                                       const model::ModelDesc& model,
                                       const hardware::HardwareProfile& hw) {
  memory::MemoryInputs in;
  in.gpu_total_mib = hw.memory_mib;
  in.tp = plan.layout.tp;
  in.pp = plan.layout.pp;
  // A prefill batch holds a chunk (SGLang's default scales with the GPU's
  // memory), or max-prefill-tokens with chunking off.
  in.chunked_prefill_size = plan.engine.PrefillBatchTokens();
  // The calibration parameter's prior centre; a prediction sets the calibrated value.
  in.workspace_mib = memory::kDefaultWorkspaceMib;
  in.context_len = ContextLength(plan.engine, model);
  if (plan.engine.mem_fraction_static) in.mem_fraction_static = *plan.engine.mem_fraction_static;
  if (plan.engine.max_running_requests) in.max_running_requests = *plan.engine.max_running_requests;
  if (plan.engine.max_total_tokens) in.max_total_tokens = *plan.engine.max_total_tokens;
  ResolveGraphs(plan.engine, model, plan.layout, in);
  in.state_pool = StatePoolSettingsOf(plan.engine, model, plan.layout, SplitOf(plan.layout).attn_tp,
                                      ResolvePdSettings(spec.engine).mode != "null");
  const int tp = std::max(plan.layout.tp, 1);
  const VocabSplit vocab = VocabSplitOf(plan.layout, plan.engine);
  for (const auto& st : plan.stages) {
    memory::StageFootprint f;
    f.weight_mib = st.weight_mib_per_rank;
    f.kv_bytes_per_token = static_cast<double>(st.kv_bytes_per_token_per_rank);
    f.state_bytes_per_request = static_cast<double>(st.state_bytes_per_request_per_rank);
    f.embedding_mib = StageEmbeddingBytesPerRank(model, st, vocab.embedding_tp) / kBytesPerMib;
    f.lm_head_mib = StageLmHeadBytesPerRank(model, st, vocab.lm_head_tp) / kBytesPerMib;
    f.num_layers = st.num_layers();
    memory::ActivationShape shape;
    shape.first_layer = st.first_layer;
    shape.end_layer = st.end_layer;
    shape.has_lm_head = st.has_lm_head;
    shape.receives = st.pp_rank > 0;
    shape.tp = tp;
    shape.ep = std::max(plan.layout.ep, 1);
    shape.chunk_tokens = in.chunked_prefill_size;
    shape.logit_rows = PrefillLogitRows(spec, in.chunked_prefill_size);
    f.activation = memory::EstimateStageActivation(model, shape);
    f.activation_shape = shape;
    in.stages.push_back(f);
  }
  return in;
}

int64_t ContextLength(const EngineConfig& engine, const model::ModelDesc& model) {
  return engine.context_length.value_or(model.max_context);
}

}  // namespace ppsearch::plan
