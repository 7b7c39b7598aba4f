// The plan as JSON. Key names are a contract: tests, scripts and other
// ppsearch commands read them, so renaming one is a breaking change.

#include <nlohmann/json.hpp>

#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

using nlohmann::json;

json LocationToJson(const SourceLoc& loc) {
  return {{"file", loc.file}, {"line", loc.line}, {"col", loc.col}, {"key", loc.key}};
}

json DiagnosticsToJson(const std::vector<Diagnostic>& diagnostics) {
  json out = json::array();
  for (const Diagnostic& d : diagnostics) {
    out.push_back({{"message", d.message}, {"location", LocationToJson(d.location)}});
  }
  return out;
}

json NodeNamesToJson(const Plan& plan, const std::vector<int>& nodes) {
  json out = json::array();
  for (int node : nodes) {
    out.push_back(HostName(plan.cluster, node));
  }
  return out;
}

json RanksToJson(const Plan& plan, const LayoutPlan& layout) {
  json out = json::array();
  for (const RankPlacement& r : layout.ranks) {
    out.push_back({{"rank", r.rank},
                   {"node", HostName(plan.cluster, r.node)},
                   {"node_index", r.node},
                   {"gpu", r.local_gpu},
                   {"pp_rank", r.pp_rank},
                   {"tp_rank", r.tp_rank},
                   {"moe_ep_rank", r.moe_ep_rank},
                   {"moe_tp_rank", r.moe_tp_rank}});
  }
  return out;
}

json TpGroupsToJson(const Plan& plan, const LayoutPlan& layout) {
  json out = json::array();
  for (const TpGroup& g : layout.tp_groups) {
    out.push_back({{"pp_rank", g.pp_rank},
                   {"ranks", g.ranks},
                   {"nodes", NodeNamesToJson(plan, g.nodes)},
                   {"crosses_nodes", g.crosses_nodes()}});
  }
  return out;
}

json AttentionGroupsToJson(const Plan& plan, const LayoutPlan& layout) {
  json out = json::array();
  for (const AttentionGroup& g : layout.attention_groups)
    out.push_back({{"pp_rank", g.pp_rank},
                   {"dp_rank", g.dp_rank},
                   {"ranks", g.ranks},
                   {"nodes", NodeNamesToJson(plan, g.nodes)}});
  return out;
}

json StageToJson(const Plan& plan, const StagePlan& s) {
  const StageCollectives& c = s.collectives;
  return {{"pp_rank", s.pp_rank},
          {"layers", {s.first_layer, s.end_layer}},
          {"num_layers", s.num_layers()},
          {"nodes", NodeNamesToJson(plan, s.nodes)},
          {"mla_layers", s.mla_layers},
          {"kda_layers", s.kda_layers},
          {"gqa_layers", s.gqa_layers},
          {"dense_layers", s.dense_layers},
          {"moe_layers", s.moe_layers},
          {"has_embedding", s.has_embedding},
          {"has_lm_head", s.has_lm_head},
          {"holds_lm_head_weights", s.holds_lm_head_weights},
          {"weight_mib_per_rank", s.weight_mib_per_rank},
          {"kv_bytes_per_token_per_rank", s.kv_bytes_per_token_per_rank},
          {"state_bytes_per_request_per_rank", s.state_bytes_per_request_per_rank},
          {"collectives",
           {{"allreduce_count", c.allreduce_count},
            {"allgather_count", c.allgather_count},
            {"alltoall_count", c.alltoall_count},
            {"allreduce_bytes_per_token", c.allreduce_bytes_per_token},
            {"allgather_bytes_per_sequence", c.allgather_bytes_per_sequence},
            {"nodes_spanned", c.nodes_spanned},
            {"crosses_nodes", c.crosses_nodes()}}}};
}

