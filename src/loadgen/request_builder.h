#pragma once
// The bodies the load generator POSTs: exact-length prompts of random token
// ids, so the server's prompt length is known without a tokenizer and no two
// requests (or repeats with different seeds) share a prefix-cache entry
// unless a shared prefix is asked for.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "loadgen/api_kind.h"

namespace ppsearch::loadgen {

struct PromptParams {
  uint64_t seed = 1;
  // Ids are uniform on [min_token_id, vocab_size): above the special tokens
  // of common tokenizers, below the smallest vocabulary in use.
  int64_t min_token_id = 1000;
  int64_t vocab_size = 32000;
  // The first tokens of every prompt are the same ids (seeded by `seed`
  // alone), to measure with prefix-cache hits on purpose. 0: none.
  int64_t shared_prefix_tokens = 0;
};

// Which requests a prompt is for: the counted sample or the warm-up, so
// warm-up prompts never prime the cache for sample prompts.
enum class PromptStream : uint64_t { kSample = 1, kWarmup = 2 };

// `length` ids for request `index` of `stream`: a pure function of its
// arguments.
std::vector<int64_t> MakePromptIds(const PromptParams& params, PromptStream stream, int64_t index,
                                   int64_t length);

// JSON body of a streamed request with greedy sampling and ignore_eos, so
// exactly `max_new_tokens` tokens are generated.
//   native: {"input_ids":[...],"sampling_params":{"max_new_tokens":N,
//            "ignore_eos":true,"temperature":0},"stream":true}
//   openai: {"model":M,"prompt":[...],"max_tokens":N,"ignore_eos":true,
//            "temperature":0,"stream":true,"stream_options":{"include_usage":true}}
std::string BuildRequestBody(Api api, std::span<const int64_t> input_ids, int64_t max_new_tokens,
                             const std::string& model);

}  // namespace ppsearch::loadgen
