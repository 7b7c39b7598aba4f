#include "loadgen/request_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "workload/workload.h"

namespace ppsearch::loadgen {
namespace {

// Seed of one prompt stream: the splitmix64 output of the user's seed mixed
// with the stream and index, so neighbouring indices give unrelated ids.
uint64_t PromptSeed(uint64_t seed, uint64_t stream, uint64_t index) {
  workload::SplitMix64 mix(seed ^ (stream * 0xD1B54A32D192ED03ull) ^
                           (index * 0x9E3779B97F4A7C15ull));
  return mix.Next();
}

void AppendIds(std::string& out, std::span<const int64_t> ids) {
  out.push_back('[');
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out.push_back(',');
    fmt::format_to(std::back_inserter(out), "{}", ids[i]);
  }
  out.push_back(']');
}

}  // namespace

std::vector<int64_t> MakePromptIds(const PromptParams& params, PromptStream stream, int64_t index,
                                   int64_t length) {
  std::vector<int64_t> ids;
  ids.reserve(static_cast<size_t>(std::max<int64_t>(length, 0)));
  const int64_t hi = std::max(params.vocab_size - 1, params.min_token_id);
  const int64_t shared = std::clamp<int64_t>(params.shared_prefix_tokens, 0, length);
  workload::SplitMix64 prefix(PromptSeed(params.seed, 0, 0));
  for (int64_t i = 0; i < shared; ++i) ids.push_back(prefix.UniformInt(params.min_token_id, hi));
  workload::SplitMix64 rng(
      PromptSeed(params.seed, static_cast<uint64_t>(stream), static_cast<uint64_t>(index)));
  for (int64_t i = shared; i < length; ++i) ids.push_back(rng.UniformInt(params.min_token_id, hi));
  return ids;
}

std::string BuildRequestBody(Api api, std::span<const int64_t> input_ids, int64_t max_new_tokens,
                             const std::string& model) {
  std::string body;
  body.reserve(input_ids.size() * 7 + 200);
  if (api == Api::kNative) {
    body += "{\"input_ids\":";
    AppendIds(body, input_ids);
    fmt::format_to(std::back_inserter(body),
                   ",\"sampling_params\":{{\"max_new_tokens\":{},\"ignore_eos\":true,"
                   "\"temperature\":0}},\"stream\":true}}",
                   max_new_tokens);
  } else {
    body += "{\"model\":" +
            nlohmann::json(model).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
            ",\"prompt\":";
    AppendIds(body, input_ids);
    fmt::format_to(std::back_inserter(body),
                   ",\"max_tokens\":{},\"ignore_eos\":true,\"temperature\":0,\"stream\":true,"
                   "\"stream_options\":{{\"include_usage\":true}}}}",
                   max_new_tokens);
  }
  return body;
}

}  // namespace ppsearch::loadgen
