// Layout checks: what SGLang asserts, or silently changes, for a PP/TP/EP
// layout on a given cluster and model (SGLang v0.5.18, python/sglang/srt/:
// entrypoints/engine.py _calculate_rank_ranges, distributed/parallel_state.py
// moe_tp_size = tp / ep, arg_groups/overrides.py _a2a_ep_size). Each message starts
// with the layout's file:line:col and key so an editor can jump to it.

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

// Backends whose dispatcher needs one expert shard per TP rank; SGLang
// overrides ep_size to tp_size for them (overrides.py _a2a_ep_size).
const std::set<std::string>& A2aBackendsForcingEpEqTp() {
  static const std::set<std::string> kBackends = {"deepep",     "mooncake", "nixl", "ascend_fuseep",
                                                  "flashinfer", "mori",     "pplx", "megamoe"};
  return kBackends;
}

Diagnostic LayoutError(const spec::LayoutSpec& layout, const std::string& what) {
  const std::string where = layout.origin.Where();
  return {(where.empty() ? "" : where + ": ") + layout.Label() + " " + what, layout.origin};
}

void CheckWorld(const spec::LayoutSpec& layout, const spec::ClusterSpec& cluster,
                std::vector<Diagnostic>& errors) {
  const int world = layout.pp * layout.tp;
  const int hosts = static_cast<int>(cluster.hosts.size());
  if (world != cluster.world_size()) {
    errors.push_back(LayoutError(
        layout, "uses " + std::to_string(world) + " GPUs but the cluster has " +
                    std::to_string(cluster.world_size()) + " (" + std::to_string(hosts) +
                    " hosts x " + std::to_string(cluster.gpus_per_node) +
                    "); TP x PP must equal the GPU count"));
  }
  if (hosts > 0 && world % hosts != 0) {
    errors.push_back(
        LayoutError(layout, "has " + std::to_string(world) + " ranks, which do not divide over " +
                                std::to_string(hosts) +
                                " nodes; SGLang asserts (tp_size * pp_size) % nnodes == 0"));
  }
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

// Block-FP8 weights carry one scale per block_n x block_k tile, so SGLang
// refuses a layout whose TP (or MoE-TP) shard of such a weight holds part of
// a block (layers/quantization/fp8.py, Fp8LinearMethod and Fp8MoEMethod
// create_weights). `refusal` quotes SGLang's message, `split` says how the
// shard came about; empty when the shard holds whole blocks.
struct BlockShard {
  std::string refusal;
  std::string split;
};

BlockShard ShardOfBlocks(const model::Linear& l, const model::ModelDesc& model,
                         const spec::LayoutSpec& layout, int dense_tp) {
  const model::WeightBlock& block = model.fp8_block;
  auto fails = [](int64_t size, int ways, int b) { return ways > 1 && (size / ways) % b != 0; };
  auto split = [](int64_t size, const char* what, int ways) {
    return FormatThousands(size) + " " + what + " / " + std::to_string(ways);
  };
  if (l.role == model::OpRole::kRoutedExpert) {
    const int moe_tp = std::max(layout.tp / std::max(layout.ep, 1), 1);
    const int64_t inter = model.moe.moe_intermediate;
    const bool gate_up = l.name.find("gate_up") != std::string::npos;
    const int b = gate_up ? block.n : block.k;
    if (!fails(inter, moe_tp, b)) return {};
    return {std::string("The ") +
                (gate_up ? "output_size of gate's and up's weight = "
                         : "input_size of down's weight = ") +
                std::to_string(inter / moe_tp) + " is not divisible by weight quantization block_" +
                (gate_up ? "n" : "k") + " = " + std::to_string(b) + ".",
            split(inter, "moe_intermediate_size", moe_tp) + " (MoE-TP)"};
  }
  // --moe-dense-tp-size splits the dense MLP layers over its own group.
  const int tp = l.role == model::OpRole::kDenseMlp ? dense_tp : layout.tp;
  const std::string group = tp != layout.tp ? " (moe-dense-tp-size)" : " (TP)";
  if (l.sharding == model::Sharding::kColumn) {
    // GQA K and V with fewer KV heads than ranks: each rank holds one whole head.
    const bool kv = l.name == "k_proj" || l.name == "v_proj";
    if (kv && model.gqa.num_kv_heads > 0 && model.gqa.num_kv_heads < tp) return {};
    if (!fails(l.out_features, tp, block.n)) return {};
    return {"Weight output_partition_size = " + std::to_string(l.out_features / tp) +
                " is not divisible by weight quantization block_n = " + std::to_string(block.n) +
                ".",
            split(l.out_features, "output features", tp) + group};
  }
  if (l.sharding == model::Sharding::kRow && fails(l.in_features, tp, block.k))
    return {"Weight input_partition_size = " + std::to_string(l.in_features / tp) +
                " is not divisible by weight quantization block_k = " + std::to_string(block.k) +
                ".",
            split(l.in_features, "input features", tp) + group};
  return {};
}

void CheckWeightBlocks(const spec::LayoutSpec& layout, const spec::EngineSpec& engine,
                       const model::ModelDesc& model, std::vector<Diagnostic>& errors) {
  if (!model.fp8_block.any()) return;
  const int dense_tp = static_cast<int>(engine.ArgInt("moe-dense-tp-size").value_or(layout.tp));
  // Each refusal once, with the weights it stops and how they were split.
  struct Refusal {
    std::string text, names, split;
  };
  std::vector<Refusal> refusals;
  std::set<std::string> seen;
  for (const auto& layer : model.layers)
    for (const auto& l : layer.linears) {
      if (l.dtype != model::DType::kFp8 || !seen.insert(l.name).second) continue;
      const BlockShard shard = ShardOfBlocks(l, model, layout, dense_tp);
      if (shard.refusal.empty()) continue;
      auto it = std::find_if(refusals.begin(), refusals.end(),
                             [&](const Refusal& r) { return r.text == shard.refusal; });
      if (it == refusals.end())
        refusals.push_back({shard.refusal, l.name, shard.split});
      else
        it->names += ", " + l.name;
    }
  if (refusals.empty()) return;
  std::string list;
  for (const Refusal& r : refusals)
    list += (list.empty() ? "" : "; ") + ("\"" + r.text + "\" (" + r.names + ": " + r.split + ")");
  errors.push_back(LayoutError(
      layout, fmt::format("shards block-FP8 weights (weight_block_size [{}, {}] in {}) into "
                          "partial blocks, and SGLang refuses to load them: {}. Use a smaller TP, "
                          "EP so that each expert keeps whole blocks, or an unquantized checkpoint",
                          model.fp8_block.n, model.fp8_block.k, model.source_path, list)));
}

void CheckHeads(const spec::LayoutSpec& layout, const char* kind, int heads,
                std::vector<Diagnostic>& errors) {
  if (heads <= 0 || heads % layout.tp == 0) return;
  const std::string kind_prefix = kind[0] == '\0' ? "" : std::string(kind) + " ";
  errors.push_back(LayoutError(layout, "splits " + std::to_string(heads) + " " + kind_prefix +
                                           "attention heads over TP " + std::to_string(layout.tp) +
                                           "; the head count must be a multiple of TP"));
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
  const bool ok = kv >= layout.tp ? kv % layout.tp == 0 : layout.tp % kv == 0;
  if (ok) return;
  const std::string rule = kv >= layout.tp
                               ? "the KV head count must be a multiple of TP"
                               : "with fewer KV heads than TP ranks, TP must be a multiple of "
                                 "the KV head count";
  errors.push_back(LayoutError(layout, "splits " + std::to_string(kv) + " GQA KV heads over TP " +
                                           std::to_string(layout.tp) + "; " + rule));
}

void CheckA2aBackend(const spec::LayoutSpec& layout, const spec::EngineSpec& engine,
                     std::vector<Diagnostic>& errors) {
  const std::string backend = MoeA2aBackend(engine);
  if (!A2aBackendsForcingEpEqTp().count(backend) || layout.ep == layout.tp) return;
  const spec::ArgValue* arg = engine.FindArg("moe-a2a-backend");
  const std::string set_at =
      arg != nullptr && !arg->origin.Position().empty() ? " (" + arg->origin.Position() + ")" : "";
  errors.push_back(LayoutError(
      layout, "sets EP " + std::to_string(layout.ep) + " but moe-a2a-backend = \"" + backend +
                  "\"" + set_at + " forces EP = TP; SGLang would silently change ep from " +
                  std::to_string(layout.ep) + " to " + std::to_string(layout.tp) +
                  ". Set ep = " + std::to_string(layout.tp) + " or moe-a2a-backend = \"none\""));
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
                        const model::ModelDesc& model, std::vector<Diagnostic>& errors) {
  const int64_t context = ContextLength(spec, model);
  const int64_t input = spec.workload.input_tokens;
  const int64_t total = input + spec.workload.output_tokens;
  if (context <= 0 || total < context) return;
  const bool overridden = spec.engine.FindArg("context-length") != nullptr;
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
       loc});
}

