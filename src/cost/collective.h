#pragma once
// Alpha-beta costs of the collectives and point-to-point transfers a layout
// performs, with the bandwidth of the slowest path the group uses: PCIe (or
// NVLink) inside a node, the NICs between nodes.

#include <cstdint>
#include <vector>

#include "hardware/hardware.h"

namespace ppsearch::cost {

struct LinkParams {
  std::vector<hardware::IntraCollective> intra;  // by group size, ascending
  double intra_bw_scale = 1;                     // calibration factor on intra-node busbw
  double inter_gbps_per_gpu = 0;                 // effective NIC bandwidth per GPU, GB/s
  double inter_latency_us = 0;
  double p2p_gbps = 0;
  double p2p_latency_us = 0;

  static LinkParams FromProfile(const hardware::HardwareProfile& hw);
};

// Where a collective group's ranks sit.
struct GroupSpan {
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node() const { return ranks / (nodes > 0 ? nodes : 1); }
};

// Bus bandwidth (nccl-tests definition) a group reaches for large messages:
// the intra-node figure for its per-node part, capped by its share of the
// NICs (ranks_per_node x per-GPU NIC bandwidth: NCCL runs one ring channel
// per NIC, so a multi-node ring's busbw approaches the node's aggregate NIC
// bandwidth available to the group) when it spans nodes.
double GroupBusBwGbps(const GroupSpan& group, const LinkParams& links);

// Startup latency of one collective on the group: the intra-node floor plus
// one inter-node latency per node crossing of the ring, both directions.
double GroupLatencyUs(const GroupSpan& group, const LinkParams& links);

// Ring all-reduce of `bytes` (per rank): alpha + 2(n-1)/n * bytes / busbw.
int64_t AllReduceNs(double bytes, const GroupSpan& group, const LinkParams& links);

// All-gather producing `total_bytes` on every rank: alpha + (n-1)/n * total / busbw.
int64_t AllGatherNs(double total_bytes, const GroupSpan& group, const LinkParams& links);

// One rank's point-to-point send of `bytes` to the next stage: PCIe P2P
// inside a node, the rank's NIC share across nodes.
int64_t PointToPointNs(double bytes, bool crosses_nodes, const LinkParams& links);

}  // namespace ppsearch::cost
