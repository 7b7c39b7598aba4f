#pragma once
// Which dtype each weight of a checkpoint is stored in, from the config's
// `quantization_config`. Decided per Hugging Face module name (for example
// "model.layers.3.mlp.experts.0.gate_proj"), the way the loaders match the
// `targets` and `ignore` lists, so a config's own lists say what is
// quantised rather than a per-model table here.

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "model/config_reader.h"
#include "model/model.h"
#include "util/result.h"

namespace ppsearch::model {

class Quantization {
 public:
  // No quantization_config: everything BF16.
  Quantization() = default;
  // `config` is the quantization_config object, nullopt when the key is absent.
  static Result<Quantization> Parse(const std::optional<ConfigReader>& config);

  // Storage dtype of the weight of module `module` playing `role`.
  DType DTypeFor(const std::string& module, OpRole role) const;
  // For messages and the model summary: "none", "fp8", "compressed-tensors MXFP4", ...
  const std::string& description() const { return description_; }
  // FP8 block quantization's weight_block_size [block_n, block_k] (output,
  // input features per scale); {0, 0} when the weights are not block-quantized.
  const WeightBlock& weight_block() const { return weight_block_; }

 private:
  // A `targets` or `ignore` entry: "re:<regex>" matched from the start of the
  // name (Python's re.match), a class name ("Linear"), or a module name.
  struct Matcher {
    std::string text;
    std::optional<std::regex> regex;
    bool Matches(const std::string& module) const;
  };
  struct Group {
    DType dtype = DType::kBf16;
    std::vector<Matcher> targets;
  };
  enum class Scope {
    kNone,           // unquantised checkpoint
    kAllLinears,     // every decoder linear but the router (native FP8 checkpoints)
    kRoutedExperts,  // only the routed experts (gpt-oss style "mxfp4")
    kGroups,         // compressed-tensors config_groups with targets and ignore
  };

  static Result<Matcher> MakeMatcher(const ConfigReader& config, std::string_view key,
                                     const std::string& text);
  static Result<Quantization> ParseCompressedTensors(const ConfigReader& config);
  bool Ignored(const std::string& module) const;

  Scope scope_ = Scope::kNone;
  DType dtype_ = DType::kBf16;  // for kAllLinears and kRoutedExperts
  std::vector<Group> groups_;   // for kGroups
  std::vector<Matcher> ignore_;
  // Plain-name exclusions (modules_to_not_convert), matched as substrings.
  std::vector<std::string> not_converted_;
  std::string description_ = "none";
  WeightBlock weight_block_;
};

}  // namespace ppsearch::model
