#pragma once
// SGLang's dynamic chunking under pipeline parallelism (--enable-dynamic-chunking,
// v0.5.18 scheduler_pp_mixin.py profile_and_init_predictor and ChunkSizePredictor):
// at startup PP0 times single-request prefills of 128 lengths up to 1.25 x
// chunked_prefill_size and fits f(l) = a l^2 + b l + c by least squares; while
// a request is being chunked, its next chunk x is the one whose marginal cost
// f(L + x) - f(L) equals the first chunk's f(C) - f(0), L the tokens already
// scheduled. A long prompt's later chunks attend to a longer prefix, so they
// shrink and every pipeline slot carries about the same work.
//
// Here the profile is the cost model's stage-0 time (StageTime::total_ns of a
// fresh prefill), fitted with the same quadratic, not the cost model solved
// directly: SGLang extrapolates its fit far past 1.25 x C, and the simulator
// should make the same choice it does.

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/cost_model.h"

namespace ppsearch::sim {

struct DynamicChunkingConfig {
  bool enabled = false;         // --enable-dynamic-chunking (only acts when pp_size > 1)
  double smooth_factor = 0.75;  // SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR: 0 fixed chunks, 1 strict
};

// f(l) = a l^2 + b l + c, l in tokens, f in nanoseconds.
struct PrefillCurve {
  double a = 0, b = 0, c = 0;
  double operator()(double l) const { return (a * l + b) * l + c; }
};

struct ChunkSizePredictor {
  PrefillCurve curve;
  int64_t base_chunk = 0;  // chunked_prefill_size: the first chunk of every request
  double target_ns = 0;    // f(C) - f(0)
  double smooth_factor = 0.75;
  int64_t alignment = 64;          // max(page_size, 64)
  int64_t context_len = 0;         // 0: no limit
  int64_t max_prefill_tokens = 0;  // 0: no limit
};

// The profiled prompt lengths: int(C*1.25 - i*(C*1.25//128)) for i = 0..127.
std::vector<int64_t> ProfileLengths(int64_t chunked_prefill_size);

// Least-squares quadratic through (lengths[i], times_ns[i]), dropping the
// first sample as SGLang does (its warm-up); b is clamped at 0. nullopt when
// the fit is not convex (a <= 0): SGLang then logs a warning and runs with
// fixed chunks.
std::optional<PrefillCurve> FitPrefillCurve(const std::vector<int64_t>& lengths,
                                            const std::vector<double>& times_ns);

// Profiles stage 0 of `cost` at ProfileLengths(base_chunk) and builds the
// predictor; nullopt when the fit is not convex.
std::optional<ChunkSizePredictor> MakeChunkSizePredictor(const CostModel& cost, int64_t base_chunk,
                                                         const DynamicChunkingConfig& config,
                                                         int page_size, int64_t context_len,
                                                         int64_t max_prefill_tokens);

// predict_next_chunk_size: the ideal x solves a x^2 + (2aL + b) x = target;
// smoothed = C + smooth (x - C); at least C / 4; rounded down to the
// alignment and at least one alignment unit; at most min(context_len - L -
// 100, max_prefill_tokens), rounded down to the alignment again. A value the
// clip leaves under one alignment unit falls back to C.
int64_t NextChunkSize(const ChunkSizePredictor& predictor, int64_t history_tokens);

}  // namespace ppsearch::sim
