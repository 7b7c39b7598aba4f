#include "plan/engine_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <vector>

#include "memory/sglang_reserve.h"
#include "plan/disaggregation.h"
#include "spec/engine_env.h"

namespace ppsearch::plan {
namespace {

// SGLang's argparse reads "0.85" as 0.85, however the spec wrote it.
std::optional<double> ArgNumber(const spec::EngineSpec& engine, const char* flag) {
  const spec::ArgValue* v = engine.FindArg(flag);
  if (v == nullptr) return std::nullopt;
  if (v->kind == spec::ArgValue::Kind::kFloat) return v->float_value;
  if (v->kind == spec::ArgValue::Kind::kInt) return static_cast<double>(v->int_value);
  return std::strtod(v->text.c_str(), nullptr);
}

std::optional<SourceLoc> OriginOf(const spec::EngineSpec& engine, const char* flag) {
  if (const spec::ArgValue* v = engine.FindArg(flag)) return v->origin;
  return std::nullopt;
}

// Where a search's knob sets a setting.
SourceLoc SearchOrigin() {
  SourceLoc loc;
  loc.file = "search";
  return loc;
}

template <typename T>
std::optional<T> ArgAs(const spec::EngineSpec& engine, const char* flag) {
  if (std::optional<int64_t> v = engine.ArgInt(flag)) return static_cast<T>(*v);
  return std::nullopt;
}

}  // namespace

int VersionCode(const std::string& version) {
  // The spec's reading of a version (spec::ParseVersion), so that what the
  // spec accepts the planner understands: "1" is 1.0.0, "v0.5.18rc1" 0.5.18.
  const std::optional<std::vector<int>> parts = spec::ParseVersion(version);
  if (!parts) return -1;
  const auto part = [&](size_t i) { return i < parts->size() ? (*parts)[i] : 0; };
  return part(0) * 10000 + part(1) * 100 + part(2);
}

int64_t EngineConfig::SchedulerChunk(int dp) const {
  if (chunked_prefill_size <= 0 || dp <= 1) return chunked_prefill_size;
  return std::max<int64_t>(chunked_prefill_size / dp, 1);
}

int64_t EngineConfig::PrefillBatchTokens() const {
  return chunked_prefill_size > 0 ? chunked_prefill_size : max_prefill_tokens;
}

EngineConfig ResolveEngineConfig(const spec::EngineSpec& engine, double gpu_memory_mib, int pp) {
  EngineConfig c;
  const std::optional<int64_t> chunk = engine.ArgInt("chunked-prefill-size");
  c.chunked_prefill_size_origin = OriginOf(engine, "chunked-prefill-size");
  c.pp_max_micro_batch_size_origin = OriginOf(engine, "pp-max-micro-batch-size");
  c.moe_a2a_backend_origin = OriginOf(engine, "moe-a2a-backend");
  c.chunked_prefill_size = chunk.value_or(memory::DefaultChunkedPrefillSize(gpu_memory_mib));
  c.max_prefill_tokens = engine.ArgInt("max-prefill-tokens").value_or(c.max_prefill_tokens);
  c.max_running_requests = ArgAs<int>(engine, "max-running-requests");
  c.max_total_tokens = engine.ArgInt("max-total-tokens");
  c.pp_max_micro_batch_size = ArgAs<int>(engine, "pp-max-micro-batch-size").value_or(0);
  c.pp_async_batch_depth = ArgAs<int>(engine, "pp-async-batch-depth").value_or(0);
  c.page_size = ArgAs<int>(engine, "page-size").value_or(1);
  c.context_length = engine.ArgInt("context-length");
  c.enable_dynamic_chunking = engine.ArgTrue("enable-dynamic-chunking");
  c.dynamic_chunk_smooth_factor = spec::DynamicChunkSmoothFactor(engine);
  c.disable_overlap_schedule = engine.ArgTrue("disable-overlap-schedule");
  c.disable_radix_cache = engine.ArgTrue("disable-radix-cache");

  c.mem_fraction_static = ArgNumber(engine, "mem-fraction-static");
  c.mem_fraction_static_text = engine.ArgString("mem-fraction-static").value_or("");

  c.mamba_full_memory_ratio =
      ArgNumber(engine, "mamba-full-memory-ratio").value_or(c.mamba_full_memory_ratio);
  c.max_mamba_cache_size = engine.ArgInt("max-mamba-cache-size");
  // Either spelling (one dest in SGLang's argparse; the spec refuses both).
  for (const char* flag : {"mamba-scheduler-strategy", "mamba-radix-cache-strategy"})
    if (std::optional<std::string> v = engine.ArgString(flag)) c.mamba_radix_cache_strategy = *v;
  c.linear_attn_backend = engine.ArgString("linear-attn-backend").value_or(c.linear_attn_backend);
  c.mamba_skip_decode_lock = spec::MambaSkipDecodeLock(engine);
  c.pp_layer_partition = spec::PpLayerPartition(engine, pp);
  if (!c.pp_layer_partition.empty())
    c.pp_layer_partition_source = spec::PpLayerPartitionSource(engine, pp);
  c.version_code = VersionCode(engine.version);

  c.disable_cuda_graph = engine.ArgTrue("disable-cuda-graph");
  c.disable_decode_cuda_graph = engine.ArgTrue("disable-decode-cuda-graph");
  c.disable_prefill_cuda_graph = engine.ArgTrue("disable-prefill-cuda-graph");
  c.cuda_graph_backend_decode = engine.ArgString("cuda-graph-backend-decode");
  c.cuda_graph_backend_prefill = engine.ArgString("cuda-graph-backend-prefill");
  // --cuda-graph-max-bs is the deprecated alias of --cuda-graph-max-bs-decode;
  // the newer spelling wins when both are given.
  for (const char* flag : {"cuda-graph-max-bs", "cuda-graph-max-bs-decode"})
    if (std::optional<int> v = ArgAs<int>(engine, flag)) c.cuda_graph_max_bs = v;
  c.cuda_graph_max_bs_prefill = engine.ArgInt("cuda-graph-max-bs-prefill");

  c.moe_a2a_backend = engine.ArgString("moe-a2a-backend").value_or("none");
  c.deepep_mode = engine.ArgString("deepep-mode").value_or("auto");
  c.moe_runner_backend = engine.ArgString("moe-runner-backend").value_or("auto");
  c.moe_dense_tp_size = ArgAs<int>(engine, "moe-dense-tp-size").value_or(0);
  c.enable_dp_lm_head = engine.ArgTrue("enable-dp-lm-head");

  c.chunked_prefix_cache_threshold = spec::ChunkedPrefixCacheThreshold(engine);
  c.disable_chunked_prefix_cache = engine.ArgTrue("disable-chunked-prefix-cache");
  c.flashinfer_mla_disable_ragged = engine.ArgTrue("flashinfer-mla-disable-ragged");
  return c;
}

std::string EngineKnobs::Label() const {
  std::string out;
  if (chunked_prefill_size != 0) out += fmt::format("chunk {}", chunked_prefill_size);
  if (max_running_requests != 0)
    out += (out.empty() ? "" : ", ") + fmt::format("mrr {}", max_running_requests);
  if (!moe_a2a_backend.empty()) out += (out.empty() ? "a2a " : ", a2a ") + moe_a2a_backend;
  return out.empty() ? "spec's knobs" : out;
}

EngineConfig WithKnobs(EngineConfig engine, const EngineKnobs& knobs) {
  if (knobs.chunked_prefill_size != 0) {
    engine.chunked_prefill_size = knobs.chunked_prefill_size;
    engine.chunked_prefill_size_origin = SearchOrigin();
  }
  if (knobs.max_running_requests != 0) engine.max_running_requests = knobs.max_running_requests;
  if (!knobs.moe_a2a_backend.empty()) {
    engine.moe_a2a_backend = knobs.moe_a2a_backend;
    engine.moe_a2a_backend_origin = SearchOrigin();
  }
  return engine;
}

bool A2aForcesEpEqTp(const EngineConfig& engine) {
  // Backends whose dispatcher needs one expert shard per TP rank.
  static const std::set<std::string> kBackends = {"deepep", "deepep_v2",     "mooncake",
                                                  "nixl",   "ascend_fuseep", "flashinfer",
                                                  "mori",   "pplx",          "megamoe"};
  return kBackends.count(engine.moe_a2a_backend) > 0;
}

bool DeepEpDispatchesBf16(const EngineConfig& engine) {
  return engine.moe_runner_backend == "cutlass" ||
         engine.moe_runner_backend == "flashinfer_cutedsl";
}

bool SharedExpertsWhole(const EngineConfig& engine) {
  static const std::set<std::string> kBackends = {"deepep", "mooncake", "ascend_fuseep",
                                                  "flashinfer"};
  return kBackends.count(engine.moe_a2a_backend) > 0;
}

PdSettings ResolvePdSettings(const spec::EngineSpec& engine) {
  PdSettings pd;
  pd.mode = engine.ArgString("disaggregation-mode").value_or(pd.mode);
  pd.transfer_backend =
      engine.ArgString("disaggregation-transfer-backend").value_or(pd.transfer_backend);
  pd.bootstrap_port =
      ArgAs<int>(engine, "disaggregation-bootstrap-port").value_or(pd.bootstrap_port);
  pd.decode_extra_slots = ArgAs<int>(engine, "disaggregation-decode-extra-slots");
  pd.decode_radix_cache = engine.ArgTrue("disaggregation-decode-enable-radix-cache");
  pd.kv_cache_dtype = engine.ArgString("kv-cache-dtype").value_or(pd.kv_cache_dtype);
  pd.reserved_decode_tokens =
      ArgAs<int64_t>(engine, "num-reserved-decode-tokens").value_or(pd.reserved_decode_tokens);
  return pd;
}

}  // namespace ppsearch::plan
