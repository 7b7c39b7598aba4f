#include "nsys/compute_kernels.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace ppsearch::nsys {
namespace {

bool ContainsAny(const std::string& lower, std::initializer_list<const char*> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&lower](const char* p) { return lower.find(p) != std::string::npos; });
}

}  // namespace

const char* ComputeClassName(ComputeClass c) {
  switch (c) {
    case ComputeClass::kGemm:
      return "gemm";
    case ComputeClass::kMoe:
      return "moe";
    case ComputeClass::kAttention:
      return "attention";
    case ComputeClass::kOther:
      return "other";
  }
  return "other";
}

ComputeClass ClassifyComputeKernel(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  // Fused MoE kernels (Triton's fused_moe_kernel, TensorRT-LLM/FlashInfer's
  // MoeFCGemm, DeepGEMM's m_grouped GEMMs) and their align/permute helpers.
  if (ContainsAny(lower, {"moe", "expert", "m_grouped", "grouped_gemm"})) return ComputeClass::kMoe;
  // FlashAttention 2/3 (flash::, flash_fwd), FlashInfer's Batch/Single
  // Prefill/Decode kernels, FlashMLA and cutlass MLA, TensorRT-LLM's fmha,
  // SGLang's Triton attention (_fwd_kernel, _fwd_grouped_kernel), and
  // linear attention (KDA, gated delta rule, fused recurrent).
  if (ContainsAny(lower,
                  {"attn", "attention", "fmha", "flash::", "flash_fwd", "flashmla", "mla_", "_mla",
                   "batchprefill", "batchdecode", "singleprefill", "singledecode", "mergestate",
                   "_fwd_kernel", "_fwd_grouped_kernel", "kda", "gated_delta", "fused_recurrent"}))
    return ComputeClass::kAttention;
  // cuBLAS/cuBLASLt (sm90_xmma_gemm, nvjet), cutlass, DeepGEMM, Triton matmuls.
  if (ContainsAny(lower, {"gemm", "cutlass", "cublas", "nvjet", "xmma", "matmul", "_mm_", "bmm"}))
    return ComputeClass::kGemm;
  return ComputeClass::kOther;
}

}  // namespace ppsearch::nsys
