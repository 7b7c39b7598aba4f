// Layout checks: what SGLang asserts, or silently changes, for a PP/TP/EP
// layout on a given cluster and model (SGLang v0.5.18, python/sglang/srt/:
// entrypoints/engine.py _calculate_rank_ranges, distributed/parallel_state.py
// moe_tp_size = tp / ep, arg_groups/overrides.py _a2a_ep_size). Each message starts
// with the layout's file:line:col and key so an editor can jump to it.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>

#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

Diagnostic LayoutError(const spec::LayoutSpec& layout, const std::string& what) {
  const std::string where = layout.origin.Where();
  return {(where.empty() ? "" : where + ": ") + layout.Label() + " " + what, layout.origin, ""};
}

void CheckWorld(const spec::LayoutSpec& layout, const spec::ClusterSpec& cluster,
                std::vector<Diagnostic>& errors) {
  const int64_t world = layout.gpus();
  const int hosts = static_cast<int>(cluster.hosts.size());
  if (world != cluster.world_size()) {
    const std::string uses =
        layout.instances > 1 ? fmt::format("uses {} instances x {} GPUs = {} GPUs",
                                           layout.instances, int64_t{layout.pp} * layout.tp, world)
                             : "uses " + std::to_string(world) + " GPUs";
    errors.push_back(LayoutError(
        layout, uses + " but the cluster has " + std::to_string(cluster.world_size()) + " (" +
                    std::to_string(hosts) + " hosts x " + std::to_string(cluster.gpus_per_node) +
                    "); " + (layout.instances > 1 ? "instances x " : "") +
                    "TP x PP must equal the GPU count"));
  }
  // With several instances SGLang's assertion holds per instance; the
  // instance split (CheckInstanceNodes) gives each instance whole nodes.
  if (layout.instances == 1 && hosts > 0 && world % hosts != 0) {
    errors.push_back(
        LayoutError(layout, "has " + std::to_string(world) + " ranks, which do not divide over " +
                                std::to_string(hosts) +
                                " nodes; SGLang asserts (tp_size * pp_size) % nnodes == 0"));
  }
}

// Each instance is a whole SGLang deployment on nodes of its own: the hosts
// split in order into `instances` equal runs of whole nodes.
void CheckInstanceNodes(const spec::LayoutSpec& layout, const spec::ClusterSpec& cluster,
                        std::vector<Diagnostic>& errors) {
  const int hosts = static_cast<int>(cluster.hosts.size());
  if (layout.instances <= 1 || (hosts > 0 && hosts % layout.instances == 0)) return;
  errors.push_back(LayoutError(
      layout, fmt::format("runs {} instances on {} hosts: each instance needs whole nodes of its "
                          "own (the hosts split in order, the same number each), so the "
                          "instance count must divide the host count",
                          layout.instances, hosts)));
}

void CheckMoe(const spec::LayoutSpec& layout, const model::ModelDesc& model,
              std::vector<Diagnostic>& errors) {
  const std::string tp = std::to_string(layout.tp);
  const std::string ep = std::to_string(layout.ep);
  if (layout.tp % layout.ep != 0) {
    errors.push_back(LayoutError(layout, "has TP " + tp + " not divisible by EP " + ep +
                                             "; SGLang builds EP groups inside each TP group, "
                                             "so EP must divide TP"));
  }
  if (!model.is_moe()) return;
  if (model.moe.num_experts % layout.ep != 0) {
    errors.push_back(LayoutError(layout, "splits " + std::to_string(model.moe.num_experts) +
                                             " routed experts over EP " + ep +
                                             "; the expert count must be a multiple of EP"));
  }
  if (layout.tp % layout.ep == 0 && model.moe.moe_intermediate % (layout.tp / layout.ep) != 0) {
    errors.push_back(LayoutError(layout, "has MoE-TP " + std::to_string(layout.tp / layout.ep) +
                                             " (TP/EP = " + tp + "/" + ep +
                                             "), which does not divide moe_intermediate_size " +
                                             std::to_string(model.moe.moe_intermediate)));
  }
}

