#pragma once
// Builds a ModelDesc from a Hugging Face config.json. Supported families:
// kimi_linear (Kimi K3, Kimi Linear), deepseek_v3 (DeepSeek-V3, Kimi K2),
// qwen3_moe, and dense Llama-style models (llama, mistral, qwen2, qwen3, or
// any config without experts). Multimodal wrappers are read through their
// `text_config`. Weight dtypes come from `quantization_config`.

#include <string>

#include "model/model.h"
#include "util/result.h"

namespace ppsearch::model {

// `path` is a config.json file or a model directory (a Hugging Face snapshot)
// containing one. Errors name the file, the key and what was expected;
// invalid JSON is reported as file:line:col.
Result<ModelDesc> LoadModel(const std::string& path);

// The pure part of LoadModel: `json_text` is the config's contents,
// `source_path` the file it came from (used in messages), `name` the model's
// display name.
Result<ModelDesc> ParseModelConfig(const std::string& json_text, const std::string& source_path,
                                   const std::string& name);

// Display name for a config path: the directory holding config.json, or
// "org/name" inside a Hugging Face cache (models--org--name/snapshots/<sha>/).
std::string ModelNameFromPath(const std::string& config_path);

}  // namespace ppsearch::model
