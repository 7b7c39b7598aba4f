// PlanDisaggregated: each pool through the layout planner on its own hosts,
// then the checks SGLang makes when a decode server first reaches a prefill
// server (disaggregation/common/conn.py CommonKVManager).

#include "plan/disaggregation.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "memory/served.h"
#include "memory/sglang_reserve.h"
#include "plan/plan_internal.h"
#include "plan/spec_hardware.h"
#include "spec/spec_parser.h"
#include "util/format.h"

namespace ppsearch::plan {
namespace {

Diagnostic PoolError(const spec::PoolSpec& pool, const std::string& what,
                     const std::string& reason) {
  return {pool.origin.Where() + ": " + what, pool.origin, reason};
}

// The pool's GPUs are its hosts' GPUs, split into whole-node instances. These
// replace the planner's cluster-wide checks (gpu_count, instance_nodes),
// which would speak of the cluster rather than the pool.
void CheckRatio(const spec::PoolSpec& pool, int gpus_per_node, std::vector<Diagnostic>& errors) {
  const spec::LayoutSpec& layout = pool.layout;
  const int hosts = static_cast<int>(pool.hosts.size());
  const int64_t pool_gpus = int64_t{hosts} * gpus_per_node;
  if (layout.gpus() != pool_gpus) {
    errors.push_back(PoolError(
        pool,
        fmt::format("the {} pool's {} uses {} GPUs but its {} host{} x {} have {}; instances x "
                    "PP x TP must equal the pool's GPUs",
                    pool.role, layout.Label(), layout.gpus(), hosts, hosts == 1 ? "" : "s",
                    gpus_per_node, pool_gpus),
        "gpu_count"));
  }
  if (hosts % layout.instances != 0) {
    errors.push_back(PoolError(
        pool,
        fmt::format("the {} pool runs {} instances on {} hosts; each instance needs whole nodes "
                    "of its own, so the instance count must divide the pool's host count",
                    pool.role, layout.instances, hosts),
        "instance_nodes"));
  }
}

// A decode server's pre-allocation slots (pre_alloc_size): the user's
// --disaggregation-decode-extra-slots, else SGLang's default for it.
int PreAllocSlots(const PdSettings& pd, const EngineConfig& e, int dp) {
  return pd.decode_extra_slots.value_or(DecodeExtraSlots(e.max_running_requests, dp));
}

PoolPlan PlanPool(const spec::Spec& spec, const spec::Disaggregation& deployment,
                  const spec::PoolSpec& pool, const model::ModelDesc& model,
                  const hardware::HardwareProfile& hw) {
  const spec::Spec pool_spec = PoolSpecOf(spec, deployment, pool);
  PoolPlan out;
  out.role = pool.role;
  out.pool = pool;
  for (int h : pool.hosts) out.hosts.push_back(spec.cluster.hosts[h].name);
  out.pd = ResolvePdSettings(pool_spec.engine);
  out.plan = PlanSearch(pool_spec, model, hw);

  LayoutPlan& layout = out.plan.layouts.front();
  // handle_pd_disaggregation: "KV cache is forced as chunk cache for decode
  // server" unless --disaggregation-decode-enable-radix-cache.
  if (out.pd.mode == "decode") layout.engine.disable_radix_cache = !out.pd.decode_radix_cache;
  if (hw.memory_mib > 0 && !layout.stages.empty()) {
    layout.memory = memory::PlanMemory(PoolMemoryInputs(layout, out.pd, pool_spec, model, hw));
    layout.errors = ValidateLayout(pool.layout, pool_spec, model, hw, layout);
    // The warnings quote the memory: the pool's, not an aggregated server's.
    layout.warnings = LayoutWarnings(pool.layout, pool_spec, model, hw, layout);
  }
  std::vector<Diagnostic> errors;
  CheckRatio(pool, spec.cluster.gpus_per_node, errors);
  for (Diagnostic& e : layout.errors)
    if (e.reason != "gpu_count" && e.reason != "instance_nodes") errors.push_back(std::move(e));
  layout.errors = std::move(errors);
  layout.valid = layout.errors.empty();

  const int mrr = layout.engine.max_running_requests.value_or(layout.memory.max_running_requests);
  // Scheduler.init_disaggregation: "*2 for the headroom" on prefill; the
  // decode side's buffer_multiplier is 2 (8 only for MiniMax's sparse models).
  out.metadata_slots = mrr * 2;
  out.metadata_host_bytes = int64_t{out.metadata_slots} * kMetadataSlotBytes;
  if (out.pd.mode == "decode")
    out.decode_extra_slots = PreAllocSlots(out.pd, layout.engine, pool.layout.dp);
  return out;
}

// Attention TP of one server: tp / dp with DP attention, else tp.
int AttnTp(const spec::LayoutSpec& layout) {
  return layout.dp > 1 ? layout.tp / layout.dp : layout.tp;
}

void CheckPools(const PoolPlan& prefill, const PoolPlan& decode, std::vector<Diagnostic>& errors) {
  const spec::LayoutSpec& p = prefill.pool.layout;
  const spec::LayoutSpec& d = decode.pool.layout;
  // CommonKVManager._resolve_rank_mapping: "Decode pp size should be equal
  // to prefill pp size or 1" (an assertion when the first request arrives).
  // PP inside a pool is supported: scheduler.py dispatch_event_loop runs
  // event_loop_pp_disagg_prefill / _decode.
  if (d.pp != p.pp && d.pp != 1)
    errors.push_back(PoolError(
        decode.pool,
        fmt::format("the decode pool's PP {} must equal the prefill pool's PP {} or be 1; SGLang "
                    "maps each decode stage to one prefill stage, or one decode stage to all "
                    "(disaggregation/common/conn.py CommonKVManager._resolve_rank_mapping)",
                    d.pp, p.pp),
        "pd_pp"));
  // The same function maps attention TP ranks by the ratio of the two
  // attention TP sizes (integer division either way round), so one must
  // divide the other.
  const int pa = AttnTp(p);
  const int da = AttnTp(d);
  if (pa > 0 && da > 0 && std::max(pa, da) % std::min(pa, da) != 0)
    errors.push_back(PoolError(
        decode.pool,
        fmt::format("the decode pool's attention TP {} and the prefill pool's {} must divide one "
                    "another; SGLang maps KV between attention TP ranks by their ratio "
                    "(disaggregation/common/conn.py CommonKVManager._resolve_rank_mapping)",
                    da, pa),
        "pd_attn_tp"));
  // CommonKVManager.try_ensure_parallel_info refuses a prefill server whose
  // page size or KV cache dtype differs from the decode server's.
  const EngineConfig& pe = prefill.layout().engine;
  const EngineConfig& de = decode.layout().engine;
  const PdSettings& ppd = prefill.pd;
  const PdSettings& dpd = decode.pd;
  if (pe.page_size != de.page_size)
    errors.push_back(PoolError(
        decode.pool,
        fmt::format("the decode pool's page-size {} differs from the prefill pool's {}; SGLang "
                    "refuses the pair (\"Both servers must use the same --page-size value\", "
                    "CommonKVManager.try_ensure_parallel_info)",
                    de.page_size, pe.page_size),
        "pd_page_size"));
  if (ppd.kv_cache_dtype != dpd.kv_cache_dtype)
    errors.push_back(PoolError(
        decode.pool,
        fmt::format("the decode pool's kv-cache-dtype '{}' differs from the prefill pool's '{}'; "
                    "SGLang refuses the pair (\"Both servers must use the same --kv-cache-dtype "
                    "value\", CommonKVManager.try_ensure_parallel_info)",
                    dpd.kv_cache_dtype, ppd.kv_cache_dtype),
        "pd_kv_dtype"));
}

}  // namespace

// SGLang's reserve for a PD server (server_args.py
// _handle_gpu_memory_settings, reserve_for_graph_mb, reserve_for_deepep_a2a_mb
// and _apply_cuda_graph_disaggregation_roles): a prefill server captures no
// decode graph (nor its DP-attention padding, nor DeepEP's decode buffers);
// a decode server no prefill graph, and its activation allowance counts
// its running requests (max_running_requests, else the decode graph's
// max_bs) where an aggregated server counts its prefill chunk. Each is
// expressed in the inputs the memory model already reads.
memory::MemoryInputs PoolMemoryInputs(const LayoutPlan& layout, const PdSettings& pd,
                                      const spec::Spec& pool_spec, const model::ModelDesc& model,
                                      const hardware::HardwareProfile& hw) {
  memory::MemoryInputs in = StageMemoryInputs(layout, pool_spec, model, hw);
  const EngineConfig& e = layout.engine;
  if (pd.mode == "prefill") {
    if (!e.cuda_graph_backend_decode) in.decode_graph = false;
    in.dp_attention = false;  // its only use is the decode graph's padding
  } else if (pd.mode == "decode") {
    if (!e.cuda_graph_backend_prefill) in.prefill_graph = false;
    in.chunked_prefill_size = e.max_running_requests.value_or(memory::DecodeGraphMaxBs(in));
    // Nor does it run a prefill batch: the prompts' KV arrives prefilled, and
    // its largest batch is one decode step of its running requests (in the
    // decode graph's pool while the graph holds it).
    memory::EstimateActivationsFor(in, model,
                                   {{}, in.chunked_prefill_size / std::max(in.dp_size, 1)});
    in.request_table_extra_rows = PreAllocSlots(pd, e, layout.layout.dp);
    in.pd_decode = true;
  }
  return in;
}

spec::Spec PoolSpecOf(const spec::Spec& spec, const spec::Disaggregation& deployment,
                      const spec::PoolSpec& pool) {
  spec::Spec pool_spec = spec;
  pool_spec.cluster.hosts.clear();
  for (int h : pool.hosts) pool_spec.cluster.hosts.push_back(spec.cluster.hosts[h]);
  // The one engine configuration, resolved per pool from the pool's flags.
  pool_spec.engine = spec::PoolEngineSpec(spec, deployment, pool);
  pool_spec.sweep.layouts = {pool.layout};
  return pool_spec;
}

int DecodeExtraSlots(std::optional<int> max_running_requests, int dp) {
  if (!max_running_requests) return 0;
  const int per_worker = *max_running_requests / std::max(1, dp);
  return per_worker <= 32 ? per_worker * 2 : 0;
}

bool DisaggregatedPlan::valid() const { return AllErrors().empty(); }

std::vector<Diagnostic> DisaggregatedPlan::AllErrors() const {
  std::vector<Diagnostic> all = prefill.layout().errors;
  all.insert(all.end(), decode.layout().errors.begin(), decode.layout().errors.end());
  all.insert(all.end(), errors.begin(), errors.end());
  return all;
}

DisaggregatedPlan PlanDisaggregated(const spec::Spec& spec, const spec::Disaggregation& deployment,
                                    const model::ModelDesc& model,
                                    const hardware::HardwareProfile& hw) {
  DisaggregatedPlan plan;
  plan.spec_path = spec.path;
  plan.transfer = deployment.transfer;
  plan.prefill = PlanPool(spec, deployment, deployment.prefill, model, hw);
  plan.decode = PlanPool(spec, deployment, deployment.decode, model, hw);
  CheckPools(plan.prefill, plan.decode, plan.errors);
  return plan;
}

Status DisaggregatedRefusal(const spec::Spec& spec) {
  if (!spec::IsDisaggregated(spec)) return Status::Ok();
  return MakeError(spec.Origin("sweep.prefill").Position() +
                   ": [sweep.prefill] and [sweep.decode] make this a disaggregated deployment; "
                   "only `ppsearch plan`, `ppsearch validate`, `ppsearch simulate`, `ppsearch "
                   "run` and `ppsearch backtest` understand disaggregated deployments so far "
                   "(`ppsearch search` of an aggregated spec adds them itself)");
}

namespace {

std::string HostList(const PoolPlan& pool) {
  std::string out;
  for (const std::string& host : pool.hosts) out += (out.empty() ? "" : " ") + host;
  return out;
}

std::string PoolLine(const PoolPlan& pool) {
  const spec::LayoutSpec& layout = pool.pool.layout;
  return fmt::format("# {:<9} {} on {} ({} GPUs)\n", pool.role, layout.Label(), HostList(pool),
                     layout.gpus());
}

// What the pool's servers do for PD beyond an aggregated server's plan.
void RenderPoolPd(const PoolPlan& pool, std::string& out) {
  const LayoutPlan& layout = pool.layout();
  const EngineConfig& e = layout.engine;
  const PdSettings& pd = pool.pd;
  out += fmt::format(
      "  PD server       --disaggregation-mode {}\n"
      "                  --disaggregation-transfer-backend {} --disaggregation-bootstrap-port {}\n",
      pd.mode, pd.transfer_backend, pd.bootstrap_port);
  if (pd.mode == "prefill") {
    out +=
        "                  no decode CUDA graph, no DP-attention decode padding in the reserve\n";
  } else {
    out += fmt::format(
        "                  no prefill CUDA graph; {} cache; reserve sized for {} running "
        "requests\n",
        e.disable_radix_cache ? "chunk (no radix)" : "radix",
        e.max_running_requests ? std::to_string(*e.max_running_requests) : "the graph's");
  }
  out += fmt::format(
      "  transfer        {} metadata slots x {} B = {} MiB host memory per scheduler{}\n",
      FormatThousands(pool.metadata_slots), FormatThousands(kMetadataSlotBytes),
      FormatMib(static_cast<double>(pool.metadata_host_bytes) / (1024.0 * 1024.0)),
      pd.mode == "decode"
          ? fmt::format("; {} extra request slots for transfers", pool.decode_extra_slots)
          : "");
  if (layout.memory.max_total_tokens > 0)
    out += fmt::format("                  KV pool {} tokens per server ({})\n",
                       FormatThousands(layout.memory.max_total_tokens),
                       pd.mode == "decode" ? "the transfers write into it"
                                           : "the transfers read the prompts' KV from it");
}

}  // namespace

std::string RenderDisaggregatedText(const DisaggregatedPlan& plan) {
  const spec::DisaggregationEngineSpec& t = plan.transfer;
  std::string out =
      fmt::format("# ppsearch plan {}: disaggregated prefill and decode\n", plan.spec_path);
  out += fmt::format("# transfer  {}, bootstrap port {}, IB devices {}\n", t.transfer_backend,
                     t.bootstrap_port, t.ib_device.empty() ? "detected by SGLang" : t.ib_device);
  out += fmt::format("# router    {} on port {}\n", t.router_policy, t.router_port);
  out += PoolLine(plan.prefill) + PoolLine(plan.decode);
  for (const PoolPlan* pool : {&plan.prefill, &plan.decode}) {
    out += fmt::format("\n## {} pool\n", pool->role);
    out += RenderPlanText(pool->plan);
    RenderPoolPd(*pool, out);
  }
  out += "\n## between the pools\n";
  for (const Diagnostic& e : plan.errors) out += "  error: " + e.message + "\n";
  const size_t errors = plan.AllErrors().size();
  out += fmt::format("\n# disaggregated deployment {} ({} error{})\n",
                     errors == 0 ? "valid" : "invalid", errors, errors == 1 ? "" : "s");
  return out;
}

namespace {

nlohmann::json PoolToJson(const PoolPlan& pool) {
  const PdSettings& pd = pool.pd;
  return {{"role", pool.role},
          {"hosts", pool.hosts},
          {"pd",
           {{"mode", pd.mode},
            {"transfer_backend", pd.transfer_backend},
            {"bootstrap_port", pd.bootstrap_port},
            {"decode_radix_cache", pd.decode_radix_cache}}},
          {"metadata_slots", pool.metadata_slots},
          {"metadata_host_bytes", pool.metadata_host_bytes},
          {"decode_extra_slots", pool.decode_extra_slots},
          {"plan", PlanToJson(pool.plan)}};
}

}  // namespace

nlohmann::json DisaggregatedToJson(const DisaggregatedPlan& plan) {
  const spec::DisaggregationEngineSpec& t = plan.transfer;
  nlohmann::json errors = nlohmann::json::array();
  for (const Diagnostic& e : plan.errors) errors.push_back(e.message);
  return {{"spec", plan.spec_path},
          {"transfer",
           {{"backend", t.transfer_backend},
            {"ib_device", t.ib_device},
            {"bootstrap_port", t.bootstrap_port},
            {"router_policy", t.router_policy},
            {"router_port", t.router_port}}},
          {"prefill", PoolToJson(plan.prefill)},
          {"decode", PoolToJson(plan.decode)},
          {"errors", errors},
          {"valid", plan.valid()}};
}

}  // namespace ppsearch::plan
