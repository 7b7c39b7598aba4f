#pragma once
// The engine settings a layout runs with, typed and resolved once: the
// spec's [engine.args] and [engine.env], else SGLang's defaults. Everything
// below the loader (planner, memory, cost, simulator, search, calibration)
// reads these fields; only ResolveEngineConfig reads an engine argument by
// name (tests/layering_test.cc holds the rest of src/ to that).
//
// SGLang's defaults come from one table, its server_args.py (v0.5.18):
// flag defaults at their argparse definitions, and the GPU-memory
// heuristics of _handle_gpu_memory_settings for chunked_prefill_size
// (memory/sglang_reserve.h DefaultChunkedPrefillSize: 8,192 below 160 GiB,
// 16,384 from there on B200-class GPUs).

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "spec/spec.h"

namespace ppsearch::plan {

struct EngineConfig {
  // --- scheduler ---
  // --chunked-prefill-size: the spec's, else SGLang's per-GPU default; <= 0
  // disables chunking (a prefill batch is then capped by max_prefill_tokens).
  int64_t chunked_prefill_size = 8192;
  int64_t max_prefill_tokens = 16384;       // --max-prefill-tokens
  std::optional<int> max_running_requests;  // --max-running-requests; unset: from the KV pool
  std::optional<int64_t> max_total_tokens;  // --max-total-tokens: a cap on the KV pool
  int pp_max_micro_batch_size = 0;          // 0: SGLang's max(max_running_requests // pp, 1)
  int pp_async_batch_depth = 0;
  int page_size = 1;
  std::optional<int64_t> context_length;  // --context-length; unset: the model's
  bool enable_dynamic_chunking = false;
  double dynamic_chunk_smooth_factor = 0.75;  // SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR
  bool disable_overlap_schedule = false;
  bool disable_radix_cache = false;

  // --- memory ---
  std::optional<double> mem_fraction_static;  // unset: SGLang's heuristic
  std::string mem_fraction_static_text;       // as the spec wrote it, for messages

  // --- linear-attention state pool (memory/state_pool.h) ---
  double mamba_full_memory_ratio = 0.9;         // --mamba-full-memory-ratio
  std::optional<int64_t> max_mamba_cache_size;  // --max-mamba-cache-size
  // --mamba-radix-cache-strategy, or its older alias --mamba-scheduler-strategy.
  std::string mamba_radix_cache_strategy = "auto";
  std::string linear_attn_backend = "triton";  // --linear-attn-backend
  bool mamba_skip_decode_lock = false;         // SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK
  // SGLANG_PP_LAYER_PARTITION: each stage's layers; empty: the even split.
  std::vector<int> pp_layer_partition;
  std::string pp_layer_partition_source;  // where the spec sets it, for messages

  // engine.version as minor * 100 + patch ("0.5.18" -> 518); -1 when the
  // spec names none, and the model then follows v0.5.18.
  int version_code = -1;

  // --- CUDA graphs (cuda_graph_hook.py parse_cuda_graph_config) ---
  bool disable_cuda_graph = false;
  bool disable_decode_cuda_graph = false;
  bool disable_prefill_cuda_graph = false;
  std::optional<std::string> cuda_graph_backend_decode;
  std::optional<std::string> cuda_graph_backend_prefill;
  std::optional<int> cuda_graph_max_bs;  // --cuda-graph-max-bs(-decode)
  std::optional<int64_t> cuda_graph_max_bs_prefill;

  // --- MoE ---
  std::string moe_a2a_backend = "none";     // --moe-a2a-backend
  std::string deepep_mode = "auto";         // --deepep-mode
  std::string moe_runner_backend = "auto";  // --moe-runner-backend
  int moe_dense_tp_size = 0;                // 0: unset
  bool enable_dp_lm_head = false;

