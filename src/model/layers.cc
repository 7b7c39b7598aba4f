#include "model/layers.h"

namespace ppsearch::model {
namespace {

constexpr int64_t kBf16Bytes = 2;
constexpr int64_t kFp32Bytes = 4;

}  // namespace

void LayerBuilder::Add(const std::string& name, const std::string& module, int64_t in_features,
                       int64_t out_features, Sharding sharding, OpRole role, int64_t count,
                       int64_t active_count) {
  Linear linear;
  linear.name = name;
  linear.in_features = in_features;
  linear.out_features = out_features;
  linear.count = count;
  linear.active_count = active_count;
  linear.sharding = sharding;
  linear.role = role;
  linear.dtype =
      quant_.DTypeFor("model.layers." + std::to_string(layer_.index) + "." + module, role);
  layer_.linears.push_back(std::move(linear));
}

void LayerBuilder::Fuse(const std::string& gemm, std::initializer_list<std::string> names) {
  for (const std::string& name : names)
    for (Linear& linear : layer_.linears)
      if (linear.name == name) linear.fused_gemm = gemm;
}

void AddLayerNorms(int hidden, LayerBuilder& builder) { builder.AddSmall(2 * int64_t{hidden}); }

// Projections as in DeepseekV3Attention:
//   q_a  hidden -> q_lora                   (replicated: every rank needs the whole latent)
//   q_b  q_lora -> heads * (nope + rope)    (column: split by head)
//   kv_a hidden -> kv_lora + rope           (replicated; "kv_a_proj_with_mqa")
//   kv_b kv_lora -> heads * (nope + v)      (column)
//   o    heads * v -> hidden                (row)
// Without q_lora, q_proj maps hidden -> heads * (nope + rope) directly.
// q_a and kv_a run as one GEMM: SGLang's DeepseekV2AttentionMLA builds them
// as one fused_qkv_a_proj_with_mqa (python/sglang/srt/models/deepseek_v2.py),
// and Kimi K3's load_weights copies both checkpoint weights into it
// (kimi_k3.py at the commit cited in AddKda).
// The cache holds the compressed latent plus the shared rope key per token,
// (kv_lora + rope) bf16 values, independent of the head count.
void AddMla(const MlaShape& mla, int hidden, bool output_gate, LayerBuilder& builder) {
  const int64_t q_head_dim = int64_t{mla.qk_nope_head_dim} + mla.qk_rope_head_dim;
  const int64_t heads = mla.num_heads;
  const OpRole role = OpRole::kAttention;
  builder.layer().attention = AttentionKind::kMla;
  if (mla.q_lora_rank > 0) {
    builder.Add("q_a_proj", "self_attn.q_a_proj", hidden, mla.q_lora_rank, Sharding::kReplicated,
                role);
    builder.Add("q_b_proj", "self_attn.q_b_proj", mla.q_lora_rank, heads * q_head_dim,
                Sharding::kColumn, role);
    builder.AddSmall(mla.q_lora_rank);  // q_a_layernorm
  } else {
    builder.Add("q_proj", "self_attn.q_proj", hidden, heads * q_head_dim, Sharding::kColumn, role);
  }
  builder.Add("kv_a_proj", "self_attn.kv_a_proj_with_mqa", hidden,
              int64_t{mla.kv_lora_rank} + mla.qk_rope_head_dim, Sharding::kReplicated, role);
  if (mla.q_lora_rank > 0) builder.Fuse("fused_qkv_a_proj_with_mqa", {"q_a_proj", "kv_a_proj"});
  builder.AddSmall(mla.kv_lora_rank);  // kv_a_layernorm
  builder.Add("kv_b_proj", "self_attn.kv_b_proj", mla.kv_lora_rank,
              heads * (int64_t{mla.qk_nope_head_dim} + mla.v_head_dim), Sharding::kColumn, role);
  if (output_gate) {
    // Full-rank gate on the per-head output, split by head like q_b.
    builder.Add("g_proj", "self_attn.g_proj", hidden, heads * mla.v_head_dim, Sharding::kColumn,
                role);
  }
  builder.Add("o_proj", "self_attn.o_proj", heads * mla.v_head_dim, hidden, Sharding::kRow, role);
  builder.layer().kv_bytes_per_token =
      (int64_t{mla.kv_lora_rank} + mla.qk_rope_head_dim) * kBf16Bytes;
}

// KimiDeltaAttention, with P = heads * head_dim:
//   q, k, v  hidden -> P (column)          o  P -> hidden (row)
//   f (forget gate): always low rank, f_a hidden -> head_dim (replicated)
//     then f_b head_dim -> P (column)
//   g (output gate): hidden -> P (column) when full rank, else the same
//     low-rank pair g_a/g_b
//   b (beta)  hidden -> heads (column)
// Kimi K3's use_full_rank_gate widens the output gate only: SGLang's
// KimiK3DeltaAttention (python/sglang/srt/models/kimi_k3.py, sgl-project/
// sglang@0000e9b46f38dd9055ecad825a42c47a047077e6) loads q, k, v and g_proj
// into one fused column-parallel weight and keeps f_a_proj (ReplicatedLinear)
// and f_b_proj as separate modules, and its load_weights maps no f_proj.
// GEMMs as SGLang runs them (unquantized attention, attention TP = TP):
// full-rank gate, [q | k | v | g] in one (fused_qkvg_proj) and [f_a | b] in
// one (_merge_bfa_weights), then f_b; low-rank gates, [q | k | v | b | f_a |
// g_a] in one (fused_qkvbfg_a_proj), then f_b and g_b batched
// (fused_fg_b_proj).
// Small vectors: short causal conv filters on q, k and v (3 * P * kernel),
// A_log (heads), dt_bias (P) and the gated output RMSNorm (head_dim).
// State per request: one fp32 head_dim x head_dim matrix per head, plus the
// conv windows (kernel - 1 past inputs of the 3 * P conv channels, bf16).
void AddKda(const KdaShape& kda, int hidden, bool full_rank_gate, LayerBuilder& builder) {
  const int64_t proj = int64_t{kda.num_heads} * kda.head_dim;
  const OpRole role = OpRole::kAttention;
  builder.layer().attention = AttentionKind::kKda;
  builder.Add("q_proj", "self_attn.q_proj", hidden, proj, Sharding::kColumn, role);
  builder.Add("k_proj", "self_attn.k_proj", hidden, proj, Sharding::kColumn, role);
  builder.Add("v_proj", "self_attn.v_proj", hidden, proj, Sharding::kColumn, role);
  builder.Add("f_a_proj", "self_attn.f_a_proj", hidden, kda.head_dim, Sharding::kReplicated, role);
  builder.Add("f_b_proj", "self_attn.f_b_proj", kda.head_dim, proj, Sharding::kColumn, role);
  if (full_rank_gate) {
    builder.Add("g_proj", "self_attn.g_proj", hidden, proj, Sharding::kColumn, role);
  } else {
    builder.Add("g_a_proj", "self_attn.g_a_proj", hidden, kda.head_dim, Sharding::kReplicated,
                role);
    builder.Add("g_b_proj", "self_attn.g_b_proj", kda.head_dim, proj, Sharding::kColumn, role);
  }
  builder.Add("b_proj", "self_attn.b_proj", hidden, kda.num_heads, Sharding::kColumn, role);
  if (full_rank_gate) {
    builder.Fuse("fused_qkvg_proj", {"q_proj", "k_proj", "v_proj", "g_proj"});
    builder.Fuse("bfa", {"f_a_proj", "b_proj"});
  } else {
    builder.Fuse("fused_qkvbfg_a_proj",
                 {"q_proj", "k_proj", "v_proj", "b_proj", "f_a_proj", "g_a_proj"});
    builder.Fuse("fused_fg_b_proj", {"f_b_proj", "g_b_proj"});
  }
  builder.Add("o_proj", "self_attn.o_proj", proj, hidden, Sharding::kRow, role);
  builder.AddSmall(3 * proj * kda.conv_kernel + kda.num_heads + proj + kda.head_dim);
  const int64_t recurrent_bytes = int64_t{kda.num_heads} * kda.head_dim * kda.head_dim * kFp32Bytes;
  const int64_t conv_bytes = int64_t{kda.conv_kernel - 1} * 3 * proj * kBf16Bytes;
  builder.layer().state_bytes_per_request = recurrent_bytes + conv_bytes;
}

// Grouped-query attention: q hidden -> heads * head_dim, k and v
// hidden -> kv_heads * head_dim (all column), o back to hidden (row). The cache
// holds K and V for every KV head: 2 * kv_heads * head_dim bf16 values per token.
void AddGqa(const GqaShape& gqa, int hidden, const GqaOptions& options, LayerBuilder& builder) {
  const int64_t q_width = int64_t{gqa.num_heads} * gqa.head_dim;
  const int64_t kv_width = int64_t{gqa.num_kv_heads} * gqa.head_dim;
  const OpRole role = OpRole::kAttention;
  builder.layer().attention = AttentionKind::kGqa;
  builder.Add("q_proj", "self_attn.q_proj", hidden, q_width, Sharding::kColumn, role);
  builder.Add("k_proj", "self_attn.k_proj", hidden, kv_width, Sharding::kColumn, role);
  builder.Add("v_proj", "self_attn.v_proj", hidden, kv_width, Sharding::kColumn, role);
  builder.Add("o_proj", "self_attn.o_proj", q_width, hidden, Sharding::kRow, role);
  builder.Fuse("qkv_proj", {"q_proj", "k_proj", "v_proj"});  // SGLang's QKVParallelLinear
  if (options.qk_norm) builder.AddSmall(2 * int64_t{gqa.head_dim});
  if (options.qkv_bias) builder.AddSmall(q_width + 2 * kv_width);
  builder.layer().kv_bytes_per_token = 2 * kv_width * kBf16Bytes;
}

void AddDenseMlp(int hidden, int intermediate, LayerBuilder& builder) {
  const OpRole role = OpRole::kDenseMlp;
  builder.layer().ffn = FfnKind::kDense;
  builder.Add("gate_proj", "mlp.gate_proj", hidden, intermediate, Sharding::kColumn, role);
  builder.Add("up_proj", "mlp.up_proj", hidden, intermediate, Sharding::kColumn, role);
  builder.Add("down_proj", "mlp.down_proj", intermediate, hidden, Sharding::kRow, role);
  builder.Fuse("gate_up_proj", {"gate_proj", "up_proj"});  // MergedColumnParallelLinear
}

// A DeepSeek-style MoE block:
//   router        hidden -> num_experts (replicated, bf16)
//   routed        per expert gate_up expert_hidden -> 2 * moe_intermediate and
//                 down moe_intermediate -> expert_hidden; top_k of them run per token
//   shared        one SwiGLU MLP of width num_shared * moe_intermediate on
//                 hidden (how DeepSeek and Kimi build it; same parameters as
//                 num_shared separate experts, one GEMM each)
//   latent (K3)   down hidden -> latent before dispatch and up latent -> hidden
//                 after combine. Replicated: SGLang's KimiK3MoE builds both
//                 as ReplicatedLinear, unquantized (kimi_k3.py at the commit
//                 cited in AddKda), so every TP rank runs them whole.
void AddMoe(const MoeShape& moe, int hidden, const MoeOptions& options, LayerBuilder& builder) {
  const MoeNames& names = options.names;
  const std::string& block = names.block;
  const std::string expert = block + ".experts.0.";
  builder.layer().ffn = FfnKind::kMoe;
  builder.Add("router", block + ".gate", hidden, moe.num_experts, Sharding::kReplicated,
              OpRole::kRouter);
  if (options.router_bias) builder.AddSmall(moe.num_experts);

  const bool latent = moe.expert_hidden != hidden;
  if (latent) {
    builder.Add("latent_down_proj", block + ".routed_expert_down_proj", hidden, moe.expert_hidden,
                Sharding::kReplicated, OpRole::kLatentProj);
    builder.Add("latent_up_proj", block + ".routed_expert_up_proj", moe.expert_hidden, hidden,
                Sharding::kReplicated, OpRole::kLatentProj);
    if (options.latent_norm) builder.AddSmall(moe.expert_hidden);
  }
  builder.Add("experts.gate_up_proj", expert + names.expert_gate, moe.expert_hidden,
              2 * int64_t{moe.moe_intermediate}, Sharding::kExpert, OpRole::kRoutedExpert,
              moe.num_experts, moe.top_k);
  builder.Add("experts.down_proj", expert + names.expert_down, moe.moe_intermediate,
              moe.expert_hidden, Sharding::kExpert, OpRole::kRoutedExpert, moe.num_experts,
              moe.top_k);

  if (moe.num_shared_experts > 0) {
    const int64_t shared_width = int64_t{moe.num_shared_experts} * moe.moe_intermediate;
    const std::string shared = block + ".shared_experts.";
    const OpRole role = OpRole::kSharedExpert;
    builder.Add("shared_experts.gate_proj", shared + "gate_proj", hidden, shared_width,
                Sharding::kColumn, role);
    builder.Add("shared_experts.up_proj", shared + "up_proj", hidden, shared_width,
                Sharding::kColumn, role);
    builder.Add("shared_experts.down_proj", shared + "down_proj", shared_width, hidden,
                Sharding::kRow, role);
    builder.Fuse("shared_experts.gate_up_proj",
                 {"shared_experts.gate_proj", "shared_experts.up_proj"});
  }
  // Kimi K3 (latent MoE with shared experts, unquantized front weights, no
  // all-to-all backend): KimiK3MoE._merge_front_weights reads the hidden
  // states once through [shared gate_up | router | latent down] (kimi_k3.py).
  if (latent && moe.num_shared_experts > 0)
    builder.Fuse("front", {"shared_experts.gate_proj", "shared_experts.up_proj", "router",
                           "latent_down_proj"});
}

}  // namespace ppsearch::model
