#include "model/quantization.h"

#include <utility>

namespace ppsearch::model {
namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// [block_n, block_k] of a block-quantized checkpoint.
Result<WeightBlock> ReadBlock(const ConfigReader& config, std::string_view key) {
  PPS_ASSIGN_OR_RETURN(std::vector<int> block, config.IntListOr(key));
  if (block.size() != 2 || block[0] <= 0 || block[1] <= 0)
    return config.Invalid(key,
                          "expected two positive integers [block_n, block_k], e.g. [128, 128]");
  return WeightBlock{block[0], block[1]};
}

}  // namespace

bool Quantization::Matcher::Matches(const std::string& module) const {
  if (regex.has_value()) {
    return std::regex_search(module, *regex, std::regex_constants::match_continuous);
  }
  // Every module we ask about is an nn.Linear in the reference implementations.
  if (text == "Linear") return true;
  return module == text || EndsWith(module, "." + text);
}

Result<Quantization::Matcher> Quantization::MakeMatcher(const ConfigReader& config,
                                                        std::string_view key,
                                                        const std::string& text) {
  Matcher matcher{text, std::nullopt};
  if (text.rfind("re:", 0) == 0) {
    try {
      matcher.regex.emplace(text.substr(3), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return config.Invalid(key, "invalid regular expression \"" + text + "\": " + e.what());
    }
  }
  return matcher;
}

Result<Quantization> Quantization::Parse(const std::optional<ConfigReader>& config) {
  Quantization quant;
  if (!config.has_value()) return quant;
  PPS_ASSIGN_OR_RETURN(std::string method, config->String("quant_method"));
  if (method == "compressed-tensors") return ParseCompressedTensors(*config);

  PPS_ASSIGN_OR_RETURN(quant.not_converted_, config->StringListOr("modules_to_not_convert"));
  if (method == "fp8") {
    // DeepSeek-V3 and Kimi K2 ship every decoder linear (attention, dense and
    // shared MLPs, experts) in block FP8; only the router gate, embedding and
    // lm_head stay BF16 (they carry no weight_scale_inv in the checkpoint).
    PPS_ASSIGN_OR_RETURN(std::vector<std::string> ignored, config->StringListOr("ignored_layers"));
    quant.not_converted_.insert(quant.not_converted_.end(), ignored.begin(), ignored.end());
    quant.scope_ = Scope::kAllLinears;
    quant.dtype_ = DType::kFp8;
    quant.description_ = "fp8";
    if (config->Has("weight_block_size")) {
      PPS_ASSIGN_OR_RETURN(quant.weight_block_, ReadBlock(*config, "weight_block_size"));
    }
    return quant;
  }
  if (method == "mxfp4") {
    // gpt-oss style: only the MoE expert weights are MXFP4.
    quant.scope_ = Scope::kRoutedExperts;
    quant.dtype_ = DType::kMxfp4;
    quant.description_ = "mxfp4";
    return quant;
  }
  return config->Invalid(
      "quant_method",
      "expected \"fp8\", \"compressed-tensors\" or \"mxfp4\", got \"" + method + "\"");
}

// compressed-tensors: each config group names a weight format and the modules
// it targets; `ignore` removes modules from every group. Kimi K3 lists
// everything but the routed experts in `ignore`; K2-Thinking does the same
// for its INT4 experts.
Result<Quantization> Quantization::ParseCompressedTensors(const ConfigReader& config) {
  Quantization quant;
  quant.scope_ = Scope::kGroups;
  PPS_ASSIGN_OR_RETURN(std::optional<ConfigReader> groups, config.OptionalObject("config_groups"));
  if (!groups.has_value() || groups->json().empty()) {
    return config.Invalid("config_groups", "expected at least one quantization group");
  }
  PPS_ASSIGN_OR_RETURN(std::string format, config.StringOr("format", ""));
  for (const auto& [name, unused] : groups->json().items()) {
    PPS_ASSIGN_OR_RETURN(std::optional<ConfigReader> group, groups->OptionalObject(name));
    if (!group.has_value()) return groups->Invalid(name, "expected an object, got null");
    PPS_ASSIGN_OR_RETURN(std::optional<ConfigReader> weights, group->OptionalObject("weights"));
    if (!weights.has_value()) {
      return group->Invalid("weights", "expected an object with num_bits and type");
    }
    PPS_ASSIGN_OR_RETURN(int num_bits, weights->PositiveInt("num_bits"));
    PPS_ASSIGN_OR_RETURN(std::string type, weights->StringOr("type", "int"));
    PPS_ASSIGN_OR_RETURN(int group_size, weights->PositiveIntOr("group_size", 32));
    Group entry;
    if (num_bits == 4 && type == "float" && group_size == 32) {
      entry.dtype = DType::kMxfp4;  // E2M1 values with an E8M0 scale per 32
    } else if (num_bits == 4 && type == "int") {
      // BytesPerParam assumes group-32 bf16 scales (K2-Thinking); group 128
      // would store ~8% fewer bytes.
      entry.dtype = DType::kInt4;
    } else if (num_bits == 8 && type == "float") {
      entry.dtype = DType::kFp8;
      // Block FP8 ("strategy": "block"): one scale per block_structure
      // [block_n, block_k], as the native fp8 method's weight_block_size.
      PPS_ASSIGN_OR_RETURN(std::string strategy, weights->StringOr("strategy", ""));
      if (strategy == "block") {
        PPS_ASSIGN_OR_RETURN(WeightBlock block, ReadBlock(*weights, "block_structure"));
        if (quant.weight_block_.any() &&
            (quant.weight_block_.n != block.n || quant.weight_block_.k != block.k))
          return weights->Invalid("block_structure",
                                  "expected the same block structure in every FP8 group");
        quant.weight_block_ = block;
      }
    } else {
      return weights->Invalid("num_bits",
                              "expected 4-bit float group-32 (MXFP4), 4-bit int (INT4) or 8-bit "
                              "float (FP8) weights, got " +
                                  std::to_string(num_bits) + "-bit " + type + " group " +
                                  std::to_string(group_size));
    }
    PPS_ASSIGN_OR_RETURN(std::vector<std::string> targets, group->StringListOr("targets"));
    if (targets.empty()) targets.push_back("Linear");
    for (const std::string& target : targets) {
      PPS_ASSIGN_OR_RETURN(Matcher matcher, MakeMatcher(*group, "targets", target));
      entry.targets.push_back(std::move(matcher));
    }
    quant.groups_.push_back(std::move(entry));
  }
  PPS_ASSIGN_OR_RETURN(std::vector<std::string> ignore, config.StringListOr("ignore"));
  for (const std::string& text : ignore) {
    PPS_ASSIGN_OR_RETURN(Matcher matcher, MakeMatcher(config, "ignore", text));
    quant.ignore_.push_back(std::move(matcher));
  }
  quant.description_ = "compressed-tensors " + std::string(DTypeName(quant.groups_[0].dtype));
  if (!format.empty()) quant.description_ += " (" + format + ")";
  return quant;
}

bool Quantization::Ignored(const std::string& module) const {
  for (const Matcher& matcher : ignore_) {
    if (matcher.Matches(module)) return true;
  }
  for (const std::string& name : not_converted_) {
    if (module.find(name) != std::string::npos) return true;
  }
  return false;
}

DType Quantization::DTypeFor(const std::string& module, OpRole role) const {
  // Routers and embeddings are kept in high precision by every quantiser we
  // know of (the router is not an nn.Linear in DeepSeek/Kimi code).
  if (role == OpRole::kRouter || role == OpRole::kEmbedding) return DType::kBf16;
  switch (scope_) {
    case Scope::kNone:
      return DType::kBf16;
    case Scope::kAllLinears:
      if (role == OpRole::kLmHead || Ignored(module)) return DType::kBf16;
      return dtype_;
    case Scope::kRoutedExperts:
      if (role != OpRole::kRoutedExpert || Ignored(module)) return DType::kBf16;
      return dtype_;
    case Scope::kGroups:
      if (Ignored(module)) return DType::kBf16;
      for (const Group& group : groups_) {
        for (const Matcher& target : group.targets) {
          if (target.Matches(module)) return group.dtype;
        }
      }
      return DType::kBf16;
  }
  return DType::kBf16;
}

}  // namespace ppsearch::model
