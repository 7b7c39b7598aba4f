#pragma once
// What one micro-batch asks of the model: the sequences it extends (prefill
// chunks) or advances by one token (decode), with their cached prefixes.

#include <cstdint>
#include <vector>

namespace ppsearch::sim {

struct BatchEntry {
  int request = 0;            // index into the engine's request table
  int64_t extend_tokens = 0;  // new tokens this batch computes for the request
  int64_t prefix_tokens = 0;  // tokens already in the KV cache (earlier chunks, decode context)
  bool last_chunk = false;    // prefill: this chunk completes the prompt
};

struct MicroBatch {
  bool is_prefill = false;
  std::vector<BatchEntry> entries;

  bool empty() const { return entries.empty(); }
  int64_t extend_tokens() const {
    int64_t n = 0;
    for (const auto& e : entries) n += e.extend_tokens;
    return n;
  }
};

}  // namespace ppsearch::sim
