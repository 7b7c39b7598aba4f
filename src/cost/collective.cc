#include "cost/collective.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/stats.h"
#include "util/round.h"

namespace ppsearch::cost {
namespace {

const hardware::IntraCollective* IntraEntry(const LinkParams& links, int group_size) {
  return NearestEntry(links.intra, group_size);
}

int64_t ToNs(double seconds) { return static_cast<int64_t>(RoundToInt64(seconds * 1e9)); }

// The table's busbw for a node-local group of `local` ranks, scaled and
// capped at the line rate.
double IntraBusBw(const LinkParams& links, int local) {
  const auto* e = IntraEntry(links, local);
  if (e == nullptr) return std::numeric_limits<double>::infinity();
  double bw = e->busbw_gbps * links.intra_bw_scale;
  if (links.intra_line_gbps > 0) bw = std::min(bw, links.intra_line_gbps);
  return bw;
}

}  // namespace

const hardware::IntraCollective* NearestEntry(const std::vector<hardware::IntraCollective>& table,
                                              int group_size) {
  for (const auto& e : table)
    if (e.group_size >= group_size) return &e;
  return table.empty() ? nullptr : &table.back();
}

LinkParams LinkParams::FromProfile(const hardware::HardwareProfile& hw) {
  LinkParams p;
  p.intra = hw.intra_allreduce;
  p.intra_alltoall = hw.intra_alltoall;
  p.nvlink = hw.nvlink;
  double best = 0;
  for (const auto& e : hw.intra_allreduce) best = std::max(best, e.busbw_gbps);
  p.intra_line_gbps = std::max(hw.p2p_gbps, best);
  p.gpus_per_node = hw.gpus_per_node;
  p.nic_line_gbps_per_gpu = hw.nic_gbps_per_gpu;
  p.inter_latency_us = hw.inter_latency_us;
  p.p2p_gbps = hw.p2p_gbps;
  p.p2p_latency_us = hw.p2p_latency_us;
  return p;
}

double RingSpanEfficiency(int nodes) {
  if (nodes <= 2) return 1.0;
  return 1.0 / (1.0 + 0.1 * std::log2(nodes / 2.0));
}

double GroupBusBwGbps(const GroupSpan& group, const LinkParams& links) {
  double bw = std::numeric_limits<double>::infinity();
  const int local = group.ranks_per_node();
  if (local > 1) {
    bw = IntraBusBw(links, local);
    // Groups that run at once share what the whole node's fabric carries:
    // the full-node all-reduce's busbw on each of its GPUs.
    const int busy = local * std::max(group.concurrent_groups, 1);
    if (group.concurrent_groups > 1 && links.gpus_per_node > 0 && busy > local)
      bw = std::min(bw, IntraBusBw(links, links.gpus_per_node) * links.gpus_per_node / busy);
  }
  if (group.nodes > 1)
    bw = std::min(bw, links.inter_gbps_per_gpu() * local * RingSpanEfficiency(group.nodes));
  return bw;
}

double GroupLatencyUs(const GroupSpan& group, const LinkParams& links) {
  double us = 0;
  const int local = group.ranks_per_node();
  if (local > 1) {
    if (const auto* e = IntraEntry(links, local)) us += e->latency_us;
  }
  if (group.nodes > 1) us += 2.0 * (group.nodes - 1) * links.inter_latency_us;
  return us;
}

double ArrivalWaitUs(const GroupSpan& group, const LinkParams& links) {
  return links.rank_jitter_us * stats::ExpectedMaxOfNormals(group.ranks);
}

AllReduceChoice RingAllReduce(double bytes, const GroupSpan& group, const LinkParams& links) {
  const int n = group.ranks;
  AllReduceChoice c;
  if (n <= 1 || bytes <= 0) return c;
  c.latency_us = GroupLatencyUs(group, links);
  c.transfer_us = 2.0 * (n - 1) / n * bytes / (GroupBusBwGbps(group, links) * 1e3);
  return c;
}

double TreeCorrection(double bytes) {
  // NVIDIA/nccl src/graph/tuning.cc, treeCorrectionFactor[NCCL_PROTO_SIMPLE],
  // indexed by log2(bytes / 64); 1 from 2^22 x 64 B (256 MiB) up.
  static constexpr double kSimple[22] = {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6,
                                         .5, .5, .5, .5, .5, .5, .6, .6, .7, .8, .9};
  const double units = bytes / 64;
  if (units < 2) return kSimple[0];
  const int log_size = static_cast<int>(std::floor(std::log2(units)));
  return log_size < 22 ? kSimple[log_size] : 1.0;
}

AllReduceChoice TreeAllReduce(double bytes, const GroupSpan& group, const LinkParams& links) {
  AllReduceChoice c;
  c.algorithm = AllReduceAlgorithm::kTree;
  if (group.ranks <= 1 || bytes <= 0) return c;
  const double max_tree_gbps = group.nodes > 2 ? 80.0 : 110.0;
  const double busbw = std::min(0.9 * GroupBusBwGbps(group, links), max_tree_gbps);
  const double algbw = 0.5 * busbw * TreeCorrection(bytes);
  // The chain inside a node, up and down, costs what the node-local
  // all-reduce's floor does; the tree's depth is log2(nodes) NIC hops each way.
  double intra_us = 0;
  if (group.ranks_per_node() > 1)
    if (const auto* e = IntraEntry(links, group.ranks_per_node())) intra_us = e->latency_us;
  const double depth = std::ceil(std::log2(std::max(group.nodes, 1)));
  c.latency_us = intra_us + 2.0 * depth * links.inter_latency_us;
  c.transfer_us = bytes / (algbw * 1e3);
  return c;
}

AllReduceChoice ChooseAllReduce(double bytes, const GroupSpan& group, const LinkParams& links) {
  const AllReduceChoice ring = RingAllReduce(bytes, group, links);
  if (group.nodes <= 1) return ring;
  const AllReduceChoice tree = TreeAllReduce(bytes, group, links);
  return tree.total_us() < ring.total_us() ? tree : ring;
}

int64_t AllReduceNs(double bytes, const GroupSpan& group, const LinkParams& links) {
  if (group.ranks <= 1 || bytes <= 0) return 0;
  return ToNs(ChooseAllReduce(bytes, group, links).total_us() * 1e-6);
}

int64_t AllGatherNs(double total_bytes, const GroupSpan& group, const LinkParams& links) {
  const int n = group.ranks;
  if (n <= 1 || total_bytes <= 0) return 0;
  const double factor = static_cast<double>(n - 1) / n;
  return ToNs(GroupLatencyUs(group, links) * 1e-6 +
              factor * total_bytes / (GroupBusBwGbps(group, links) * 1e9));
}

int64_t ReduceScatterNs(double total_bytes, const GroupSpan& group, const LinkParams& links) {
  return AllGatherNs(total_bytes, group, links);
}

int64_t PointToPointNs(double bytes, bool crosses_nodes, const LinkParams& links) {
  if (bytes <= 0) return 0;
  if (crosses_nodes)
    return ToNs(links.inter_latency_us * 1e-6 + bytes / (links.inter_gbps_per_gpu() * 1e9));
  return ToNs(links.p2p_latency_us * 1e-6 + bytes / (links.p2p_gbps * 1e9));
}

}  // namespace ppsearch::cost
