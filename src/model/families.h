#pragma once
// Per-family readers: each turns one family's config keys into shapes and a
// decoder stack. Internal to LoadModel (model/hf_config.h); `model` arrives
// with hidden, vocab, num_layers, num_attention_heads and model_type set.

#include "model/config_reader.h"
#include "model/model.h"
#include "model/quantization.h"
#include "util/result.h"

namespace ppsearch::model {

// kimi_linear / kimi_k3: KDA and MLA layers from linear_attn_config, latent MoE.
Status BuildKimiLinear(const ConfigReader& config, const Quantization& quant, ModelDesc& model);
// deepseek_v3 / kimi_k2: MLA on every layer, DeepSeek MoE after the first dense layers.
Status BuildDeepseekV3(const ConfigReader& config, const Quantization& quant, ModelDesc& model);
// qwen3_moe: GQA with q/k norms, MoE every decoder_sparse_step layers.
Status BuildQwen3Moe(const ConfigReader& config, const Quantization& quant, ModelDesc& model);
// llama, mistral, qwen2, qwen3 and other expert-free models: GQA + SwiGLU MLP.
Status BuildDenseGqa(const ConfigReader& config, const Quantization& quant, ModelDesc& model);

}  // namespace ppsearch::model
