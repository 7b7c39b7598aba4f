// Alpha-beta collective costs against hand-worked numbers, and the
// properties a search relies on (more bandwidth is never slower, a node-local
// group never pays NIC latency, one rank costs nothing).

#include "cost/collective.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsearch::cost {
namespace {

// An 8-GPU PCIe node's links (the RTX PRO 6000 server table of
// data/hardware/rtx-pro-6000-server.toml, with the RTX 6000D's P2P rate), built by hand.
LinkParams Links() {
  LinkParams p;
  p.intra = {{2, 38.6, 6.2}, {4, 26.4, 12.9}, {8, 24.7, 24.2}};
  p.nic_line_gbps_per_gpu = 50;
  p.inter_latency_us = 10;
  p.p2p_gbps = 50;
  p.p2p_latency_us = 5.9;
  return p;
}

// Kimi K3's all-reduce at TP32 for an 8192-token chunk: 8192 x 7168 x 2 bytes.
constexpr double kChunkBytes = 117440512;

TEST(GroupBusBw, MultiNodeGroupIsCappedByTheSlowerOfIntraAndNic) {
  // 32 ranks on 4 nodes: 8 per node -> intra 24.7 GB/s, NIC share 8 x 50 x
  // the 4-node ring's span efficiency 1 / (1 + 0.1 log2(4 / 2)) = 363.64.
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({32, 4}, Links()), 24.7);
  LinkParams fast_intra = Links();
  fast_intra.intra_bw_scale = 20;  // 24.7 x 20 = 494 > 363.64: the NICs bound it
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({32, 4}, fast_intra), 400 / 1.1);
  LinkParams slow_nic = Links();
  slow_nic.inter_bw_eff = 0.04;  // 8 x 50 x 0.04 / 1.1 = 14.55 < 24.7
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({32, 4}, slow_nic), 16 / 1.1);
  // Two nodes: no span loss.
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({16, 2}, slow_nic), 16);
}

TEST(GroupBusBw, ConcurrentGroupsShareTheNodeFabric) {
  // PP8/TP4 on 8-GPU nodes: two TP4 groups all-reduce at once, and together
  // get what the full node's fabric carries: 24.7 GB/s per GPU (the 8-GPU
  // all-reduce), under the 26.4 a lone TP4 group reaches.
  LinkParams links = Links();
  links.gpus_per_node = 8;
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({4, 1, 1}, links), 26.4);
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({4, 1, 2}, links), 24.7);
  // Four TP2 groups: 24.7 x 8 / 8 = 24.7 < 38.6; two TP2 groups: 24.7 x 8 / 4
  // = 49.4 > 38.6, so the pair's own figure holds.
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({2, 1, 4}, links), 24.7);
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({2, 1, 2}, links), 38.6);
}

TEST(GroupBusBw, NoScaleLiftsALinkAboveItsLineRate) {
  LinkParams links = Links();
  links.intra_line_gbps = 50;
  links.intra_bw_scale = 2;  // 38.6 x 2 = 77.2 > 50; 24.7 x 2 = 49.4 < 50
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({2, 1}, links), 50);
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({8, 1}, links), 49.4);
}

TEST(RingSpan, WiderRingsLoseAFractionPerDoubling) {
  EXPECT_DOUBLE_EQ(RingSpanEfficiency(1), 1);
  EXPECT_DOUBLE_EQ(RingSpanEfficiency(2), 1);
  EXPECT_DOUBLE_EQ(RingSpanEfficiency(4), 1 / 1.1);
  EXPECT_DOUBLE_EQ(RingSpanEfficiency(8), 1 / 1.2);
}

TEST(ArrivalWait, GrowsWithTheGroupLikeTheMaximumOfNormals) {
  LinkParams links = Links();
  links.rank_jitter_us = 1;
  // E[max of 2 standard normals] = 1 / sqrt(pi) = 0.5642; of 8 = 1.4236
  // (tables of normal order statistics); Blom's formula is within 5%.
  EXPECT_NEAR(ArrivalWaitUs({2, 1}, links), 0.5642, 0.5642 * 0.05);
  EXPECT_NEAR(ArrivalWaitUs({8, 1}, links), 1.4236, 1.4236 * 0.02);
  EXPECT_GT(ArrivalWaitUs({32, 4}, links), ArrivalWaitUs({8, 1}, links));
  EXPECT_DOUBLE_EQ(ArrivalWaitUs({1, 1}, links), 0);
  links.rank_jitter_us = 0;
  EXPECT_DOUBLE_EQ(ArrivalWaitUs({32, 4}, links), 0);
}