// SGLang's linear layers divide their width over their group
// (distributed/utils.py divide, "{} is not divisible by {}"); attention heads
// and expert widths have their own checks above and below.
void CheckEvenSplits(const spec::LayoutSpec& layout, const EngineConfig& engine,
                     const model::ModelDesc& model, std::vector<Diagnostic>& errors) {
  std::set<std::string> seen;
  for (const auto& layer : model.layers)
    for (const auto& l : layer.linears) {
      if (l.role != model::OpRole::kDenseMlp && l.role != model::OpRole::kSharedExpert) continue;
      const bool column = l.sharding == model::Sharding::kColumn;
      if (!column && l.sharding != model::Sharding::kRow) continue;
      const int ways = GroupOf(l, model, layout, engine);
      const int64_t width = column ? l.out_features : l.in_features;
      if (ways <= 1 || width % ways == 0 || !seen.insert(l.name).second) continue;
      errors.push_back(LayoutError(
          layout, fmt::format("splits {}'s {} {} features over TP {}, which does not divide them; "
                              "SGLang's loader asserts \"{} is not divisible by {}\"",
                              l.name, FormatThousands(width), column ? "output" : "input", ways,
                              width, ways)));
    }
}

void CheckWeightBlocks(const spec::LayoutSpec& layout, const EngineConfig& engine,
                       const model::ModelDesc& model, std::vector<Diagnostic>& errors) {
  const std::vector<PartialBlock> partial = PartialBlocks(layout, engine, model);
  if (!partial.empty())
    errors.push_back(LayoutError(layout, PartialBlockError(layout, model, partial)));
}

// "TP", or "the attention TP" with DP attention.
std::string AttentionGroupName(const spec::LayoutSpec& layout) {
  return SplitOf(layout).attn_tp == layout.tp ? "TP" : "the attention TP";
}

// "TP 8", or "attention TP 2 (TP 8 / DP 4)" with DP attention.
std::string AttentionGroupText(const spec::LayoutSpec& layout) {
  const int attn_tp = SplitOf(layout).attn_tp;
  if (attn_tp == layout.tp) return "TP " + std::to_string(layout.tp);
  return fmt::format("attention TP {} (TP {} / DP {})", attn_tp, layout.tp, layout.dp);
}

void CheckHeads(const spec::LayoutSpec& layout, const char* kind, int heads,
                std::vector<Diagnostic>& errors) {
  const int attn_tp = SplitOf(layout).attn_tp;
  if (heads <= 0 || heads % attn_tp == 0) return;
  const std::string kind_prefix = kind[0] == '\0' ? "" : std::string(kind) + " ";
  errors.push_back(LayoutError(layout, "splits " + std::to_string(heads) + " " + kind_prefix +
                                           "attention heads over " + AttentionGroupText(layout) +
                                           "; the head count must be a multiple of " +
                                           AttentionGroupName(layout)));
}

// DP attention (--enable-dp-attention --dp-size dp) splits each TP group into
// dp attention groups of tp / dp ranks; SGLang asserts tp_size % dp_size == 0
// (arg_groups/parallel_hook.py handle_data_parallelism; server_args.py
// _handle_data_parallelism before the arg groups).
void CheckDpAttention(const spec::LayoutSpec& layout, std::vector<Diagnostic>& errors) {
  if (layout.dp <= 1) return;
  if (layout.dp > layout.tp || layout.tp % layout.dp != 0)
    errors.push_back(LayoutError(
        layout, fmt::format("sets DP {} with TP {}: DP attention splits each TP group into DP "
                            "groups of equal size, and SGLang asserts tp_size % dp_size == 0",
                            layout.dp, layout.tp)));
}

void CheckAttention(const spec::LayoutSpec& layout, const model::ModelDesc& model,
                    std::vector<Diagnostic>& errors) {
  CheckHeads(layout, "MLA", model.mla.num_heads, errors);
  CheckHeads(layout, "KDA", model.kda.num_heads, errors);
  CheckHeads(layout, "GQA", model.gqa.num_heads, errors);
  if (model.mla.num_heads == 0 && model.kda.num_heads == 0 && model.gqa.num_heads == 0) {
    CheckHeads(layout, "", model.num_attention_heads, errors);
  }
  const int kv = model.gqa.num_kv_heads;
  if (kv <= 0) return;
  // Fewer KV heads than ranks is allowed when each head is replicated on a
  // whole number of ranks (tp % kv == 0); otherwise heads must split evenly.
  const int tp = SplitOf(layout).attn_tp;
  const bool ok = kv >= tp ? kv % tp == 0 : tp % kv == 0;
  if (ok) return;
  const std::string group = AttentionGroupName(layout);
  const std::string rule = kv >= tp ? "the KV head count must be a multiple of " + group
                                    : "with fewer KV heads than " + group + " ranks, " + group +
                                          " must be a multiple of the KV head count";
  errors.push_back(LayoutError(layout, "splits " + std::to_string(kv) + " GQA KV heads over " +
                                           AttentionGroupText(layout) + "; " + rule));
}

