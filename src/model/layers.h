#pragma once
// Builders for the weights of one decoder layer, from shapes. Each function
// documents where its parameter formula comes from; the dtype of every weight
// is looked up in the checkpoint's Quantization by its Hugging Face module
// name, so the reference implementations' names appear here.

#include <cstdint>
#include <initializer_list>
#include <string>

#include "model/model.h"
#include "model/quantization.h"

namespace ppsearch::model {

// Appends weights to one layer. `module` names are relative to the layer
// ("self_attn.q_a_proj"); the builder prefixes "model.layers.<index>.".
class LayerBuilder {
 public:
  LayerBuilder(LayerDesc& layer, const Quantization& quant) : layer_(layer), quant_(quant) {}

  void Add(const std::string& name, const std::string& module, int64_t in_features,
           int64_t out_features, Sharding sharding, OpRole role, int64_t count = 1,
           int64_t active_count = 1);
  // Marks the named linears of this layer as one GEMM, `gemm`: SGLang loads
  // them into one merged weight and multiplies the shared input once.
  void Fuse(const std::string& gemm, std::initializer_list<std::string> names);
  // Norm weights, biases, conv filters: bf16 vectors too small to shard or cost.
  void AddSmall(int64_t params) { layer_.norm_params += params; }
  LayerDesc& layer() { return layer_; }

 private:
  LayerDesc& layer_;
  const Quantization& quant_;
};

// input_layernorm and post_attention_layernorm, hidden each.
void AddLayerNorms(int hidden, LayerBuilder& builder);

// DeepSeek multi-head latent attention; `output_gate` is Kimi K3's
// mla_use_output_gate (a sigmoid gate on the attention output).
void AddMla(const MlaShape& mla, int hidden, bool output_gate, LayerBuilder& builder);

// Kimi Delta Attention (Kimi Linear / K3 linear-attention layers).
// `full_rank_gate`: the output gate is a hidden->heads*head_dim matrix rather
// than a low-rank pair through head_dim (the forget gate stays low rank).
void AddKda(const KdaShape& kda, int hidden, bool full_rank_gate, LayerBuilder& builder);

struct GqaOptions {
  bool qk_norm = false;   // Qwen3: RMSNorm(head_dim) on q and k
  bool qkv_bias = false;  // Qwen2, or attention_bias: true
};
void AddGqa(const GqaShape& gqa, int hidden, const GqaOptions& options, LayerBuilder& builder);

// SwiGLU MLP: gate and up hidden->intermediate (column), down back (row).
void AddDenseMlp(int hidden, int intermediate, LayerBuilder& builder);

// Where a family's MoE block keeps its weights, for quantization matching.
struct MoeNames {
  std::string block = "mlp";  // Kimi Linear: "block_sparse_moe"
  // Per-expert weight names (the fused gate_up is matched by its gate part).
  std::string expert_gate = "gate_proj";  // Kimi Linear: "w1"
  std::string expert_down = "down_proj";  // Kimi Linear: "w2"
};
struct MoeOptions {
  MoeNames names;
  bool router_bias = false;  // sigmoid routers carry e_score_correction_bias
  bool latent_norm = false;  // latent_moe_use_norm: RMSNorm on the latent
};
void AddMoe(const MoeShape& moe, int hidden, const MoeOptions& options, LayerBuilder& builder);

}  // namespace ppsearch::model
