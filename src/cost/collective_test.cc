// Alpha-beta collective costs against hand-worked numbers, and the
// properties a search relies on (more bandwidth is never slower, a node-local
// group never pays NIC latency, one rank costs nothing).

#include "cost/collective.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ppsearch::cost {
namespace {

// The RTX 6000D profile's links (data/hardware/rtx-6000d.toml), built by hand.
LinkParams Links() {
  LinkParams p;
  p.intra = {{2, 38.6, 6.2}, {4, 26.4, 12.9}, {8, 24.7, 24.2}};
  p.inter_gbps_per_gpu = 50;
  p.inter_latency_us = 10;
  p.p2p_gbps = 50;
  p.p2p_latency_us = 5.9;
  return p;
}

// Kimi K3's all-reduce at TP32 for an 8192-token chunk: 8192 x 7168 x 2 bytes.
constexpr double kChunkBytes = 117440512;

TEST(GroupBusBw, MultiNodeGroupIsCappedByTheSlowerOfIntraAndNic) {
  // 32 ranks on 4 nodes: 8 per node -> intra 24.7 GB/s, NIC share 8 x 50 = 400.
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({32, 4}, Links()), 24.7);
  LinkParams fast_intra = Links();
  fast_intra.intra_bw_scale = 20;  // 24.7 x 20 = 494 > 400: the NICs bound it
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({32, 4}, fast_intra), 400);
  LinkParams slow_nic = Links();
  slow_nic.inter_gbps_per_gpu = 2;  // 8 x 2 = 16 < 24.7
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({32, 4}, slow_nic), 16);
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
  // 8 ranks on 8 nodes: no intra part, 1 x 50 GB/s.
  EXPECT_DOUBLE_EQ(GroupBusBwGbps({8, 8}, Links()), 50);
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
  // busbw = min(24.7 x 20, 8 x 50) = 400 GB/s
  // 84,200 + 227,540,992 / 400 = 84,200 + 568,852.48 = 653,052.48 ns
  LinkParams links = Links();
  links.intra_bw_scale = 20;
  EXPECT_EQ(AllReduceNs(kChunkBytes, {32, 4}, links), 653052);
}

TEST(AllReduce, Tp32BoundByASlowNic) {
  // busbw = min(24.7, 8 x 2) = 16 GB/s: 84,200 + 227,540,992 / 16 = 14,305,512 ns
  LinkParams links = Links();
  links.inter_gbps_per_gpu = 2;
  EXPECT_EQ(AllReduceNs(kChunkBytes, {32, 4}, links), 14305512);
}

TEST(AllReduce, Tp8InsideOneNode) {
  // 24,200 + 2 x 7/8 x 117,440,512 / 24.7 = 24,200 + 8,320,684.05 = 8,344,884.05 ns
  EXPECT_EQ(AllReduceNs(kChunkBytes, {8, 1}, Links()), 8344884);
}

TEST(AllReduce, OneRankPerNode) {
  // 140,000 + 2 x 7/8 x 117,440,512 / 50 = 140,000 + 4,110,417.92 = 4,250,417.92 ns
  EXPECT_EQ(AllReduceNs(kChunkBytes, {8, 8}, Links()), 4250418);
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
  EXPECT_DOUBLE_EQ(p.inter_gbps_per_gpu, 25);
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
        slow.inter_gbps_per_gpu = nic;
        fast.inter_gbps_per_gpu = nic * 2;
        EXPECT_LE(AllReduceNs(bytes, g, fast), AllReduceNs(bytes, g, slow));
        EXPECT_LE(AllGatherNs(bytes, g, fast), AllGatherNs(bytes, g, slow));
        EXPECT_LE(PointToPointNs(bytes, true, fast), PointToPointNs(bytes, true, slow));
      }
    }
  }
}

TEST(CollectiveProperties, NodeLocalGroupNeverPaysNicCosts) {
  LinkParams awful_nic = Links();
  awful_nic.inter_gbps_per_gpu = 0.001;
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