  // --- MLA prefill form (cost/mla_prefill.h) ---
  // SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD, --disable-chunked-prefix-cache,
  // --flashinfer-mla-disable-ragged; the backend is the hardware profile's.
  int64_t chunked_prefix_cache_threshold = 8192;
  bool disable_chunked_prefix_cache = false;
  bool flashinfer_mla_disable_ragged = false;

  // Where the settings that messages point at were set: the argument's place
  // in the spec (or "search" for a search's knob); unset: SGLang's default.
  std::optional<SourceLoc> chunked_prefill_size_origin;
  std::optional<SourceLoc> pp_max_micro_batch_size_origin;
  std::optional<SourceLoc> moe_a2a_backend_origin;
  // Whether the chunk was set (by the spec or a knob), not SGLang's default.
  bool chunked_prefill_size_from_spec() const { return chunked_prefill_size_origin.has_value(); }

  // The chunk one scheduler prefills: chunked_prefill_size // dp under DP
  // attention (server_args.py _handle_data_parallelism), at least 1; <= 0
  // when chunking is off.
  int64_t SchedulerChunk(int dp) const;
  // The tokens one prefill batch holds at most: the chunk, or
  // max_prefill_tokens when chunking is off.
  int64_t PrefillBatchTokens() const;
};

// The engine settings a search varies over the spec's own (search/space.h
// enumerates them): 0 or empty keeps the spec's. They are set on a resolved
// configuration (WithKnobs), never written back into the spec as arguments.
struct EngineKnobs {
  int64_t chunked_prefill_size = 0;  // -1: chunking off
  int max_running_requests = 0;
  std::string moe_a2a_backend;
  bool operator==(const EngineKnobs& o) const {
    return chunked_prefill_size == o.chunked_prefill_size &&
           max_running_requests == o.max_running_requests && moe_a2a_backend == o.moe_a2a_backend;
  }
  bool operator<(const EngineKnobs& o) const {
    return std::tie(chunked_prefill_size, max_running_requests, moe_a2a_backend) <
           std::tie(o.chunked_prefill_size, o.max_running_requests, o.moe_a2a_backend);
  }
  // "chunk 8192, mrr 64, a2a deepep"; "spec's knobs" when all are kept.
  std::string Label() const;
};

// "0.5.9" or "v0.5.9" -> 509 (minor * 100 + patch, major 0); -1 when unknown.
int VersionCode(const std::string& version);

// Resolves the spec's engine settings on a GPU of `gpu_memory_mib` (0 when
// unknown: SGLang's smallest tier applies) for a layout of `pp` pipeline
// stages (the layer split is per PP size: spec::PpLayerPartition). Values
// were checked when the spec was parsed.
EngineConfig ResolveEngineConfig(const spec::EngineSpec& engine, double gpu_memory_mib, int pp = 1);

// `engine` with the knobs that are set: a chunk set this way counts as set
// (as the spec's would), and what a knob sets was set at "search".
EngineConfig WithKnobs(EngineConfig engine, const EngineKnobs& knobs);

// Whether the all-to-all backend makes SGLang set ep_size = tp_size whatever
// the spec says (overrides.py _a2a_ep_size).
bool A2aForcesEpEqTp(const EngineConfig& engine);

// Whether the MoE backend builds the shared experts with tp_size 1, whole on
// every rank (deepseek_v2.py, kimi_k3.py: the all-to-all leaves each rank
// its own tokens, so a TP-sharded partial sum could not be reduced).
bool SharedExpertsWhole(const EngineConfig& engine);

// Whether DeepEP dispatches BF16 activations whatever the experts' weights:
// under the cutlass and flashinfer_cutedsl MoE runners, which quantize
// inside their kernels (layers/moe/utils.py get_deepep_output_dtype, step
// "flashinfer_cutedsl / cutlass ... expects BF16 dispatch"; the normal
// dispatcher's FP8 quantization in token_dispatcher/deepep.py
// _DeepEPDispatcherImplNormal.dispatch_a is skipped then too).
bool DeepEpDispatchesBf16(const EngineConfig& engine);

}  // namespace ppsearch::plan
