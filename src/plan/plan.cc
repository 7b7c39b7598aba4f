// PlanLayout and PlanSearch: assemble the rank map, stages, boundaries and
// checks of each layout (the pieces live in rank_map.cc, stages.cc, ...).

#include "plan/plan.h"

#include <algorithm>

#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

void SumForwardCollectives(LayoutPlan& plan) {
  for (const StagePlan& stage : plan.stages) {
    plan.allreduce_per_forward += stage.collectives.allreduce_count;
    plan.allgather_per_forward += stage.collectives.allgather_count;
    plan.alltoall_per_forward += stage.collectives.alltoall_count;
    if (stage.collectives.crosses_nodes()) {
      plan.cross_node_allreduce_per_forward += stage.collectives.allreduce_count;
      plan.cross_node_alltoall_per_forward += stage.collectives.alltoall_count;
    }
    plan.weight_mib_per_rank_max =
        std::max(plan.weight_mib_per_rank_max, stage.weight_mib_per_rank);
  }
  for (const StageBoundary& hop : plan.boundaries) {
    if (hop.crosses_nodes()) ++plan.cross_node_stage_boundaries;
  }
}

ModelSummary SummarizeModel(const model::ModelDesc& model) {
  ModelSummary m;
  m.name = model.name;
  m.family = model.family;
  m.source_path = model.source_path;
  m.total_params = model.total_params();
  m.active_params = model.active_params();
  m.num_layers = model.num_layers;
  m.hidden = model.hidden;
  m.vocab = model.vocab;
  m.weight_mib = model.weight_bytes() / kBytesPerMib;
  return m;
}

ClusterSummary SummarizeCluster(const spec::ClusterSpec& cluster,
                                const hardware::HardwareProfile& hw) {
  ClusterSummary c;
  for (const spec::HostSpec& host : cluster.hosts) c.hosts.push_back(host.name);
  c.gpus_per_node = cluster.gpus_per_node;
  c.gpus = cluster.world_size();
  c.hardware = hw.name;
  c.gpu_name = hw.gpu_name;
  c.gpu_memory_mib = hw.memory_mib;
  return c;
}

// Instance i on hosts [i*k, (i+1)*k), k = hosts / instances; none when the
// hosts do not split evenly (the planner refuses that layout).
std::vector<std::vector<int>> InstanceNodes(int instances, int hosts) {
  std::vector<std::vector<int>> out;
  if (instances < 1 || hosts % instances != 0) return out;
  const int k = hosts / instances;
  for (int i = 0; i < instances; ++i) {
    out.emplace_back();
    for (int n = i * k; n < (i + 1) * k; ++n) out.back().push_back(n);
  }
  return out;
}

}  // namespace

bool Plan::all_valid() const {
  return std::all_of(layouts.begin(), layouts.end(),
                     [](const LayoutPlan& layout) { return layout.valid; });
}

Plan Plan::Only(const spec::LayoutSpec& layout) const {
  // Every field named: one added to Plan and left out here does not build.
  Plan one{spec_path, model, cluster, moe_a2a_backend, {}, warnings};
  for (const LayoutPlan& lp : layouts)
    if (lp.layout == layout) one.layouts.push_back(lp);
  return one;
}

LayoutPlan PlanLayout(const spec::LayoutSpec& layout, const spec::Spec& spec,
                      const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                      const EngineKnobs& knobs) {
  LayoutPlan plan;
  plan.layout = layout;
  plan.engine = WithKnobs(ResolveEngineConfig(spec.engine, hw.memory_mib, layout.pp), knobs);
  plan.prefill_attention_backend = hw.attention_backend;
  if (layout.pp < 1 || layout.tp < 1 || layout.ep < 1 || layout.instances < 1) {
    // Nothing can be laid out; report the sizes and stop.
    plan.errors = ValidateLayout(layout, spec, model, hw, plan);
    plan.valid = false;
    return plan;
  }
  if (layout.gpus() > spec.cluster.world_size()) {
    // More ranks than the cluster has GPUs: they would map to nodes that do
    // not exist, and a typo (pp = 4096, tp = 4096) would build millions of
    // them. The errors say why; nothing is laid out.
    plan.errors = ValidateLayout(layout, spec, model, hw, plan);
    plan.valid = false;
    return plan;
  }
  plan.world_size = layout.pp * layout.tp;
  plan.instance_nodes =
      InstanceNodes(layout.instances, static_cast<int>(spec.cluster.hosts.size()));
  plan.moe_tp = layout.tp % layout.ep == 0 ? layout.tp / layout.ep : 0;
  const int gpus_per_node = std::max(1, spec.cluster.gpus_per_node);
  plan.ranks = MapRanks(layout.pp, layout.tp, layout.ep, gpus_per_node);
  plan.tp_groups = BuildTpGroups(plan.ranks, layout.pp);
  plan.attn_tp = SplitOf(layout).attn_tp;
  plan.attention_groups = BuildAttentionGroups(plan.ranks, layout.pp, layout.tp, layout.dp);
  plan.stages = BuildStages(model, layout, plan.engine, plan.tp_groups);
  plan.boundaries = BuildStageBoundaries(plan.ranks, layout.pp, layout.tp, model, plan.stages);
  SumForwardCollectives(plan);
  if (hw.memory_mib > 0 && !plan.stages.empty())
    plan.memory = memory::PlanMemory(StageMemoryInputs(plan, spec, model, hw));
  plan.errors = ValidateLayout(layout, spec, model, hw, plan);
  plan.warnings = LayoutWarnings(layout, spec, model, hw, plan);
  plan.valid = plan.errors.empty();
  return plan;
}

Plan PlanSearch(const spec::Spec& spec, const model::ModelDesc& model,
                const hardware::HardwareProfile& hw, const EngineKnobs& knobs) {
  Plan plan;
  plan.spec_path = spec.path;
  plan.model = SummarizeModel(model);
  plan.cluster = SummarizeCluster(spec.cluster, hw);
  const EngineConfig engine = WithKnobs(ResolveEngineConfig(spec.engine, hw.memory_mib), knobs);
  plan.moe_a2a_backend = engine.moe_a2a_backend;
  for (const spec::LayoutSpec& layout : spec.sweep.layouts) {
    // A disaggregated deployment's pools are planned apart, each with its
    // own engine (PlanDisaggregated).
    if (layout.disaggregated()) continue;
    plan.layouts.push_back(PlanLayout(layout, spec, model, hw, knobs));
  }
  plan.warnings = SpecWarnings(spec, engine);
  return plan;
}

}  // namespace ppsearch::plan