// Dynamic chunking grows a request's chunks from chunked-prefill-size (its
// profile and first chunk); without chunked prefill there is nothing to size
// and the simulator does not model what SGLang would do instead.
void CheckDynamicChunking(const spec::LayoutSpec& layout, const spec::Spec& spec,
                          std::vector<Diagnostic>& errors) {
  if (layout.pp <= 1 || !spec.engine.ArgTrue("enable-dynamic-chunking")) return;
  const std::optional<int64_t> chunk = spec.engine.ArgInt("chunked-prefill-size");
  if (!chunk || *chunk > 0) return;
  const SourceLoc loc = spec.Origin("engine.args.chunked-prefill-size");
  const std::string where = loc.Where();
  errors.push_back({(where.empty() ? "" : where + ": ") + layout.Label() +
                        ": [engine.args] enable-dynamic-chunking with chunked-prefill-size = " +
                        std::to_string(*chunk) +
                        " (chunked prefill off) is not modelled; dynamic chunking needs a "
                        "positive chunked-prefill-size as its initial chunk",
                    loc});
}

// SGLang sizes the KV pool from what mem_fraction_static leaves after the
// weights and refuses to start when that is nothing; the memory model
// computes the same pool and says, in SGLang's words, why there is none. It
// also refuses a stage whose weights, activations and CUDA graphs fill the
// GPU by themselves: SGLang would start there only to run out of memory.
void CheckKvRoom(const spec::LayoutSpec& layout, const spec::Spec& spec,
                 const hardware::HardwareProfile& hw, const LayoutPlan& planned,
                 std::vector<Diagnostic>& errors) {
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
  int heaviest = 0;
  for (const StagePlan& stage : planned.stages)
    if (stage.weight_mib_per_rank == planned.weight_mib_per_rank_max) heaviest = stage.pp_rank;
  const std::optional<std::string> mfs = spec.engine.ArgString("mem-fraction-static");
  errors.push_back(LayoutError(
      layout,
      "holds " + FormatMib(weights) + " MiB of weights per GPU on stage " +
          std::to_string(heaviest) + ", but " +
          (mfs ? "mem-fraction-static = " + *mfs
               : fmt::format("SGLang's default mem-fraction-static {:g}", m.mem_fraction_static)) +
          " leaves no room for the KV cache: mem_fraction_static x (GPU - CUDA context and NCCL) "
          "- weights = " +
          fmt::format("{:g}", m.mem_fraction_static) + " x (" + FormatMib(hw.memory_mib) + " - " +
          FormatMib(memory::kRuntimeMib) + ") - " + FormatMib(weights) + " = " +
          FormatMib(pool_mib) + " MiB. SGLang refuses to start: \"" + m.refusal +
          "\" Use more GPUs per stage (larger TP) or a larger mem-fraction-static"));
}

}  // namespace

