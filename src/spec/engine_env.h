#pragma once
// Reading [engine.env] variables the simulator models.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/spec.h"

namespace ppsearch::spec {

inline constexpr char kDynamicChunkSmoothEnv[] = "SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR";
inline constexpr char kChunkedPrefixThresholdEnv[] = "SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD";
inline constexpr char kMambaSkipDecodeLockEnv[] = "SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK";
inline constexpr char kPpLayerPartitionEnv[] = "SGLANG_PP_LAYER_PARTITION";

// The value of variable `name` in [engine.env], or nullptr.
const std::string* FindEnv(const EngineSpec& engine, const std::string& name);

// The variables above, which SGLang reads from its environment and the
// model follows (from the spec's [engine.env], or serve-sim's own
// environment), in one table with the values each takes.
std::vector<const char*> ModelledEnvNames();

// What a modelled variable takes, when `value` is not that ("a number from
// 0 (fixed chunks) to 1 (strict)"); nullptr when it is, or when `name` is
// not modelled.
const char* ModelledEnvExpected(const std::string& name, const std::string& value);

// The text as a number in [0, 1]; nullopt otherwise.
std::optional<double> ParseSmoothFactor(const std::string& text);

// The text as a whole number of tokens, >= 0 (SGLang reads it with int());
// nullopt otherwise.
std::optional<int64_t> ParseTokenCount(const std::string& text);

// The text as SGLang's EnvBool reads it (environ.py): true, 1, yes, y or
// false, 0, no, n in any case; nullopt otherwise (SGLang then warns and
// keeps the variable's default, so a typo would pass silently there).
std::optional<bool> ParseEnvBool(const std::string& text);

// SGLANG_OPT_MAMBA_SKIP_DECODE_LOCK from [engine.env] (checked when the spec
// is parsed), else false: whether a running request of a hybrid model holds
// one state slot fewer (mem_cache/kv_cache_configurator.py
// _calculate_mamba_ratio, SGLang 0.5.17 and later).
bool MambaSkipDecodeLock(const EngineSpec& engine);

// SGLANG_PP_LAYER_PARTITION's text as SGLang splits it (distributed/utils.py
// get_pp_indices: int() of each comma-separated field, spaces around a
// number allowed): the layers of each pipeline stage, each at least 1 (a
// stage of no layer, or fewer, is no split); nullopt otherwise.
std::optional<std::vector<int>> ParsePpLayerPartition(const std::string& text);

// `partition` as SGLANG_PP_LAYER_PARTITION's text ("12,12,11"), which
// ParsePpLayerPartition reads back.
std::string PpLayerPartitionText(const std::vector<int>& partition);

// The SGLANG_PP_LAYER_PARTITION the servers of a PP `pp` layout run with
// (checked when the spec is parsed): [engine.pp_layer_partition]'s entry
// for `pp`, else [engine.env]'s; empty when neither: SGLang's even split.
// Whether it has one entry per stage and sums to the model's layers is the
// planner's check.
std::vector<int> PpLayerPartition(const EngineSpec& engine, int pp);

// Where PpLayerPartition(engine, pp) comes from, for messages:
// "[engine.pp_layer_partition] 8 = [12, 12, ...]" or
// "[engine.env] SGLANG_PP_LAYER_PARTITION = \"12,12,...\"" (the env's
// origin: "the environment's" for a simulated server).
std::string PpLayerPartitionSource(const EngineSpec& engine, int pp);

// SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD from [engine.env] (checked when the
// spec is parsed), else SGLang's 8,192 (models/deepseek_v2.py): the cached
// prefix a batch needs before MLA prefill goes back to the MHA form.
int64_t ChunkedPrefixCacheThreshold(const EngineSpec& engine);

// SGLANG_DYNAMIC_CHUNKING_SMOOTH_FACTOR from [engine.env] (checked to be a
// number in [0, 1] when the spec is parsed), else SGLang's 0.75 (environ.py).
double DynamicChunkSmoothFactor(const EngineSpec& engine);

}  // namespace ppsearch::spec