TEST(GroupBusBw, NodeLocalGroupUsesTheNearestLargerEntry) {
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({2, 1}, Links()), 38.6);
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({3, 1}, Links()), 26.4);   // no 3-GPU entry: the 4-GPU one
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({16, 1}, Links()), 24.7);  // beyond the table: the largest
  LinkParams scaled = Links();
  scaled.intra_bw_scale = 0.5;
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({4, 1}, scaled), 13.2);
}

TEST(GroupBusBw, OneRankPerNodeIsBoundByOneNic) {
  // 8 ranks on 8 nodes: no intra part, 1 x 50 GB/s / (1 + 0.1 log2(8 / 2)).
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({8, 8}, Links()), 50 / 1.2);
}

TEST(GroupLatency, IntraFloorPlusTwoNicLatenciesPerNodeCrossing) {
  // 24.2 (8 per node) + 2 x (4 - 1) x 10 = 84.2 us
  EXPECT_DOUBLE_EQ(GroupLatencyUs({32, 4}, Links()), 84.2);
  // 24.2 + 2 x 1 x 10 = 44.2 us
  EXPECT_DOUBLE_EQ(GroupLatencyUs({16, 2}, Links()), 44.2);
  // 2 x 7 x 10 = 140 us, no intra part
  EXPECT_DOUBLE_EQ(GroupLatencyUs({8, 8}, Links()), 140);
  EXPECT_DOUBLE_EQ(GroupLatencyUs({4, 1}, Links()), 12.9);
  EXPECT_DOUBLE_EQ(GroupLatencyUs({1, 1}, Links()), 0);
}

TEST(AllReduce, Tp32AcrossFourNodes) {
  // alpha = 24.2 + 2 x 3 x 10 = 84.2 us = 84,200 ns
  // beta  = 2 x 31/32 x 117,440,512 / 24.7e9 s = 227,540,992 / 24.7 ns = 9,212,185.91 ns
  // total = 9,296,385.91 ns
  EXPECT_EQ(AllReduceNs(kChunkBytes, {32, 4}, Links()), 9296386);
}

TEST(AllReduce, Tp32BoundByTheNicsWhenIntraIsFast) {
  // busbw = min(24.7 x 20, 8 x 50 / 1.1) = 363.64 GB/s
  // 84,200 + 227,540,992 x 1.1 / 400 = 84,200 + 625,737.73 = 709,937.73 ns
  LinkParams links = Links();
  links.intra_bw_scale = 20;
  EXPECT_EQ(AllReduceNs(kChunkBytes, {32, 4}, links), 709938);
}

TEST(AllReduce, Tp32BoundByASlowNic) {
  // busbw = min(24.7, 8 x 50 x 0.04 / 1.1) = 14.545 GB/s:
  // 84,200 + 227,540,992 x 1.1 / 16 = 84,200 + 15,643,443.2 = 15,727,643.2 ns
  LinkParams links = Links();
  links.inter_bw_eff = 0.04;
  EXPECT_EQ(AllReduceNs(kChunkBytes, {32, 4}, links), 15727643);
}

TEST(AllReduce, SmallMessagesAcrossNodesTakeNcclsTree) {
  // 8 tokens x 7168 x 2 = 114,688 B over TP32 on 4 nodes.
  //   ring: 84.2 + 2 x 31/32 x 114,688 / 24.7 GB/s = 84.2 + 8.996 = 93.196 us
  //   tree: log2(114,688 / 64) = 10.8 -> correction 0.6; algbw = 0.5 x 0.9 x
  //         24.7 x 0.6 = 6.669 GB/s; 24.2 + 2 x log2(4) x 10 = 64.2 us
  //         + 114,688 / 6.669 = 17.197 us -> 81.397 us: NCCL's tuner picks it.
  constexpr double kBytes = 114688;
  const AllReduceChoice ring = RingAllReduce(kBytes, {32, 4}, Links());
  EXPECT_NEAR(ring.total_us(), 93.196, 1e-3);
  const AllReduceChoice tree = TreeAllReduce(kBytes, {32, 4}, Links());
  EXPECT_NEAR(tree.latency_us, 64.2, 1e-9);
  EXPECT_NEAR(tree.transfer_us, 17.197, 1e-3);
  EXPECT_EQ(ChooseAllReduce(kBytes, {32, 4}, Links()).algorithm, AllReduceAlgorithm::kTree);
  EXPECT_EQ(AllReduceNs(kBytes, {32, 4}, Links()), 81397);
  // Inside one node only the ring is weighed.
  EXPECT_EQ(ChooseAllReduce(kBytes, {8, 1}, Links()).algorithm, AllReduceAlgorithm::kRing);
}

