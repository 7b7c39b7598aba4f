#pragma once
// A disaggregated deployment's plan: the prefill pool and the decode pool,
// each planned by the layout planner on its own hosts with its own engine
// configuration (SGLang's --disaggregation-mode prefill / decode servers),
// the checks SGLang makes between the two, and what each side sets aside
// for the KV transfer. Facts about SGLang are from v0.5.18
// (github.com/sgl-project/sglang at 71de97b264b04dcd514cf904003028aefe9775c8),
// python/sglang/srt/; each check names the function it follows.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "memory/memory_model.h"
#include "model/model.h"
#include "plan/plan.h"
#include "spec/disaggregation_section.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::plan {

// Bytes of one request's slot in SGLang's MetadataBuffers
// (disaggregation/utils.py MetadataBuffers.__init__), which carry the first
// output token and its logprobs from prefill to decode: output ids, cached
// tokens, token logprob value and index (16 x 4 bytes each), top logprob
// values and indices (128 x 4 each), top-k p (16 x 4) and index (16 x 8),
// hidden states (16 x float32 without speculative decoding) and the
// bootstrap room (8 x 8): 1,600 bytes. They live in host memory on CUDA
// GPUs (device "cpu" unless SGLANG_MOONCAKE_CUSTOM_MEM_POOL=INTRA_NODE_NVLINK).
constexpr int64_t kMetadataSlotBytes = 1600;

// The PD settings of one pool's engine, resolved with the rest of its
// engine configuration (defined in engine_config.cc, the one reader of
// engine arguments by name).
struct PdSettings {
  std::string mode = "null";  // --disaggregation-mode: null | prefill | decode
  std::string transfer_backend = "mooncake";
  int bootstrap_port = 8998;
  std::optional<int> decode_extra_slots;  // --disaggregation-decode-extra-slots
  bool decode_radix_cache = false;        // --disaggregation-decode-enable-radix-cache
  std::string kv_cache_dtype = "auto";    // --kv-cache-dtype
  // --num-reserved-decode-tokens (server_args.py, default 512): the KV a
  // decode server keeps free per active request when it preallocates another.
  int64_t reserved_decode_tokens = 512;
};
PdSettings ResolvePdSettings(const spec::EngineSpec& engine);

struct PoolPlan {
  std::string role;  // "prefill" | "decode"
  spec::PoolSpec pool;
  PdSettings pd;
  std::vector<std::string> hosts;  // names, in the pool's order
  // The pool's layout planned on its hosts with its engine configuration
  // (rank map, groups, stages, memory); node indices are the pool's.
  Plan plan;
  // Metadata slots per scheduler (managers/scheduler.py
  // Scheduler.init_disaggregation): max_running_requests x 2 on a prefill
  // server; the request pool's size x 2 on a decode server (its size is
  // max_running_requests too).
  int metadata_slots = 0;
  int64_t metadata_host_bytes = 0;  // metadata_slots x kMetadataSlotBytes
  // A decode server's extra request slots for requests still in transfer
  // (the request pool holds max_running_requests + these).
  int decode_extra_slots = 0;

  const LayoutPlan& layout() const { return plan.layouts.front(); }
};

struct DisaggregatedPlan {
  std::string spec_path;
  spec::DisaggregationEngineSpec transfer;
  PoolPlan prefill;
  PoolPlan decode;
  std::vector<Diagnostic> errors;  // checks between the pools
  std::vector<Diagnostic> warnings;

  bool valid() const;
  // Every error of both pools and between them, in the order they are printed.
  std::vector<Diagnostic> AllErrors() const;
};

// handle_pd_disaggregation's default for --disaggregation-decode-extra-slots
// (arg_groups/pd_disaggregation_hook.py): without max_running_requests 0;
// else per worker max_running_requests // dp, and twice that when it is 32
// or fewer.
int DecodeExtraSlots(std::optional<int> max_running_requests, int dp);

// The spec one pool is planned (and predicted) with: the pool's hosts as
// the cluster, its layout as the sweep's, and its engine (PoolEngineSpec).
spec::Spec PoolSpecOf(const spec::Spec& spec, const spec::Disaggregation& deployment,
                      const spec::PoolSpec& pool);

// The memory model's inputs for one pool's server: SGLang's reserve for a
// PD server of the mode `pd.mode` (defined beside PlanPool).
memory::MemoryInputs PoolMemoryInputs(const LayoutPlan& layout, const PdSettings& pd,
                                      const spec::Spec& pool_spec, const model::ModelDesc& model,
                                      const hardware::HardwareProfile& hw);

// Plans both pools of `deployment` on the spec's cluster.
DisaggregatedPlan PlanDisaggregated(const spec::Spec& spec, const spec::Disaggregation& deployment,
                                    const model::ModelDesc& model,
                                    const hardware::HardwareProfile& hw);

// `plan --json` of a disaggregated deployment: spec, transfer (backend,
// ib_device, bootstrap_port, router_policy, router_port), then per pool
// ("prefill", "decode") its role, hosts, PD settings (mode,
// transfer_backend, bootstrap_port, decode_radix_cache), transfer buffers
// (metadata_slots, metadata_host_bytes, decode_extra_slots) and "plan", the
// pool's PlanToJson; "errors" between the pools, "valid". Key names are a
// contract.
nlohmann::json DisaggregatedToJson(const DisaggregatedPlan& plan);

// The error every command but `plan` and `validate` gives a disaggregated
// spec, at its [sweep.prefill] table; Ok for an aggregated spec.
Status DisaggregatedRefusal(const spec::Spec& spec);

// The header, then each pool's plan (RenderPlanText of its layout) with its
// role, hosts, PD flags and transfer buffers, then the checks between pools.
std::string RenderDisaggregatedText(const DisaggregatedPlan& plan);

}  // namespace ppsearch::plan
