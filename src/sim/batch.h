#pragma once
// What one micro-batch asks of the model: the sequences it extends (prefill
// chunks) or advances by one token (decode), with their cached prefixes.
// With DP attention, one step of every DP rank's batch together.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ppsearch::sim {

// A batch's size as its activations see it: the tokens it computes and the
// sequences it computes logits for (memory/served.h).
struct BatchShape {
  int64_t tokens = 0;
  int64_t logit_rows = 0;
  bool operator==(const BatchShape&) const = default;
};

// Adds `shape` to `front`, the shapes none of the others covers in both
// sizes (what bounds the activations of every batch run); false when one
// already covers it. The front stays small: a shape with more rows than
// another has fewer tokens.
inline bool AddToFront(std::vector<BatchShape>& front, const BatchShape& shape) {
  for (const BatchShape& s : front)
    if (s.tokens >= shape.tokens && s.logit_rows >= shape.logit_rows) return false;
  std::erase_if(front, [&](const BatchShape& s) {
    return s.tokens <= shape.tokens && s.logit_rows <= shape.logit_rows;
  });
  front.push_back(shape);
  return true;
}

struct BatchEntry {
  int request = 0;            // index into the engine's request table
  int64_t extend_tokens = 0;  // new tokens this batch computes for the request
  int64_t prefix_tokens = 0;  // tokens already in the KV cache (earlier chunks, decode context)
  bool last_chunk = false;    // prefill: this chunk completes the prompt
};

struct MicroBatch {
  bool is_prefill = false;
  std::vector<BatchEntry> entries;
  // DP attention (dp > 1): each DP rank's own batch, in rank order; an empty
  // one is the idle batch a rank without work runs, because every MoE layer
  // gathers all ranks' tokens (SGLang managers/scheduler.py
  // prepare_mlp_sync_batch). `entries` then holds every rank's entries and
  // `is_prefill` is set when any rank extends. Empty without DP attention.
  std::vector<MicroBatch> dp_ranks;

  bool empty() const { return entries.empty(); }
  int64_t extend_tokens() const {
    int64_t n = 0;
    for (const auto& e : entries) n += e.extend_tokens;
    return n;
  }
};

}  // namespace ppsearch::sim