// Where the all-to-all backend was set, for a message: the spec's line, or
// "search" for a search's knob.
std::string A2aSetAt(const EngineConfig& engine) {
  const std::string at =
      engine.moe_a2a_backend_origin ? engine.moe_a2a_backend_origin->Position() : "";
  return at.empty() ? "" : " (" + at + ")";
}

void CheckA2aBackend(const spec::LayoutSpec& layout, const EngineConfig& engine,
                     std::vector<Diagnostic>& errors) {
  const std::string& backend = engine.moe_a2a_backend;
  if (!A2aForcesEpEqTp(engine) || layout.ep == layout.tp) return;
  const std::string set_at = A2aSetAt(engine);
  errors.push_back(LayoutError(
      layout, "sets EP " + std::to_string(layout.ep) + " but moe-a2a-backend = \"" + backend +
                  "\"" + set_at + " forces EP = TP; SGLang would silently change ep from " +
                  std::to_string(layout.ep) + " to " + std::to_string(layout.tp) +
                  ". Set ep = " + std::to_string(layout.tp) + " or moe-a2a-backend = \"none\""));
}

// SGLang cannot run DeepEP where the GPUs have no NVLink.
// token_dispatcher/deepep.py (DeepEPBuffer.get_deepep_buffer) builds DeepEP's
// Buffer without allow_nvlink_for_normal_mode=False, and the PCIe path of the
// normal kernels (DeepEP PR #375) is only on DeepEP's hybrid-ep branch, so
// the normal kernels (every batch that extends, under the default auto mode)
// need NVLink inside the node. Their combine also needs DeepGEMM
// (_DeepEPDispatcherImplNormal.combine_a raises NotImplementedError without
// ENABLE_JIT_DEEPGEMM), which has no SM120 kernels; the SM120 GPUs (RTX PRO
// 6000 and RTX 6000D class) have no NVLink either, so the one test refuses
// both.
void CheckDeepEpLinks(const spec::LayoutSpec& layout, const hardware::HardwareProfile& hw,
                      const EngineConfig& engine, std::vector<Diagnostic>& errors) {
  if (engine.moe_a2a_backend != "deepep" || hw.nvlink) return;
  const std::string set_at = A2aSetAt(engine);
  const std::string gpu = hw.gpu_name.empty() ? hw.name : hw.gpu_name;
  errors.push_back(LayoutError(
      layout, "sets moe-a2a-backend = \"deepep\"" + set_at + " but the GPUs (" + gpu +
                  ", hardware profile " + hw.name +
                  ") have no NVLink: SGLang runs DeepEP's normal kernels (every prefill "
                  "batch) only over NVLink inside a node, and their combine needs DeepGEMM, "
                  "which has no kernels for SM120 GPUs. Use moe-a2a-backend = \"none\" (the "
                  "MoE all-reduce over TP)"));
}

void CheckWeightMemory(const spec::LayoutSpec& layout, const hardware::HardwareProfile& hw,
                       const LayoutPlan& planned, std::vector<Diagnostic>& errors) {
  if (hw.memory_mib <= 0) return;
  const StagePlan* heaviest = nullptr;
  for (const StagePlan& stage : planned.stages) {
    if (heaviest == nullptr || stage.weight_mib_per_rank > heaviest->weight_mib_per_rank) {
      heaviest = &stage;
    }
  }
  if (heaviest == nullptr || heaviest->weight_mib_per_rank <= hw.memory_mib) return;
  errors.push_back(LayoutError(
      layout, "needs " + FormatMib(heaviest->weight_mib_per_rank) +
                  " MiB of weights per GPU on stage " + std::to_string(heaviest->pp_rank) +
                  " but the GPU (" + (hw.gpu_name.empty() ? hw.name : hw.gpu_name) + ") has " +
                  FormatMib(hw.memory_mib) + " MiB; use more GPUs per stage (larger TP)"));
}

// SGLang's tokenizer manager rejects a request whose input is not shorter
// than the context length, and one whose input plus max_new_tokens reaches
// it (tokenizer_manager.py _validate_one_request); every request would fail.
void CheckContextLength(const spec::LayoutSpec& layout, const spec::Spec& spec,
                        const EngineConfig& engine, const model::ModelDesc& model,
                        std::vector<Diagnostic>& errors) {
  const int64_t context = ContextLength(engine, model);
  const int64_t input = spec.workload.input_tokens;
  const int64_t total = input + spec.workload.output_tokens;
  if (context <= 0 || total < context) return;
  const bool overridden = engine.context_length.has_value();
  const std::string source = overridden ? "[engine.args] context-length"
                                        : "the model's max_position_embeddings; [engine.args] "
                                          "context-length can raise it";
  const SourceLoc loc = spec.Origin("workload.input_tokens");
  const std::string where = loc.Where();
  errors.push_back(
      {(where.empty() ? "" : where + ": ") + layout.Label() + " cannot serve requests of " +
           FormatThousands(input) + " input + " + FormatThousands(spec.workload.output_tokens) +
           " output tokens: the context length is " + FormatThousands(context) + " (" + source +
           "), and SGLang rejects a request whose input + output tokens reach it",
       loc, ""});
}

