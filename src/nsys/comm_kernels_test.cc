#include "nsys/comm_kernels.h"

#include <gtest/gtest.h>

namespace ppsearch::nsys {
namespace {

std::string KindOf(const std::string& name) {
  auto k = ClassifyKernel(name);
  return k ? CollectiveName(*k) : "compute";
}

TEST(ClassifyKernelTest, NcclNamesAcrossVersions) {
  EXPECT_EQ(KindOf("ncclDevKernel_AllReduce_Sum_bf16_RING_LL"), "AllReduce");
  EXPECT_EQ(KindOf("ncclKernel_AllGather_RING_LL_Sum_int8_t"), "AllGather");
  EXPECT_EQ(KindOf("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL"), "ReduceScatter");
  EXPECT_EQ(KindOf("ncclDevKernel_SendRecv"), "SendRecv");
  EXPECT_EQ(KindOf("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"), "SendRecv");
  EXPECT_EQ(KindOf("ncclDevKernel_Broadcast_RING_LL"), "Broadcast");
  EXPECT_EQ(KindOf("ncclDevKernel_Reduce_Sum_f16_RING_LL"), "Reduce");
  EXPECT_EQ(KindOf("ncclAllReduceRingLLKernel_sum_f32"), "AllReduce");
  EXPECT_EQ(KindOf("ncclDevKernel_Generic"), "Other");
  EXPECT_EQ(KindOf("void ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            "AllGather");
}

TEST(ClassifyKernelTest, SglangCommunicationKernels) {
  EXPECT_EQ(KindOf("cross_device_reduce_1stage"), "AllReduce");
  EXPECT_EQ(KindOf("void deep_ep::intranode::dispatch<8, 768>(...)"), "AllToAll");
  EXPECT_EQ(KindOf("void deep_ep::internode::combine<true>(...)"), "AllToAll");
}

TEST(ClassifyKernelTest, EverythingElseIsCompute) {
  EXPECT_EQ(KindOf("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), "compute");
  EXPECT_EQ(KindOf("flashinfer::BatchPrefillWithPagedKVCacheKernel"), "compute");
  EXPECT_EQ(KindOf("void at::native::vectorized_elementwise_kernel<4>"), "compute");
  EXPECT_EQ(KindOf("deep_ep_layout_kernel"), "compute");
  // Every communication name passes the SQL prefilter.
  for (const char* name :
       {"ncclDevKernel_SendRecv", "cross_device_reduce_2stage", "deep_ep::intranode::combine"}) {
    bool passes = false;
    for (const char* part : kCommunicationNameParts)
      passes = passes || std::string(name).find(part) != std::string::npos;
    EXPECT_TRUE(passes) << name;
  }
}

}  // namespace
}  // namespace ppsearch::nsys
