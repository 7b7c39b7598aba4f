#include "model/hf_config.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "model/config_reader.h"
#include "model/families.h"
#include "model/quantization.h"
#include "util/excerpt.h"
#include "util/files.h"

namespace ppsearch::model {
namespace {

namespace fs = std::filesystem;

// The most layers a config may give: every layer is planned, placed and
// simulated one by one, and no model has more than a few hundred.
constexpr int kMaxLayers = 4096;

constexpr char kExpectedPath[] = "expected a config.json file or a model directory containing one";

// The names of the shipped models (data/models/<name>/config.json).
std::string ShippedModelNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(DataDir() + "/models", ec))
    if (fs::exists(e.path() / "config.json", ec)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none found in " + DataDir() + "/models" : out;
}

Result<std::string> ResolveConfigPath(const std::string& path) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  // A bare name that is no file here names a shipped model, as a bare
  // hardware name names a shipped profile.
  const bool bare =
      !path.empty() && path.find('/') == std::string::npos && path != "." && path != "..";
  if (!fs::exists(status) && bare) {
    const std::string shipped = DataDir() + "/models/" + path;
    if (fs::exists(shipped + "/config.json", ec)) return shipped + "/config.json";
    return MakeError(path +
                     ": no such file or directory, and no shipped model of that name "
                     "(shipped: " +
                     ShippedModelNames() + ")");
  }
  if (!fs::exists(status)) {
    return MakeError(path + ": no such file or directory (" + kExpectedPath + ")");
  }
  if (!fs::is_directory(status)) return path;
  std::string config = (fs::path(path) / "config.json").string();
  if (!fs::exists(config, ec)) {
    return MakeError(path + ": directory has no config.json (" + kExpectedPath + ")");
  }
  return config;
}

// nlohmann reports the byte offset of the offending character; editors want
// line:col. Its own message carries the same position, so keep only the
// reason after "column N: ".
Error JsonSyntaxError(const std::string& file, const std::string& text,
                      const nlohmann::json::parse_error& e) {
  const size_t end = std::min<size_t>(e.byte, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  const size_t col = end > line_start ? end - line_start : 1;
  std::string reason = e.what();
  if (size_t at = reason.find(", column "); at != std::string::npos) {
    if (size_t colon = reason.find(": ", at); colon != std::string::npos) {
      reason = reason.substr(colon + 2);
    }
  }
  // The reason quotes the token the parser stopped in, which can be most of the file.
  return MakeError(file + ":" + std::to_string(line) + ":" + std::to_string(col) +
                   ": invalid JSON: " + Excerpt(reason, 3 * kExcerptBytes));
}

enum class Family { kKimiLinear, kDeepseekV3, kQwen3Moe, kDenseGqa };

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::optional<Family> FamilyOf(const std::string& model_type,
                               const std::vector<std::string>& architectures) {
  if (model_type == "kimi_linear" || model_type == "kimi_k3") return Family::kKimiLinear;
  if (model_type == "deepseek_v3" || model_type == "kimi_k2" ||
      Contains(architectures, "DeepseekV3ForCausalLM")) {
    return Family::kDeepseekV3;
  }
  if (model_type == "qwen3_moe" || Contains(architectures, "Qwen3MoeForCausalLM")) {
    return Family::kQwen3Moe;
  }
  if (model_type == "llama" || model_type == "mistral" || model_type == "qwen2" ||
      model_type == "qwen3") {
    return Family::kDenseGqa;
  }
  return std::nullopt;
}

const char* FamilyName(Family family) {
  switch (family) {
    case Family::kKimiLinear:
      return "kimi_linear";
    case Family::kDeepseekV3:
      return "deepseek_v3";
    case Family::kQwen3Moe:
      return "qwen3_moe";
    case Family::kDenseGqa:
      return "llama";
  }
  return "?";
}

// An unrecognised model_type is still a dense Llama-style model if it has no
// expert keys; with experts we cannot know the MoE layout, so it is an error.
Result<Family> DetectFamily(const ConfigReader& config, const ConfigReader& top,
                            const std::string& model_type) {
  PPS_ASSIGN_OR_RETURN(std::vector<std::string> architectures,
                       config.StringListOr("architectures"));
  PPS_ASSIGN_OR_RETURN(std::vector<std::string> top_architectures,
                       top.StringListOr("architectures"));
  architectures.insert(architectures.end(), top_architectures.begin(), top_architectures.end());
  PPS_ASSIGN_OR_RETURN(std::string top_type, top.StringOr("model_type", model_type));
  for (const std::string& type : {model_type, top_type}) {
    if (std::optional<Family> family = FamilyOf(type, architectures)) return *family;
  }
  for (const char* key : {"num_experts", "n_routed_experts", "num_local_experts"}) {
    if (config.Has(key)) {
      const ConfigReader& owner = config.Has("model_type") ? config : top;
      return owner.Invalid("model_type",
                           "unknown MoE model type \"" + model_type +
                               "\" (supported: kimi_k3, kimi_linear, deepseek_v3, kimi_k2, "
                               "qwen3_moe, and dense Llama-style models)");
    }
  }
  return Family::kDenseGqa;
}

// Multimodal wrappers put some keys beside text_config rather than in it:
// the reader that holds `key`, preferring the text config.
const ConfigReader& Holder(const ConfigReader& text, const ConfigReader& top, const char* key) {
  return text.Has(key) || !top.Has(key) ? text : top;
}

Status ReadCommon(const ConfigReader& config, const ConfigReader& top, ModelDesc& model) {
  PPS_ASSIGN_OR_RETURN(model.hidden, config.PositiveInt("hidden_size"));
  PPS_ASSIGN_OR_RETURN(model.vocab, config.PositiveInt("vocab_size"));
  PPS_ASSIGN_OR_RETURN(model.num_layers, config.PositiveIntUpTo("num_hidden_layers", kMaxLayers));
  PPS_ASSIGN_OR_RETURN(model.num_attention_heads, config.PositiveInt("num_attention_heads"));
  PPS_ASSIGN_OR_RETURN(model.max_context, config.NonNegativeIntOr("max_position_embeddings", 0));
  PPS_ASSIGN_OR_RETURN(
      model.tie_word_embeddings,
      Holder(config, top, "tie_word_embeddings").BoolOr("tie_word_embeddings", false));
  return Status::Ok();
}

}  // namespace