// Dynamic chunking grows a request's chunks from chunked-prefill-size (its
// profile and first chunk); without chunked prefill there is nothing to size
// and the simulator does not model what SGLang would do instead.
void CheckDynamicChunking(const spec::LayoutSpec& layout, const EngineConfig& engine,
                          std::vector<Diagnostic>& errors) {
  if (layout.pp <= 1 || !engine.enable_dynamic_chunking) return;
  if (!engine.chunked_prefill_size_from_spec() || engine.chunked_prefill_size > 0) return;
  const int64_t chunk = engine.chunked_prefill_size;
  const SourceLoc loc = engine.chunked_prefill_size_origin.value_or(SourceLoc{});
  const std::string where = loc.Where();
  errors.push_back({(where.empty() ? "" : where + ": ") + layout.Label() +
                        ": [engine.args] enable-dynamic-chunking with chunked-prefill-size = " +
                        std::to_string(chunk) +
                        " (chunked prefill off) is not modelled; dynamic chunking needs a "
                        "positive chunked-prefill-size as its initial chunk",
                    loc, ""});
}

// SGLang sizes the KV pool from what mem_fraction_static leaves after the
// weights and refuses to start when that is nothing; the memory model
// computes the same pool and says, in SGLang's words, why there is none. It
// also refuses a stage whose weights, activations and CUDA graphs fill the
// GPU by themselves: SGLang would start there only to run out of memory.
void CheckKvRoom(const spec::LayoutSpec& layout, const hardware::HardwareProfile& hw,
                 const LayoutPlan& planned, std::vector<Diagnostic>& errors) {
  if (hw.memory_mib <= 0 || planned.stages.empty() || planned.memory.stages.empty() ||
      planned.weight_mib_per_rank_max > hw.memory_mib)
    return;  // no GPU size, or CheckWeightMemory already says the weights do not fit
  const memory::MemoryPlan& m = planned.memory;
  if (m.fits) return;
  const double weights = planned.weight_mib_per_rank_max;
  const double pool_mib = m.mem_fraction_static * m.pre_load_free_mib - weights;
  if (!m.sglang_refuses) {
    errors.push_back(LayoutError(
        layout, "leaves no room for the KV cache: " + m.refusal +
                    ". SGLang would run out of memory capturing CUDA graphs or on the first "
                    "full chunk. Use more GPUs per stage (larger TP) or a smaller "
                    "chunked-prefill-size"));
    return;
  }
  if (m.state_refusal == memory::MemoryPlan::StateRefusal::kSetting) {
    errors.push_back(LayoutError(
        layout, "sets its linear-attention state pool up as SGLang refuses to start it: \"" +
                    m.refusal + "\""));
    return;
  }
  if (m.state_refusal == memory::MemoryPlan::StateRefusal::kSize) {
    errors.push_back(
        LayoutError(layout,
                    "leaves its linear-attention state pool no room for a request. SGLang refuses "
                    "to start: \"" +
                        m.refusal +
                        "\" Raise mamba-full-memory-ratio or mem-fraction-static, or set "
                        "max-mamba-cache-size"));
    return;
  }
  int heaviest = 0;
  for (const StagePlan& stage : planned.stages)
    if (stage.weight_mib_per_rank == planned.weight_mib_per_rank_max) heaviest = stage.pp_rank;
  const std::string& mfs = planned.engine.mem_fraction_static_text;
  errors.push_back(LayoutError(
      layout,
      "holds " + FormatMib(weights) + " MiB of weights per GPU on stage " +
          std::to_string(heaviest) + ", but " +
          (!mfs.empty()
               ? "mem-fraction-static = " + mfs
               : fmt::format("SGLang's default mem-fraction-static {:g}", m.mem_fraction_static)) +
          " leaves no room for the KV cache: mem_fraction_static x (GPU - CUDA context and NCCL) "
          "- weights = " +
          fmt::format("{:g}", m.mem_fraction_static) + " x (" + FormatMib(hw.memory_mib) + " - " +
          FormatMib(memory::kRuntimeMib) + ") - " + FormatMib(weights) + " = " +
          FormatMib(pool_mib) + " MiB. SGLang refuses to start: \"" + m.refusal +
          "\" Use more GPUs per stage (larger TP) or a larger mem-fraction-static"));
}