json BoundaryToJson(const Plan& plan, const StageBoundary& hop) {
  json pairs = json::array();
  for (const auto& [from, to] : hop.node_pairs) {
    pairs.push_back({HostName(plan.cluster, from), HostName(plan.cluster, to)});
  }
  return {{"from_stage", hop.from_stage},
          {"to_stage", hop.from_stage + 1},
          {"crosses_nodes", hop.crosses_nodes()},
          {"node_pairs", pairs},
          {"cross_node_rank_pairs", hop.cross_node_rank_pairs},
          {"bytes_per_token", hop.bytes_per_token},
          {"bytes_per_token_per_rank", hop.bytes_per_token_per_rank}};
}

// Each instance's host names, in order.
json InstanceHostsToJson(const Plan& plan, const LayoutPlan& layout) {
  json out = json::array();
  for (const std::vector<int>& nodes : layout.instance_nodes) {
    json names = json::array();
    for (int n : nodes)
      if (n < static_cast<int>(plan.cluster.hosts.size())) names.push_back(plan.cluster.hosts[n]);
    out.push_back(names);
  }
  return out;
}

json LayoutToJson(const Plan& plan, const LayoutPlan& layout) {
  json stages = json::array();
  for (const StagePlan& s : layout.stages) stages.push_back(StageToJson(plan, s));
  json boundaries = json::array();
  for (const StageBoundary& hop : layout.boundaries)
    boundaries.push_back(BoundaryToJson(plan, hop));
  return {{"label", layout.layout.Label()},
          {"pp", layout.layout.pp},
          {"tp", layout.layout.tp},
          {"ep", layout.layout.ep},
          {"dp", layout.layout.dp},
          {"instances", layout.layout.instances},
          {"instance_hosts", InstanceHostsToJson(plan, layout)},
          {"attn_tp", layout.attn_tp},
          {"moe_tp", layout.moe_tp},
          {"world_size", layout.world_size},
          {"origin", LocationToJson(layout.layout.origin)},
          {"valid", layout.valid},
          {"errors", DiagnosticsToJson(layout.errors)},
          {"warnings", DiagnosticsToJson(layout.warnings)},
          {"ranks", RanksToJson(plan, layout)},
          {"tp_groups", TpGroupsToJson(plan, layout)},
          {"attention_groups", AttentionGroupsToJson(plan, layout)},
          {"stages", stages},
          {"stage_boundaries", boundaries},
          {"cross_node_stage_boundaries", layout.cross_node_stage_boundaries},
          {"allreduce_per_forward", layout.allreduce_per_forward},
          {"cross_node_allreduce_per_forward", layout.cross_node_allreduce_per_forward},
          {"allgather_per_forward", layout.allgather_per_forward},
          {"weight_mib_per_rank_max", layout.weight_mib_per_rank_max},
          {"memory",
           layout.memory.stages.empty() ? json(nullptr) : memory::MemoryPlanToJson(layout.memory)}};
}

}  // namespace

nlohmann::json PlanToJson(const Plan& plan) {
  const ModelSummary& m = plan.model;
  const ClusterSummary& c = plan.cluster;
  json layouts = json::array();
  for (const LayoutPlan& layout : plan.layouts) layouts.push_back(LayoutToJson(plan, layout));
  return {{"spec", plan.spec_path},
          {"model",
           {{"name", m.name},
            {"family", m.family},
            {"source_path", m.source_path},
            {"total_params", m.total_params},
            {"active_params", m.active_params},
            {"num_layers", m.num_layers},
            {"hidden", m.hidden},
            {"vocab", m.vocab},
            {"weight_mib", m.weight_mib}}},
          {"cluster",
           {{"hosts", c.hosts},
            {"gpus_per_node", c.gpus_per_node},
            {"gpus", c.gpus},
            {"hardware", c.hardware},
            {"gpu_name", c.gpu_name},
            {"gpu_memory_mib", c.gpu_memory_mib}}},
          {"moe_a2a_backend", plan.moe_a2a_backend},
          {"valid", plan.all_valid()},
          {"warnings", DiagnosticsToJson(plan.warnings)},
          {"layouts", layouts}};
}

}  // namespace ppsearch::plan
