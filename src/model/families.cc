#include "model/families.h"

#include <optional>
#include <string>
#include <vector>

#include "model/layers.h"

namespace ppsearch::model {
namespace {

Result<MlaShape> ReadMla(const ConfigReader& config, int num_heads) {
  MlaShape mla;
  mla.num_heads = num_heads;
  // DeepSeek-V2-Lite style configs write q_lora_rank: null for "no q compression".
  PPS_ASSIGN_OR_RETURN(mla.q_lora_rank, config.NonNegativeIntOr("q_lora_rank", 0));
  PPS_ASSIGN_OR_RETURN(mla.kv_lora_rank, config.PositiveInt("kv_lora_rank"));
  PPS_ASSIGN_OR_RETURN(mla.qk_nope_head_dim, config.PositiveInt("qk_nope_head_dim"));
  PPS_ASSIGN_OR_RETURN(mla.qk_rope_head_dim, config.PositiveInt("qk_rope_head_dim"));
  PPS_ASSIGN_OR_RETURN(mla.v_head_dim, config.PositiveInt("v_head_dim"));
  return mla;
}

Result<GqaShape> ReadGqa(const ConfigReader& config, const ModelDesc& model) {
  GqaShape gqa;
  gqa.num_heads = model.num_attention_heads;
  PPS_ASSIGN_OR_RETURN(gqa.num_kv_heads,
                       config.PositiveIntOr("num_key_value_heads", gqa.num_heads));
  // Each KV head serves a whole group of query heads (transformers and
  // SGLang refuse a config where they do not divide).
  if (gqa.num_heads % gqa.num_kv_heads != 0)
    return config.Invalid("num_key_value_heads",
                          "expected a divisor of num_attention_heads " +
                              std::to_string(gqa.num_heads) +
                              " (each KV head serves a whole group of query heads), got " +
                              std::to_string(gqa.num_kv_heads));
  if (!config.Has("head_dim") && model.hidden % gqa.num_heads != 0) {
    return config.Invalid("head_dim", "missing, and hidden_size " + std::to_string(model.hidden) +
                                          " is not divisible by num_attention_heads " +
                                          std::to_string(gqa.num_heads));
  }
  PPS_ASSIGN_OR_RETURN(gqa.head_dim,
                       config.PositiveIntOr("head_dim", model.hidden / gqa.num_heads));
  return gqa;
}

// DeepSeek's and Kimi's rule: the first `first_k_dense_replace` layers are
// dense, then every `moe_layer_freq`-th layer is MoE.
struct MoePlacement {
  int first_k_dense = 0;
  int layer_freq = 1;
  bool IsMoe(int layer) const { return layer >= first_k_dense && layer % layer_freq == 0; }
};

Result<MoePlacement> ReadMoePlacement(const ConfigReader& config) {
  MoePlacement placement;
  PPS_ASSIGN_OR_RETURN(placement.first_k_dense,
                       config.NonNegativeIntOr("first_k_dense_replace", 0));
  PPS_ASSIGN_OR_RETURN(placement.layer_freq, config.PositiveIntOr("moe_layer_freq", 1));
  return placement;
}

// Reads intermediate_size only when some layer is dense, so MoE-only configs
// need not carry it.
Status ReadDenseIntermediate(const ConfigReader& config, bool needed, ModelDesc& model) {
  if (!needed && !config.Has("intermediate_size")) return Status::Ok();
  PPS_ASSIGN_OR_RETURN(model.dense_intermediate, config.PositiveInt("intermediate_size"));
  return Status::Ok();
}

// linear_attn_config.kda_layers / full_attn_layers are 1-based layer numbers
// (Kimi Linear's modeling code tests `layer_idx + 1 in kda_layers`). Returns
// a 0-based "is KDA" flag per layer; the two lists must partition the stack.
Result<std::vector<bool>> ReadKdaLayers(const ConfigReader& linear, int num_layers) {
  std::vector<bool> is_kda(num_layers, false);
  std::vector<bool> is_full(num_layers, false);
  const std::string range =
      "expected 1-based layer numbers from 1 to " + std::to_string(num_layers);
  for (const char* key : {"kda_layers", "full_attn_layers"}) {
    PPS_ASSIGN_OR_RETURN(std::vector<int> numbers, linear.IntListOr(key));
    std::vector<bool>& marks = std::string(key) == "kda_layers" ? is_kda : is_full;
    for (size_t i = 0; i < numbers.size(); ++i) {
      if (numbers[i] < 1 || numbers[i] > num_layers) {
        return linear.Invalid(
            key, range + ", got " + std::to_string(numbers[i]) + " at index " + std::to_string(i));
      }
      marks[numbers[i] - 1] = true;
    }
  }
  const bool both_listed = linear.Has("kda_layers") && linear.Has("full_attn_layers");
  for (int layer = 0; layer < num_layers; ++layer) {
    const std::string number = std::to_string(layer + 1);
    if (is_kda[layer] && is_full[layer]) {
      return linear.Invalid("kda_layers",
                            "layer " + number + " (1-based) is also in full_attn_layers");
    }
    if (both_listed && !is_kda[layer] && !is_full[layer]) {
      return linear.Invalid("kda_layers", "layer " + number +
                                              " (1-based) is in neither kda_layers nor "
                                              "full_attn_layers");
    }
    // With only full_attn_layers given, every other layer is KDA.
    if (!linear.Has("kda_layers") && !is_full[layer]) is_kda[layer] = true;
  }
  return is_kda;
}

Status CheckTopK(const ConfigReader& config, const char* key, const MoeShape& moe) {
  if (moe.top_k <= moe.num_experts) return Status::Ok();
  return config.Invalid(key, "expected at most num_experts (" + std::to_string(moe.num_experts) +
                                 ") experts per token, got " + std::to_string(moe.top_k));
}

LayerDesc& NewLayer(ModelDesc& model) {
  LayerDesc& layer = model.layers.emplace_back();
  layer.index = static_cast<int>(model.layers.size()) - 1;
  return layer;
}

}  // namespace

Status BuildKimiLinear(const ConfigReader& config, const Quantization& quant, ModelDesc& model) {
  PPS_ASSIGN_OR_RETURN(model.mla, ReadMla(config, model.num_attention_heads));
  PPS_ASSIGN_OR_RETURN(bool mla_output_gate, config.BoolOr("mla_use_output_gate", false));
  PPS_ASSIGN_OR_RETURN(model.attn_res_block_size,
                       config.NonNegativeIntOr("attn_res_block_size", 0));

  std::vector<bool> is_kda(model.num_layers, false);
  bool full_rank_gate = false;
  PPS_ASSIGN_OR_RETURN(std::optional<ConfigReader> linear,
                       config.OptionalObject("linear_attn_config"));
  if (linear.has_value()) {
    PPS_ASSIGN_OR_RETURN(is_kda, ReadKdaLayers(*linear, model.num_layers));
    PPS_ASSIGN_OR_RETURN(model.kda.num_heads, linear->PositiveInt("num_heads"));
    PPS_ASSIGN_OR_RETURN(model.kda.head_dim, linear->PositiveInt("head_dim"));
    PPS_ASSIGN_OR_RETURN(model.kda.conv_kernel, linear->PositiveIntOr("short_conv_kernel_size", 4));
    PPS_ASSIGN_OR_RETURN(full_rank_gate, linear->BoolOr("use_full_rank_gate", false));
  }

  MoeShape& moe = model.moe;
  PPS_ASSIGN_OR_RETURN(moe.num_experts, config.NonNegativeIntOr("num_experts", 0));
  MoePlacement placement{model.num_layers, 1};  // no experts: every layer dense
  MoeOptions options;
  options.names = {"block_sparse_moe", "w1", "w2"};
  if (moe.num_experts > 0) {
    // Kimi Linear spells it num_experts_per_token; accept the HF-wide name too.
    const char* top_k_key =
        config.Has("num_experts_per_tok") ? "num_experts_per_tok" : "num_experts_per_token";
    PPS_ASSIGN_OR_RETURN(moe.top_k, config.PositiveInt(top_k_key));
    PPS_RETURN_IF_ERROR(CheckTopK(config, top_k_key, moe));
    PPS_ASSIGN_OR_RETURN(moe.moe_intermediate, config.PositiveInt("moe_intermediate_size"));
    PPS_ASSIGN_OR_RETURN(moe.num_shared_experts, config.NonNegativeIntOr("num_shared_experts", 0));
    PPS_ASSIGN_OR_RETURN(moe.expert_hidden,
                         config.PositiveIntOr("routed_expert_hidden_size", model.hidden));
    PPS_ASSIGN_OR_RETURN(placement, ReadMoePlacement(config));
    PPS_ASSIGN_OR_RETURN(options.latent_norm, config.BoolOr("latent_moe_use_norm", false));
    PPS_ASSIGN_OR_RETURN(std::string activation,
                         config.StringOr("moe_router_activation_func", "softmax"));
    options.router_bias = activation == "sigmoid";
  }
  bool any_dense = false;
  for (int i = 0; i < model.num_layers; ++i) any_dense |= !placement.IsMoe(i);
  PPS_RETURN_IF_ERROR(ReadDenseIntermediate(config, any_dense, model));

  for (int i = 0; i < model.num_layers; ++i) {
    LayerBuilder builder(NewLayer(model), quant);
    AddLayerNorms(model.hidden, builder);
    if (is_kda[i]) {
      AddKda(model.kda, model.hidden, full_rank_gate, builder);
    } else {
      AddMla(model.mla, model.hidden, mla_output_gate, builder);
    }
    if (placement.IsMoe(i)) {
      AddMoe(moe, model.hidden, options, builder);
    } else {
      AddDenseMlp(model.hidden, model.dense_intermediate, builder);
    }
  }
  if (model.CountLayers(AttentionKind::kMla) == 0) model.mla = MlaShape{};
  return Status::Ok();
}

// The multi-token-prediction layers (num_nextn_predict_layers) are a
// speculative-decoding head outside the served decoder stack, so they are
// not read.
Status BuildDeepseekV3(const ConfigReader& config, const Quantization& quant, ModelDesc& model) {
  PPS_ASSIGN_OR_RETURN(model.mla, ReadMla(config, model.num_attention_heads));
  MoeShape& moe = model.moe;
  PPS_ASSIGN_OR_RETURN(moe.num_experts, config.NonNegativeIntOr("n_routed_experts", 0));
  MoePlacement placement{model.num_layers, 1};
  MoeOptions options;
  if (moe.num_experts > 0) {
    PPS_ASSIGN_OR_RETURN(moe.top_k, config.PositiveInt("num_experts_per_tok"));
    PPS_RETURN_IF_ERROR(CheckTopK(config, "num_experts_per_tok", moe));
    PPS_ASSIGN_OR_RETURN(moe.moe_intermediate, config.PositiveInt("moe_intermediate_size"));
    PPS_ASSIGN_OR_RETURN(moe.num_shared_experts, config.NonNegativeIntOr("n_shared_experts", 0));
    moe.expert_hidden = model.hidden;
    PPS_ASSIGN_OR_RETURN(placement, ReadMoePlacement(config));
    // noaux_tc routing adds a per-expert score-correction bias.
    PPS_ASSIGN_OR_RETURN(std::string topk_method, config.StringOr("topk_method", ""));
    options.router_bias = topk_method == "noaux_tc";
  }
  bool any_dense = false;
  for (int i = 0; i < model.num_layers; ++i) any_dense |= !placement.IsMoe(i);
  PPS_RETURN_IF_ERROR(ReadDenseIntermediate(config, any_dense, model));

  for (int i = 0; i < model.num_layers; ++i) {
    LayerBuilder builder(NewLayer(model), quant);
    AddLayerNorms(model.hidden, builder);
    AddMla(model.mla, model.hidden, /*output_gate=*/false, builder);
    if (placement.IsMoe(i)) {
      AddMoe(moe, model.hidden, options, builder);
    } else {
      AddDenseMlp(model.hidden, model.dense_intermediate, builder);
    }
  }
  return Status::Ok();
}

// Qwen3MoeDecoderLayer: MoE where layer_idx is not in mlp_only_layers (0-based)
// and (layer_idx + 1) % decoder_sparse_step == 0. No shared experts.
Status BuildQwen3Moe(const ConfigReader& config, const Quantization& quant, ModelDesc& model) {
  PPS_ASSIGN_OR_RETURN(model.gqa, ReadGqa(config, model));
  MoeShape& moe = model.moe;
  PPS_ASSIGN_OR_RETURN(moe.num_experts, config.PositiveInt("num_experts"));
  PPS_ASSIGN_OR_RETURN(moe.top_k, config.PositiveInt("num_experts_per_tok"));
  PPS_RETURN_IF_ERROR(CheckTopK(config, "num_experts_per_tok", moe));
  PPS_ASSIGN_OR_RETURN(moe.moe_intermediate, config.PositiveInt("moe_intermediate_size"));
  moe.expert_hidden = model.hidden;
  PPS_ASSIGN_OR_RETURN(int sparse_step, config.PositiveIntOr("decoder_sparse_step", 1));
  PPS_ASSIGN_OR_RETURN(std::vector<int> mlp_only, config.IntListOr("mlp_only_layers"));
  std::vector<bool> is_moe(model.num_layers, true);
  for (size_t i = 0; i < mlp_only.size(); ++i) {
    if (mlp_only[i] >= model.num_layers) {
      return config.Invalid("mlp_only_layers", "expected 0-based layer indices below " +
                                                   std::to_string(model.num_layers) + ", got " +
                                                   std::to_string(mlp_only[i]) + " at index " +
                                                   std::to_string(i));
    }
    is_moe[mlp_only[i]] = false;
  }
  bool any_dense = false;
  for (int i = 0; i < model.num_layers; ++i) {
    if ((i + 1) % sparse_step != 0) is_moe[i] = false;
    any_dense |= !is_moe[i];
  }
  PPS_RETURN_IF_ERROR(ReadDenseIntermediate(config, any_dense, model));
  PPS_ASSIGN_OR_RETURN(bool attention_bias, config.BoolOr("attention_bias", false));
  const GqaOptions gqa_options{/*qk_norm=*/true, attention_bias};

  for (int i = 0; i < model.num_layers; ++i) {
    LayerBuilder builder(NewLayer(model), quant);
    AddLayerNorms(model.hidden, builder);
    AddGqa(model.gqa, model.hidden, gqa_options, builder);
    if (is_moe[i]) {
      AddMoe(moe, model.hidden, MoeOptions{}, builder);
    } else {
      AddDenseMlp(model.hidden, model.dense_intermediate, builder);
    }
  }
  return Status::Ok();
}

Status BuildDenseGqa(const ConfigReader& config, const Quantization& quant, ModelDesc& model) {
  PPS_ASSIGN_OR_RETURN(model.gqa, ReadGqa(config, model));
  PPS_RETURN_IF_ERROR(ReadDenseIntermediate(config, /*needed=*/true, model));
  PPS_ASSIGN_OR_RETURN(bool attention_bias, config.BoolOr("attention_bias", false));
  GqaOptions options;
  options.qk_norm = model.model_type == "qwen3";
  options.qkv_bias = attention_bias || model.model_type == "qwen2";  // Qwen2 always has q/k/v bias
  for (int i = 0; i < model.num_layers; ++i) {
    LayerBuilder builder(NewLayer(model), quant);
    AddLayerNorms(model.hidden, builder);
    AddGqa(model.gqa, model.hidden, options, builder);
    AddDenseMlp(model.hidden, model.dense_intermediate, builder);
  }
  return Status::Ok();
}

}  // namespace ppsearch::model
