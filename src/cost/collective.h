#pragma once
// Alpha-beta costs of the collectives and point-to-point transfers a layout
// performs, with the bandwidth of the slowest path the group uses: PCIe (or
// NVLink) inside a node, the NICs between nodes, and the wait for the last
// rank to arrive.

#include <cstdint>
#include <vector>

#include "hardware/hardware.h"

namespace ppsearch::cost {

struct LinkParams {
  std::vector<hardware::IntraCollective> intra;           // all-reduce, by group size, ascending
  std::vector<hardware::IntraCollective> intra_alltoall;  // all-to-all, likewise
  bool nvlink = false;               // the node's GPUs share NVLink (false: PCIe only)
  double intra_bw_scale = 1;         // calibration factor on intra-node busbw
  double intra_line_gbps = 0;        // line rate per GPU: no ring busbw exceeds it (0: no cap)
  int gpus_per_node = 0;             // for the fabric every group on a node shares
  double nic_line_gbps_per_gpu = 0;  // the NICs' line rate per GPU, GB/s
  double inter_bw_eff = 1;           // fraction of it a two-node ring reaches
  double inter_latency_us = 0;
  double p2p_gbps = 0;
  double p2p_latency_us = 0;
  double rank_jitter_us = 0;  // one sigma of ranks' arrival at a collective

  static LinkParams FromProfile(const hardware::HardwareProfile& hw);
  // Effective NIC bandwidth per GPU of a two-node ring, GB/s.
  double inter_gbps_per_gpu() const { return nic_line_gbps_per_gpu * inter_bw_eff; }
};

// The entry of `table` (ascending group sizes) for a node-local group of
// `group_size` ranks: exact, else the next larger, else the largest; null
// for an empty table.
const hardware::IntraCollective* NearestEntry(const std::vector<hardware::IntraCollective>& table,
                                              int group_size);

// Where a collective group's ranks sit.
struct GroupSpan {
  int ranks = 1;
  int nodes = 1;
  // Groups of this shape on one node that run their collectives at the same
  // time (PP8/TP4 on 8-GPU nodes: two stages' TP groups), sharing the fabric.
  int concurrent_groups = 1;
  int ranks_per_node() const { return ranks / (nodes > 0 ? nodes : 1); }
};

// A ring crossing n > 2 nodes reaches less of the NICs' rate than a
// two-node one: every step waits for the slowest of n node-to-node edges
// (congestion on shared spine links). An estimate: -10% per doubling, from
// the usual multi-node nccl-tests all_reduce falloff; not fitted.
double RingSpanEfficiency(int nodes);

// Bus bandwidth (nccl-tests definition) a group reaches for large messages:
// the intra-node figure for its per-node part (capped by the line rate, and
// by its share of the node's fabric when other groups run at once), capped
// by its share of the NICs (ranks_per_node x per-GPU NIC bandwidth x the
// ring's span efficiency) when it spans nodes.
double GroupBusBwGbps(const GroupSpan& group, const LinkParams& links);

// Startup latency of one collective on the group: the intra-node floor plus
// one inter-node latency per node crossing of the ring, both directions.
double GroupLatencyUs(const GroupSpan& group, const LinkParams& links);

// Expected wait for the last of the group's ranks to arrive: jitter sigma x
// the expected maximum of `ranks` normals (grows like sqrt(2 ln n)).
double ArrivalWaitUs(const GroupSpan& group, const LinkParams& links);

// The two algorithms NCCL's tuner weighs for an all-reduce across nodes, as
// its own cost model (NVIDIA/nccl src/graph/tuning.cc: ncclTopoTuneModel,
// ncclTopoGetAlgoTime) prices them: time = latency + bytes / algbw.
//
// Ring: every one of the 2(n-1) steps moves 1/n of the data over every link
// of the ring at once, so each step lasts as long as its slowest link: the
// PCIe (or NVLink) path inside a node or the NICs between nodes, never the
// sum. algbw = busbw x n / (2(n-1)); busbw is GroupBusBwGbps.
// Tree (multi-node only): a chain inside each node and a double binary tree
// across nodes, reduce up and broadcast down pipelined. NCCL prices its
// busbw at 0.9 x the same links' (capped at 80 GB/s beyond two nodes, 110
// within), its algbw at half that, and derates medium sizes by its
// treeCorrectionFactor (Simple protocol); its latency is one intra-node
// chain each way plus 2 x log2(nodes) NIC hops, against the ring's
// 2 x (nodes - 1). NCCL picks the faster: the tree for small messages
// across nodes, the ring for large ones.
enum class AllReduceAlgorithm { kRing, kTree };
struct AllReduceChoice {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;
  double latency_us = 0;
  double transfer_us = 0;
  double total_us() const { return latency_us + transfer_us; }
};
AllReduceChoice RingAllReduce(double bytes, const GroupSpan& group, const LinkParams& links);
AllReduceChoice TreeAllReduce(double bytes, const GroupSpan& group, const LinkParams& links);
// NCCL's treeCorrectionFactor for the Simple protocol at `bytes`.
double TreeCorrection(double bytes);
// The faster of the two (the ring alone inside one node).
AllReduceChoice ChooseAllReduce(double bytes, const GroupSpan& group, const LinkParams& links);

// All-reduce of `bytes` (per rank) by NCCL's choice of algorithm. Transfer
// only; the arrival wait is separate (ArrivalWaitUs).
int64_t AllReduceNs(double bytes, const GroupSpan& group, const LinkParams& links);

// All-gather producing `total_bytes` on every rank: alpha + (n-1)/n * total / busbw.
int64_t AllGatherNs(double total_bytes, const GroupSpan& group, const LinkParams& links);

// Reduce-scatter of `total_bytes` per rank, each keeping 1/n of the sum: a
// ring moves the same (n-1)/n x total over each link as the all-gather that
// rebuilds it (nccl-tests uses one bus-bandwidth factor for both).
int64_t ReduceScatterNs(double total_bytes, const GroupSpan& group, const LinkParams& links);

// One rank's point-to-point send of `bytes` to the next stage: PCIe P2P
// inside a node, the rank's NIC share across nodes.
int64_t PointToPointNs(double bytes, bool crosses_nodes, const LinkParams& links);

}  // namespace ppsearch::cost
