// Rank placement, TP groups and stage boundaries. Follows SGLang v0.5.18,
// python/sglang/srt/: entrypoints/engine.py _calculate_rank_ranges,
// distributed/parallel_state.py (PP groups, rank = pp_rank * tp + tp_rank) and
// managers/scheduler_pp_mixin.py _pp_send_dict_to_next_stage.

#include <algorithm>
#include <set>

#include "plan/plan_internal.h"

namespace ppsearch::plan {

std::vector<RankPlacement> MapRanks(int pp, int tp, int ep, int gpus_per_node) {
  // EP groups are built inside each TP group (parallel_state.py), so a rank's
  // EP and MoE-TP coordinates come from its tp_rank alone.
  const int moe_tp = (ep > 0 && tp % ep == 0) ? tp / ep : 1;
  std::vector<RankPlacement> ranks;
  ranks.reserve(static_cast<size_t>(pp) * tp);
  for (int pp_rank = 0; pp_rank < pp; ++pp_rank) {
    for (int tp_rank = 0; tp_rank < tp; ++tp_rank) {
      RankPlacement r;
      r.rank = pp_rank * tp + tp_rank;
      r.node = r.rank / gpus_per_node;
      r.local_gpu = r.rank % gpus_per_node;
      r.pp_rank = pp_rank;
      r.tp_rank = tp_rank;
      r.moe_ep_rank = tp_rank / moe_tp;
      r.moe_tp_rank = tp_rank % moe_tp;
      ranks.push_back(r);
    }
  }
  return ranks;
}

std::vector<TpGroup> BuildTpGroups(const std::vector<RankPlacement>& ranks, int pp) {
  std::vector<TpGroup> groups(static_cast<size_t>(pp));
  for (int s = 0; s < pp; ++s) groups[s].pp_rank = s;
  for (const RankPlacement& r : ranks) {
    TpGroup& g = groups[r.pp_rank];
    g.ranks.push_back(r.rank);
    if (std::find(g.nodes.begin(), g.nodes.end(), r.node) == g.nodes.end()) {
      g.nodes.push_back(r.node);
    }
  }
  for (TpGroup& g : groups) std::sort(g.nodes.begin(), g.nodes.end());
  return groups;
}

std::vector<AttentionGroup> BuildAttentionGroups(const std::vector<RankPlacement>& ranks, int pp,
                                                 int tp, int dp) {
  std::vector<AttentionGroup> groups;
  if (dp <= 1 || tp % dp != 0) return groups;
  const int attn_tp = tp / dp;
  for (int s = 0; s < pp; ++s)
    for (int d = 0; d < dp; ++d) groups.push_back({s, d, {}, {}});
  for (const RankPlacement& r : ranks) {
    AttentionGroup& g = groups[static_cast<size_t>(r.pp_rank * dp + r.tp_rank / attn_tp)];
    g.ranks.push_back(r.rank);
    if (std::find(g.nodes.begin(), g.nodes.end(), r.node) == g.nodes.end())
      g.nodes.push_back(r.node);
  }
  for (AttentionGroup& g : groups) std::sort(g.nodes.begin(), g.nodes.end());
  return groups;
}

std::vector<StageBoundary> BuildStageBoundaries(const std::vector<RankPlacement>& ranks, int pp,
                                                int tp, const model::ModelDesc& model,
                                                const std::vector<StagePlan>& stages) {
  // Each hop carries hidden_states and the residual stream in bf16 (with
  // block attention residuals, the block summaries so far and the running
  // block sum: ModelDesc::StreamVectorsAt the next stage's first layer); with
  // send-allgather each sender ships only its 1/tp slice and the receiver
  // all-gathers inside its stage (parallel_state.py send_tensor_dict).
  std::vector<StageBoundary> hops;
  for (int s = 0; s + 1 < pp; ++s) {
    const int next_layer = s + 1 < static_cast<int>(stages.size())
                               ? stages[static_cast<size_t>(s) + 1].first_layer
                               : 0;
    const int64_t bytes_per_token =
        static_cast<int64_t>(model.StreamVectorsAt(next_layer)) * model.hidden * kBf16Bytes;
    StageBoundary hop;
    hop.from_stage = s;
    hop.bytes_per_token = bytes_per_token;
    hop.bytes_per_token_per_rank = bytes_per_token / tp;
    std::set<std::pair<int, int>> pairs;
    for (int i = 0; i < tp; ++i) {
      const RankPlacement& from = ranks[static_cast<size_t>(s) * tp + i];
      const RankPlacement& to = ranks[static_cast<size_t>(s + 1) * tp + i];
      pairs.insert({from.node, to.node});
      if (from.node != to.node) ++hop.cross_node_rank_pairs;
    }
    hop.node_pairs.assign(pairs.begin(), pairs.end());
    hops.push_back(std::move(hop));
  }
  return hops;
}

std::string HostName(const ClusterSummary& cluster, int node) {
  if (node >= 0 && node < static_cast<int>(cluster.hosts.size())) return cluster.hosts[node];
  return "node" + std::to_string(node) + "?";
}

}  // namespace ppsearch::plan
