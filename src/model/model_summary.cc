#include "model/model_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "table/table.h"
#include "util/format.h"

namespace ppsearch::model {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

std::string LayerCounts(const ModelDesc& model) {
  std::vector<std::string> parts;
  for (AttentionKind kind : {AttentionKind::kMla, AttentionKind::kKda, AttentionKind::kGqa}) {
    if (int n = model.CountLayers(kind); n > 0) {
      parts.push_back(fmt::format("{} {}", n, AttentionKindName(kind)));
    }
  }
  std::string attention = fmt::format("{}", fmt::join(parts, " + "));
  return fmt::format("{} = {}; {} dense FFN + {} MoE", model.num_layers, attention,
                     model.CountLayers(FfnKind::kDense), model.CountLayers(FfnKind::kMoe));
}

std::string AttentionShapes(const ModelDesc& model) {
  std::string out = fmt::format("{} heads", model.num_attention_heads);
  const MlaShape& mla = model.mla;
  if (model.CountLayers(AttentionKind::kMla) > 0) {
    out += fmt::format("; MLA q_lora {}, kv_lora {}, qk_nope {}, qk_rope {}, v {}",
                       FormatThousands(mla.q_lora_rank), FormatThousands(mla.kv_lora_rank),
                       mla.qk_nope_head_dim, mla.qk_rope_head_dim, mla.v_head_dim);
  }
  if (model.CountLayers(AttentionKind::kKda) > 0) {
    out += fmt::format("; KDA {} heads x {}, conv {}", model.kda.num_heads, model.kda.head_dim,
                       model.kda.conv_kernel);
  }
  if (model.CountLayers(AttentionKind::kGqa) > 0) {
    out +=
        fmt::format("; GQA {} KV heads, head_dim {}", model.gqa.num_kv_heads, model.gqa.head_dim);
  }
  return out;
}

// The dtype of the routed experts, as stored (first MoE layer).
DType ExpertDType(const ModelDesc& model) {
  for (const LayerDesc& layer : model.layers) {
    for (const Linear& linear : layer.linears) {
      if (linear.role == OpRole::kRoutedExpert) return linear.dtype;
    }
  }
  return DType::kBf16;
}

std::string WeightsByDType(const ModelDesc& model) {
  std::vector<std::pair<double, DType>> sorted;
  for (const auto& [dtype, bytes] : model.weight_bytes_by_dtype()) sorted.push_back({bytes, dtype});
  std::sort(sorted.rbegin(), sorted.rend());
  std::vector<std::string> parts;
  for (const auto& [bytes, dtype] : sorted) {
    parts.push_back(fmt::format("{} {}", DTypeName(dtype), FormatGiB(bytes)));
  }
  return fmt::format("{}: {}", FormatGiB(model.weight_bytes()), fmt::join(parts, ", "));
}

nlohmann::ordered_json LinearToJson(const Linear& linear) {
  return {{"name", linear.name},
          {"in_features", linear.in_features},
          {"out_features", linear.out_features},
          {"count", linear.count},
          {"active_count", linear.active_count},
          {"dtype", DTypeName(linear.dtype)},
          {"sharding", ShardingName(linear.sharding)},
          {"role", OpRoleName(linear.role)},
          {"params", linear.params()}};
}

}  // namespace