TEST(AllReduce, LargeMessagesAcrossNodesTakeTheRing) {
  // The 8192-token chunk: the tree's algbw 0.5 x 0.9 x 24.7 x 0.8 (log2 size
  // 20.8) = 8.892 GB/s against the ring's 24.7 x 32/62 = 12.75 GB/s:
  //   tree 64.2 + 117,440,512 / 8.892 = 13,271.6 us; ring 9,296.4 us.
  EXPECT_NEAR(TreeAllReduce(kChunkBytes, {32, 4}, Links()).total_us(), 13271.635, 1e-3);
  EXPECT_EQ(ChooseAllReduce(kChunkBytes, {32, 4}, Links()).algorithm, AllReduceAlgorithm::kRing);
}

TEST(AllReduce, TreeCorrectionFollowsNcclsSimpleTable) {
  EXPECT_DOUBLE_EQ(TreeCorrection(64), 0.9);
  EXPECT_DOUBLE_EQ(TreeCorrection(64 << 7), 0.8);
  EXPECT_DOUBLE_EQ(TreeCorrection(64 << 11), 0.5);
  EXPECT_DOUBLE_EQ(TreeCorrection(64.0 * (1 << 21)), 0.9);
  EXPECT_DOUBLE_EQ(TreeCorrection(64.0 * (1 << 22)), 1.0);
}

TEST(AllReduce, Tp8InsideOneNode) {
  // 24,200 + 2 x 7/8 x 117,440,512 / 24.7 = 24,200 + 8,320,684.05 = 8,344,884.05 ns
  EXPECT_EQ(AllReduceNs(kChunkBytes, {8, 1}, Links()), 8344884);
}

TEST(AllReduce, OneRankPerNode) {
  // busbw 50 / 1.2: 140,000 + 2 x 7/8 x 117,440,512 x 1.2 / 50
  // = 140,000 + 4,932,501.50 = 5,072,501.50 ns
  EXPECT_EQ(AllReduceNs(kChunkBytes, {8, 8}, Links()), 5072502);
}

TEST(AllReduce, OneRankOrNoBytesCostsNothing) {
  EXPECT_EQ(AllReduceNs(kChunkBytes, {1, 1}, Links()), 0);
  EXPECT_EQ(AllReduceNs(0, {32, 4}, Links()), 0);
}

TEST(AllGather, Tp32AcrossFourNodes) {
  // 84,200 + 31/32 x 117,440,512 / 24.7 = 84,200 + 4,606,092.96 = 4,690,292.96 ns
  EXPECT_EQ(AllGatherNs(kChunkBytes, {32, 4}, Links()), 4690293);
  EXPECT_EQ(AllGatherNs(kChunkBytes, {1, 1}, Links()), 0);
  EXPECT_EQ(AllGatherNs(0, {8, 1}, Links()), 0);
}

TEST(PointToPoint, NicAcrossNodesPcieInside) {
  // across: 10,000 + 117,440,512 / 50 = 10,000 + 2,348,810.24 = 2,358,810.24 ns
  // inside:  5,900 + 2,348,810.24 = 2,354,710.24 ns
  EXPECT_EQ(PointToPointNs(kChunkBytes, true, Links()), 2358810);
  EXPECT_EQ(PointToPointNs(kChunkBytes, false, Links()), 2354710);
  EXPECT_EQ(PointToPointNs(0, true, Links()), 0);
}

