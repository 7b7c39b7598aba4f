// DeepEP's dispatch and combine against hand-worked numbers: how many copies
// of a token each kernel sends, which link carries them, and the properties
// a search relies on.

#include "cost/moe_dispatch.h"

#include <gtest/gtest.h>

namespace ppsearch::cost {
namespace {

// An 8-GPU node's all-to-all table and NICs of 50 GB/s per GPU, 10 us.
LinkParams Links(bool nvlink) {
  LinkParams p;
  p.intra_alltoall = {{2, 300, 6}, {4, 310, 7}, {8, 300, 8}};
  p.nvlink = nvlink;
  p.nic_line_gbps_per_gpu = 50;
  p.inter_latency_us = 10;
  return p;
}

TEST(ExpectedGroupsHit, HandWorked) {
  // One expert per group: top 2 distinct experts touch 2 groups.
  EXPECT_DOUBLE_EQ(ExpectedGroupsHit(8, 8, 2), 2);
  // 8 experts in 4 groups of 2, top 2: a group is missed with
  // (6/8)(5/7) = 30/56, so 4 x 26/56 = 1.857.
  EXPECT_NEAR(ExpectedGroupsHit(8, 4, 2), 4.0 * 26 / 56, 1e-12);
  // One group is always hit; more experts than exist cannot be drawn.
  EXPECT_DOUBLE_EQ(ExpectedGroupsHit(256, 1, 8), 1);
  EXPECT_DOUBLE_EQ(ExpectedGroupsHit(4, 4, 9), 4);
}

TEST(DeepEpNs, LowLatencySendsOneCopyPerExpertOverTheNicsWithoutNvlink) {
  // EP32 on 4 nodes of 8, low-latency, FP8 dispatch, 256 rows of 7168.
  // Copies: top 8, of which 8 x 7/32 = 1.75 on the node and 8 x 24/32 = 6
  // off it; without NVLink all 7.75 leave through the NIC.
  //   dispatch: 256 x 7168 x (1 + 4/128) = 1,892,352 B x 7.75 / 50 GB/s
  //             = 293,314.56 ns + (8 + 10) us = 311,314.56
  //   combine:  256 x 7168 x 2 = 3,670,016 B x 7.75 / 50 = 568,852.48 + 18,000
  DispatchShape s{256, 7168, 256, 8, true, DeepEpKernels::kLowLatency};
  const DispatchTime t = DeepEpNs(s, GroupSpan{32, 4}, Links(false));
  EXPECT_NEAR(t.dispatch_ns, 311314.56, 1e-6);
  EXPECT_NEAR(t.combine_ns, 586852.48, 1e-6);
}

TEST(DeepEpNs, NormalKernelsSendOnceToEachNodeAndForwardOverNvlink) {
  // EP16 on 2 nodes of 8, 16 experts (one per rank), top 2, BF16, 1000 rows
  // of 1000: 2,000,000 B a copy.
  //   ranks hit 2: 2 x 7/16 = 0.875 on the node, 2 x 8/16 = 1 off it.
  //   nodes hit 2 x (1 - (8/16)(7/15)) = 1.5333, remote 1/2 of them: 0.76667
  //     RDMA copies: 1,533,333.3 B / 50 GB/s = 30,666.67 ns.
  //   NVLink: 0.875 direct + 1 x 7/8 forwarded = 1.75 copies:
  //     3,500,000 B / 300 GB/s = 11,666.67 ns; the NICs are slower.
  //   each phase 30,666.67 + (8 + 10) us = 48,666.67 ns.
  DispatchShape s{1000, 1000, 16, 2, false, DeepEpKernels::kNormal};
  const DispatchTime t = DeepEpNs(s, GroupSpan{16, 2}, Links(true));
  EXPECT_NEAR(t.dispatch_ns, 48666.6667, 1e-3);
  EXPECT_NEAR(t.combine_ns, 48666.6667, 1e-3);
  // Inside one node of 8 NVLink carries every copy off this rank:
  // 2 x 7/8 = 1.75 -> 3,500,000 B / 300 GB/s = 11,666.67 ns + 8 us.
  s.experts = 8;  // one per rank again
  const DispatchTime node = DeepEpNs(s, GroupSpan{8, 1}, Links(true));
  EXPECT_NEAR(node.dispatch_ns, 11666.6667 + 8000, 1e-3);
}

TEST(DeepEpNs, NothingToSendCostsNothingAndMoreRowsNeverLess) {
  DispatchShape s{0, 7168, 256, 8, false, DeepEpKernels::kNormal};
  EXPECT_EQ(DeepEpNs(s, GroupSpan{8, 1}, Links(true)).total_ns(), 0);
  s.rows = 256;
  EXPECT_EQ(DeepEpNs(s, GroupSpan{1, 1}, Links(true)).total_ns(), 0);  // one rank: no peer
  double last = 0;
  for (int64_t rows : {1, 16, 256, 4096}) {
    s.rows = rows;
    const double t = DeepEpNs(s, GroupSpan{32, 4}, Links(false)).total_ns();
    EXPECT_GT(t, last) << rows;
    last = t;
  }
}

TEST(DeepEpNs, AutoRunsNormalKernelsOnExtendAndLowLatencyOnDecode) {
  EXPECT_EQ(KernelsFor(DeepEpMode::kAuto, false), DeepEpKernels::kNormal);
  EXPECT_EQ(KernelsFor(DeepEpMode::kAuto, true), DeepEpKernels::kLowLatency);
  EXPECT_EQ(KernelsFor(DeepEpMode::kNormal, true), DeepEpKernels::kNormal);
  EXPECT_EQ(KernelsFor(DeepEpMode::kLowLatency, false), DeepEpKernels::kLowLatency);
}

}  // namespace
}  // namespace ppsearch::cost
