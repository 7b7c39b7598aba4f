#include "nsys/compute_kernels.h"

#include <gtest/gtest.h>

namespace ppsearch::nsys {
namespace {

// Names as Nsight Systems records them for SGLang's prefill and decode
// kernels (short and demangled forms).
TEST(ComputeKernels, ClassifiesSglangKernelsByName) {
  struct Case {
    const char* name;
    ComputeClass want;
  };
  const Case cases[] = {
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
       "segment_k_off_kernel__5x_cublas",
       ComputeClass::kGemm},
      {"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNT", ComputeClass::kGemm},
      {"void deep_gemm::fp8_gemm_kernel<128u, 128u, 128u>(float*, int)", ComputeClass::kGemm},
      {"Cutlass3xGemm", ComputeClass::kGemm},
      {"fused_moe_kernel", ComputeClass::kMoe},
      {"moe_align_block_size_kernel", ComputeClass::kMoe},
      {"void tensorrt_llm::kernels::cutlass_kernels::MoeFCGemm<cutlass::float_e4m3_t>()",
       ComputeClass::kMoe},
      {"void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, 128u, "
       "(deep_gemm::GemmType)1, false>()",
       ComputeClass::kMoe},
      {"void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, 128u, "
       "(deep_gemm::GemmType)0, false>()",
       ComputeClass::kGemm},
      {"bmm_E4m3_E4m3E4m3_Fp32_t128x8x128u2_s4_et64x8_m64x8x32_cga1x1x1_16dp256b_TN_transOut_"
       "schedS_bN_tma_tmaOpt_clmp_dynB_sm100f",
       ComputeClass::kMoe},
      {"_fwd_kernel_ep_scatter_1", ComputeClass::kMoe},
      {"pre_reorder_triton_kernel", ComputeClass::kMoe},
      {"moe_fused_gate_kernel", ComputeClass::kOther},  // routing: element-wise in the model
      {"topkGatingSoftmax", ComputeClass::kOther},
      {"l2norm_fwd_kernel", ComputeClass::kOther},
      {"set_mla_kv_buffer_kernel", ComputeClass::kOther},
      {"fused_kda_gate_fwd_kernel", ComputeClass::kOther},
      {"fused_sigmoid_gating_delta_rule_update_kernel", ComputeClass::kAttention},
      {"_fwd_kernel_stage1", ComputeClass::kAttention},
      {"void flashinfer::BatchPODWithKVCacheTensorKernel<128u>()", ComputeClass::kAttention},
      {"void flash::FlashAttnFwdSm90<cutlass::bfloat16_t>()", ComputeClass::kAttention},
      {"void flashinfer::BatchPrefillWithPagedKVCacheKernel<128u>()", ComputeClass::kAttention},
      {"BatchDecodeWithPagedKVCacheKernel", ComputeClass::kAttention},
      {"flash_fwd_splitkv_mla_kernel", ComputeClass::kAttention},
      {"_fwd_grouped_kernel_stage1", ComputeClass::kAttention},
      {"chunk_kda_fwd_kernel_o", ComputeClass::kAttention},
      {"chunk_gated_delta_rule_fwd_kernel_h", ComputeClass::kAttention},
      {"void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>()", ComputeClass::kOther},
      {"act_and_mul_kernel", ComputeClass::kOther},
      {"triton_poi_fused_add_mul_0", ComputeClass::kOther},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>()",
       ComputeClass::kOther},
  };
  for (const Case& c : cases)
    EXPECT_EQ(ComputeClassName(ClassifyComputeKernel(c.name)), ComputeClassName(c.want)) << c.name;
}

TEST(ComputeKernels, MatchesAnyCaseAndNamesEveryClass) {
  EXPECT_EQ(ClassifyComputeKernel("FUSED_MOE_KERNEL"), ComputeClass::kMoe);
  EXPECT_EQ(ClassifyComputeKernel(""), ComputeClass::kOther);
  EXPECT_STREQ(ComputeClassName(ComputeClass::kGemm), "gemm");
  EXPECT_STREQ(ComputeClassName(ComputeClass::kMoe), "moe");
  EXPECT_STREQ(ComputeClassName(ComputeClass::kAttention), "attention");
  EXPECT_STREQ(ComputeClassName(ComputeClass::kOther), "other");
}

}  // namespace
}  // namespace ppsearch::nsys