TEST(LinkParamsFromProfile, CopiesTheProfileLinks) {
  hardware::HardwareProfile hw;
  hw.intra_allreduce = {{2, 40, 6}, {4, 25, 13}};
  hw.nic_gbps_per_gpu = 25;
  hw.inter_latency_us = 12;
  hw.p2p_gbps = 55;
  hw.p2p_latency_us = 4;
  LinkParams p = LinkParams::FromProfile(hw);
  ASSERT_EQ(p.intra.size(), 2u);
  EXPECT_EQ(p.intra[1].group_size, 4);
  EXPECT_DOUBLE_EQ(p.intra[1].busbw_gbps, 25);
  EXPECT_DOUBLE_EQ(p.intra_bw_scale, 1);
  EXPECT_DOUBLE_EQ(p.intra_line_gbps, 55);  // the P2P rate, above every busbw
  EXPECT_DOUBLE_EQ(p.nic_line_gbps_per_gpu, 25);
  EXPECT_DOUBLE_EQ(p.inter_bw_eff, 1);
  EXPECT_DOUBLE_EQ(p.inter_gbps_per_gpu(), 25);
  EXPECT_DOUBLE_EQ(p.inter_latency_us, 12);
  EXPECT_DOUBLE_EQ(p.p2p_gbps, 55);
  EXPECT_DOUBLE_EQ(p.p2p_latency_us, 4);
}

// Every group shape of a 4 x 8 cluster the planner can produce.
const GroupSpan kGroups[] = {{2, 1}, {4, 1}, {8, 1}, {16, 2}, {32, 4}, {8, 2}, {4, 4}, {8, 8}};
const double kSizes[] = {1024, 1 << 20, kChunkBytes, 4 * kChunkBytes};

TEST(CollectiveProperties, MoreBandwidthIsNeverSlower) {
  for (const GroupSpan& g : kGroups) {
    for (double bytes : kSizes) {
      SCOPED_TRACE(testing::Message()
                   << g.ranks << " ranks on " << g.nodes << " nodes, " << bytes << " bytes");
      for (double scale : {0.25, 0.5, 1.0, 2.0, 4.0, 20.0}) {
        LinkParams slow = Links(), fast = Links();
        slow.intra_bw_scale = scale;
        fast.intra_bw_scale = scale * 1.5;
        EXPECT_LE(AllReduceNs(bytes, g, fast), AllReduceNs(bytes, g, slow));
        EXPECT_LE(AllGatherNs(bytes, g, fast), AllGatherNs(bytes, g, slow));
      }
      for (double nic : {1.0, 5.0, 12.5, 25.0, 50.0, 100.0}) {
        LinkParams slow = Links(), fast = Links();
        slow.inter_bw_eff = nic / 100;
        fast.inter_bw_eff = nic / 50;
        EXPECT_LE(AllReduceNs(bytes, g, fast), AllReduceNs(bytes, g, slow));
        EXPECT_LE(AllGatherNs(bytes, g, fast), AllGatherNs(bytes, g, slow));
        EXPECT_LE(PointToPointNs(bytes, true, fast), PointToPointNs(bytes, true, slow));
      }
    }
  }
}

TEST(CollectiveProperties, NodeLocalGroupNeverPaysNicCosts) {
  LinkParams awful_nic = Links();
  awful_nic.inter_bw_eff = 0.00002;
  awful_nic.inter_latency_us = 1e6;
  for (int ranks : {2, 4, 8}) {
    const GroupSpan local{ranks, 1};
    EXPECT_DOUBLE_EQ(GroupLatencyUs(local, awful_nic), GroupLatencyUs(local, Links()));
    EXPECT_DOUBLE_EQ(GroupBusBwGbps(local, awful_nic), GroupBusBwGbps(local, Links()));
    for (double bytes : kSizes)
      EXPECT_EQ(AllReduceNs(bytes, local, awful_nic), AllReduceNs(bytes, local, Links()));
  }
}

TEST(CollectiveProperties, AllGatherOfTheSameBytesIsHalfTheAllReduceBeta) {
  // Same alpha; beta (n-1)/n vs 2(n-1)/n: AR - AG = AG - alpha (within rounding).
  const GroupSpan g{32, 4};
  const double alpha_ns = GroupLatencyUs(g, Links()) * 1e3;
  const double ar = static_cast<double>(AllReduceNs(kChunkBytes, g, Links()));
  const double ag = static_cast<double>(AllGatherNs(kChunkBytes, g, Links()));
  EXPECT_NEAR(ar - alpha_ns, 2 * (ag - alpha_ns), 2.0);
}

}  // namespace
}  // namespace ppsearch::cost