std::string FormatParams(int64_t params) {
  if (std::llabs(params) >= 1'000'000'000) return FormatNumber(params / 1e9, 1) + " B";
  return FormatNumber(params / 1e6, 1) + " M";
}

std::string FormatGiB(double bytes) { return FormatNumber(bytes / kGiB, 1) + " GiB"; }

std::string DescribeModel(const ModelDesc& model) {
  table::Table t;  // key and value, no header
  t.left = {true, true};
  t.gap = 2;
  auto line = [&t](const char* key, const std::string& value) { t.rows.push_back({key, value}); };
  line("model", model.name);
  line("family", fmt::format("{} (model_type {})", model.family, model.model_type));
  line("source", model.source_path);
  line("layers", LayerCounts(model));
  line("hidden", fmt::format("{} (vocab {}, max context {})", FormatThousands(model.hidden),
                             FormatThousands(model.vocab), FormatThousands(model.max_context)));
  line("attention", AttentionShapes(model));
  if (model.is_moe()) {
    const MoeShape& moe = model.moe;
    std::string experts =
        fmt::format("{} routed, top-{}, {} shared, moe_intermediate {}", moe.num_experts, moe.top_k,
                    moe.num_shared_experts, FormatThousands(moe.moe_intermediate));
    if (moe.expert_hidden != model.hidden) {
      experts += fmt::format(", latent {}", FormatThousands(moe.expert_hidden));
    }
    line("experts", experts + fmt::format(" ({})", DTypeName(ExpertDType(model))));
  }
  if (model.CountLayers(FfnKind::kDense) > 0) {
    line("dense ffn", fmt::format("intermediate {}", FormatThousands(model.dense_intermediate)));
  }
  line("params",
       fmt::format("total {}, active {} (active: per token, without the embedding "
                   "lookup, with lm_head)",
                   FormatParams(model.total_params()), FormatParams(model.active_params())));
  line("weights", WeightsByDType(model));
  line("kv cache", fmt::format("{} B/token (bf16)", FormatThousands(model.kv_bytes_per_token())));
  line("state", fmt::format("{} MiB/request (linear-attention recurrent and conv state)",
                            FormatNumber(model.state_bytes_per_request() / kMiB, 1)));
  return table::RenderTextTable(t);
}

// nccl-tests layout: '#' header lines with names, then units, then one row per layer.
std::string DescribeLayers(const ModelDesc& model) {
  table::Table t{{"layer", "attention", "ffn", "params", "active", "weights", "kv_cache", "state"},
                 {},
                 {false, true, true, false, false, false, false, false},
                 {"", "", "", "(M)", "(M)", "(MiB)", "(B/token)", "(MiB/req)"},
                 /*commented_header=*/true};
  for (const LayerDesc& layer : model.layers) {
    t.rows.push_back(
        {std::to_string(layer.index), AttentionKindName(layer.attention), FfnKindName(layer.ffn),
         FormatNumber(layer.params() / 1e6, 1), FormatNumber(layer.active_params() / 1e6, 1),
         FormatNumber(layer.weight_bytes() / kMiB, 1), FormatThousands(layer.kv_bytes_per_token),
         FormatNumber(layer.state_bytes_per_request / kMiB, 2)});
  }
  return table::RenderTextTable(t);
}

nlohmann::ordered_json ModelToJson(const ModelDesc& model, bool with_linears) {
  nlohmann::ordered_json out = {
      {"name", model.name},
      {"family", model.family},
      {"model_type", model.model_type},
      {"source_path", model.source_path},
      {"hidden", model.hidden},
      {"vocab", model.vocab},
      {"num_layers", model.num_layers},
      {"max_context", model.max_context},
      {"num_attention_heads", model.num_attention_heads},
      {"dense_intermediate", model.dense_intermediate},
      {"tie_word_embeddings", model.tie_word_embeddings},
      {"layer_counts",
       {{"mla", model.CountLayers(AttentionKind::kMla)},
        {"kda", model.CountLayers(AttentionKind::kKda)},
        {"gqa", model.CountLayers(AttentionKind::kGqa)},
        {"dense", model.CountLayers(FfnKind::kDense)},
        {"moe", model.CountLayers(FfnKind::kMoe)}}},
      {"total_params", model.total_params()},
      {"active_params", model.active_params()},
      {"weight_bytes", model.weight_bytes()},
      {"kv_bytes_per_token", model.kv_bytes_per_token()},
      {"state_bytes_per_request", model.state_bytes_per_request()},
  };
  if (model.is_moe()) {
    const MoeShape& moe = model.moe;
    out["moe"] = {{"num_experts", moe.num_experts},
                  {"top_k", moe.top_k},
                  {"num_shared_experts", moe.num_shared_experts},
                  {"moe_intermediate", moe.moe_intermediate},
                  {"expert_hidden", moe.expert_hidden},
                  {"expert_dtype", DTypeName(ExpertDType(model))}};
  }
  nlohmann::ordered_json by_dtype = nlohmann::ordered_json::object();
  for (const auto& [dtype, bytes] : model.weight_bytes_by_dtype())
    by_dtype[DTypeName(dtype)] = bytes;
  out["weight_bytes_by_dtype"] = by_dtype;
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const LayerDesc& layer : model.layers) {
    nlohmann::ordered_json entry = {{"index", layer.index},
                                    {"attention", AttentionKindName(layer.attention)},
                                    {"ffn", FfnKindName(layer.ffn)},
                                    {"params", layer.params()},
                                    {"active_params", layer.active_params()},
                                    {"weight_bytes", layer.weight_bytes()},
                                    {"kv_bytes_per_token", layer.kv_bytes_per_token},
                                    {"state_bytes_per_request", layer.state_bytes_per_request}};
    if (with_linears) {
      nlohmann::ordered_json linears = nlohmann::ordered_json::array();
      for (const Linear& linear : layer.linears) linears.push_back(LinearToJson(linear));
      entry["linears"] = linears;
    }
    layers.push_back(entry);
  }
  out["layers"] = layers;
  return out;
}

}  // namespace ppsearch::model
