#pragma once
// The two SGLang HTTP APIs the load generator speaks.

#include <optional>
#include <string_view>

namespace ppsearch::loadgen {

enum class Api {
  kNative,  // POST /generate with input_ids (SGLang's own API)
  kOpenAi,  // POST /v1/completions with a token-id prompt
};

inline const char* ApiName(Api api) { return api == Api::kNative ? "native" : "openai"; }
inline const char* ApiPath(Api api) {
  return api == Api::kNative ? "/generate" : "/v1/completions";
}
inline std::optional<Api> ParseApi(std::string_view name) {
  if (name == "native") return Api::kNative;
  if (name == "openai") return Api::kOpenAi;
  return std::nullopt;
}

}  // namespace ppsearch::loadgen