std::string ModelNameFromPath(const std::string& config_path) {
  fs::path dir = fs::absolute(fs::path(config_path)).lexically_normal().parent_path();
  fs::path snapshots = dir.parent_path();
  std::string repo = snapshots.parent_path().filename().string();
  if (snapshots.filename() == "snapshots" && repo.rfind("models--", 0) == 0) {
    std::string name = repo.substr(8);
    if (size_t sep = name.find("--"); sep != std::string::npos) name.replace(sep, 2, "/");
    return name;
  }
  return dir.filename().string();
}

Result<ModelDesc> ParseModelConfig(const std::string& json_text, const std::string& source_path,
                                   const std::string& name) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    return JsonSyntaxError(source_path, json_text, e);
  } catch (const nlohmann::json::exception& e) {  // a number out of range
    return MakeError(source_path + ": not valid JSON: " + Excerpt(e.what(), 3 * kExcerptBytes));
  }
  if (!root.is_object()) {
    return MakeError(source_path + ": expected a JSON object at the top level, got " +
                     DescribeJsonValue(root));
  }
  ConfigReader top(root, source_path);
  PPS_ASSIGN_OR_RETURN(std::optional<ConfigReader> text_config, top.OptionalObject("text_config"));
  const ConfigReader& config = text_config.has_value() ? *text_config : top;

  ModelDesc model;
  model.name = name;
  model.source_path = source_path;
  // The top-level type names the product (kimi_k3); the text config's the
  // architecture (kimi_linear).
  PPS_ASSIGN_OR_RETURN(std::string text_type, config.Has("model_type") ? config.String("model_type")
                                                                       : top.String("model_type"));
  PPS_ASSIGN_OR_RETURN(model.model_type, top.StringOr("model_type", text_type));
  PPS_ASSIGN_OR_RETURN(Family family, DetectFamily(config, top, text_type));
  model.family = FamilyName(family);
  PPS_RETURN_IF_ERROR(ReadCommon(config, top, model));

  PPS_ASSIGN_OR_RETURN(
      std::optional<ConfigReader> quant_config,
      Holder(config, top, "quantization_config").OptionalObject("quantization_config"));
  PPS_ASSIGN_OR_RETURN(Quantization quant, Quantization::Parse(quant_config));
  model.quantization = quant.description();
  model.fp8_block = quant.weight_block();

  switch (family) {
    case Family::kKimiLinear:
      PPS_RETURN_IF_ERROR(BuildKimiLinear(config, quant, model));
      break;
    case Family::kDeepseekV3:
      PPS_RETURN_IF_ERROR(BuildDeepseekV3(config, quant, model));
      break;
    case Family::kQwen3Moe:
      PPS_RETURN_IF_ERROR(BuildQwen3Moe(config, quant, model));
      break;
    case Family::kDenseGqa:
      PPS_RETURN_IF_ERROR(BuildDenseGqa(config, quant, model));
      break;
  }

  // The embedding is a gather, not a GEMM: no active copies, no FLOPs.
  model.embedding = Linear{.name = "embed_tokens",
                           .in_features = model.vocab,
                           .out_features = model.hidden,
                           .active_count = 0,
                           .sharding = Sharding::kVocab,
                           .role = OpRole::kEmbedding,
                           .fused_gemm = ""};
  model.lm_head =
      Linear{.name = "lm_head",
             .in_features = model.hidden,
             .out_features = model.vocab,
             .dtype = model.tie_word_embeddings ? model.embedding.dtype
                                                : quant.DTypeFor("lm_head", OpRole::kLmHead),
             .sharding = Sharding::kVocab,
             .role = OpRole::kLmHead,
             .fused_gemm = ""};
  model.final_norm_params = model.hidden;
  return model;
}

Result<ModelDesc> LoadModel(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string config_path, ResolveConfigPath(path));
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(config_path));
  return ParseModelConfig(text, config_path, ModelNameFromPath(config_path));
}

}  // namespace ppsearch::model
