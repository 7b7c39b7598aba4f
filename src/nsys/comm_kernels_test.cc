#include "nsys/comm_kernels.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

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
  // FlashInfer's fused all-reduce (with the next norm) and TensorRT-LLM's
  // one/two-shot kernels are the all-reduce, not compute.
  EXPECT_EQ(KindOf("void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_"
                   "lamport<__nv_bfloat16, 8>(...)"),
            "AllReduce");
  EXPECT_EQ(KindOf("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16>(...)"),
            "AllReduce");
}

TEST(ClassifyKernelTest, EverythingElseIsCompute) {
  EXPECT_EQ(KindOf("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), "compute");
  EXPECT_EQ(KindOf("flashinfer::BatchPrefillWithPagedKVCacheKernel"), "compute");
  EXPECT_EQ(KindOf("void at::native::vectorized_elementwise_kernel<4>"), "compute");
  EXPECT_EQ(KindOf("deep_ep_layout_kernel"), "compute");
  // Every communication name passes the SQL prefilter.
  // (SQLite's LIKE ignores ASCII case, as the comparison below does.)
  for (const char* name :
       {"ncclDevKernel_SendRecv", "cross_device_reduce_2stage", "deep_ep::intranode::combine",
        "allreduce_fusion_kernel_twoshot", "oneShotAllReduceKernel", "lamport_initialize"}) {
    bool passes = false;
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* part : kCommunicationNameParts)
      passes = passes || lower.find(part) != std::string::npos;
    EXPECT_TRUE(passes) << name;
  }
}

}  // namespace
}  // namespace ppsearch::nsys