std::string MoeA2aBackend(const spec::EngineSpec& engine) {
  return engine.ArgString("moe-a2a-backend").value_or("none");
}

std::vector<Diagnostic> ValidateLayout(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                       const model::ModelDesc& model,
                                       const hardware::HardwareProfile& hw,
                                       const LayoutPlan& planned) {
  std::vector<Diagnostic> errors;
  if (layout.pp < 1 || layout.tp < 1 || layout.ep < 1) {
    errors.push_back(LayoutError(layout, "has a size below 1; PP, TP and EP must be at least 1"));
    return errors;
  }
  CheckWorld(layout, spec.cluster, errors);
  if (model.num_layers < layout.pp) {
    errors.push_back(LayoutError(layout, "has " + std::to_string(layout.pp) +
                                             " pipeline stages but the model has only " +
                                             std::to_string(model.num_layers) +
                                             " layers; PP must not exceed the layer count"));
  }
  CheckMoe(layout, model, errors);
  CheckWeightBlocks(layout, spec.engine, model, errors);
  CheckAttention(layout, model, errors);
  if (model.is_moe()) CheckA2aBackend(layout, spec.engine, errors);
  CheckWeightMemory(layout, hw, planned, errors);
  CheckKvRoom(layout, spec, hw, planned, errors);
  CheckContextLength(layout, spec, model, errors);
  CheckDynamicChunking(layout, spec, errors);
  return errors;
}

}  // namespace ppsearch::plan