// SGLang aborts a request whose input is longer than its pool:
// max_req_input_len = min(context_len - 1, max_total_num_tokens - 1)
// (managers/scheduler.py), so a pool shorter than the workload's prompts
// serves none of them.
void CheckPoolHoldsAPrompt(const spec::LayoutSpec& layout, const spec::Spec& spec,
                           const LayoutPlan& planned, std::vector<Diagnostic>& errors) {
  const memory::MemoryPlan& m = planned.memory;
  const int64_t input = spec.workload.input_tokens;
  if (planned.memory.stages.empty() || !m.fits || m.max_total_tokens <= 0 ||
      input <= m.max_total_tokens - 1)
    return;
  errors.push_back(LayoutError(
      layout, "holds a KV pool of " + FormatThousands(m.max_total_tokens) + " tokens" +
                  (layout.dp > 1 ? " per DP rank" : "") + ", too few for one prompt of " +
                  FormatThousands(input) +
                  " tokens: SGLang aborts every request whose input exceeds the pool - 1. Use "
                  "more GPUs per stage (larger TP), a smaller chunked-prefill-size (a smaller "
                  "activation reserve) or a larger mem-fraction-static"));
}

}  // namespace

const std::vector<std::string>& ErrorReasons() {
  static const std::vector<std::string> kReasons = {
      "size",           "dp_attention", "gpu_count",
      "instance_nodes", "layer_count",  "pp_layer_partition",
      "moe_split",      "uneven_split", "weight_block",
      "heads",          "a2a_backend",  "weight_memory",
      "kv_room",        "context",      "dynamic_chunking"};
  return kReasons;
}

std::vector<Diagnostic> ValidateLayout(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                       const model::ModelDesc& model,
                                       const hardware::HardwareProfile& hw,
                                       const LayoutPlan& planned) {
  std::vector<Diagnostic> errors;
  // Runs one check and gives what it found its reason.
  const auto check = [&errors](const char* reason, const auto& run) {
    const size_t before = errors.size();
    run();
    for (size_t i = before; i < errors.size(); ++i) errors[i].reason = reason;
  };
  if (layout.pp < 1 || layout.tp < 1 || layout.ep < 1 || layout.dp < 1 || layout.instances < 1) {
    check("size", [&] {
      errors.push_back(LayoutError(layout, layout.instances < 1
                                               ? "has an instance count below 1"
                                               : "has a size below 1; PP, TP, EP and DP must be "
                                                 "at least 1"));
    });
    return errors;
  }
  check("dp_attention", [&] { CheckDpAttention(layout, errors); });
  check("gpu_count", [&] { CheckWorld(layout, spec.cluster, errors); });
  check("instance_nodes", [&] { CheckInstanceNodes(layout, spec.cluster, errors); });
  check("layer_count", [&] {
    if (model.num_layers < layout.pp)
      errors.push_back(LayoutError(layout, "has " + std::to_string(layout.pp) +
                                               " pipeline stages but the model has only " +
                                               std::to_string(model.num_layers) +
                                               " layers; PP must not exceed the layer count"));
  });
  check("pp_layer_partition", [&] {
    const std::vector<int>& partition = planned.engine.pp_layer_partition;
    const std::string refused = PartitionError(partition, model.num_layers, layout.pp);
    if (!refused.empty())
      errors.push_back(
          LayoutError(layout, fmt::format("does not fit {}, and SGLang refuses to start it: \"{}\"",
                                          planned.engine.pp_layer_partition_source, refused)));
  });
  check("moe_split", [&] { CheckMoe(layout, model, errors); });
  check("uneven_split", [&] { CheckEvenSplits(layout, planned.engine, model, errors); });
  check("weight_block", [&] { CheckWeightBlocks(layout, planned.engine, model, errors); });
  check("heads", [&] { CheckAttention(layout, model, errors); });
  check("a2a_backend", [&] {
    if (!model.is_moe()) return;
    CheckA2aBackend(layout, planned.engine, errors);
    CheckDeepEpLinks(layout, hw, planned.engine, errors);
  });
  check("weight_memory", [&] { CheckWeightMemory(layout, hw, planned, errors); });
  check("kv_room", [&] { CheckKvRoom(layout, hw, planned, errors); });
  check("kv_room", [&] { CheckPoolHoldsAPrompt(layout, spec, planned, errors); });
  check("context", [&] { CheckContextLength(layout, spec, planned.engine, model, errors); });
  check("dynamic_chunking", [&] { CheckDynamicChunking(layout, planned.engine, errors); });
  return errors;
}

}  // namespace ppsearch::plan
