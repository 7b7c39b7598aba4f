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
  // Routing (top-k over the router's logits) and the attention residual
  // mixes are element-wise work in the cost model, whatever their names say.
  if (ContainsAny(lower, {"topk", "fused_gate", "attn_res"})) return ComputeClass::kOther;
  // Fused MoE kernels (Triton's fused_moe_kernel, TensorRT-LLM/FlashInfer's
  // MoeFCGemm, CUTLASS grouped GEMMs over a GroupProblemShape, DeepGEMM's
  // grouped GEMMs: one template whose GemmType argument demangles as
  // (deep_gemm::GemmType)1, 2 or 5, TensorRT-LLM-gen's batched MoE GEMMs
  // bmm_..._dynB) and the routed tokens' align, permute and scatter kernels.
  const bool trtllm_gen_moe =
      lower.rfind("bmm_", 0) == 0 && lower.find("dynb") != std::string::npos;
  if (trtllm_gen_moe ||
      ContainsAny(lower, {"moe", "expert", "m_grouped", "grouped_gemm", "groupproblemshape",
                          "(deep_gemm::gemmtype)1", "(deep_gemm::gemmtype)2",
                          "(deep_gemm::gemmtype)5", "ep_scatter", "ep_gather", "reorder", "src2dst",
                          "seg_indptr", "deepep_permute", "expandinputrows"}))
    return ComputeClass::kMoe;
  // FlashAttention 2/3 (flash::, flash_fwd), FlashInfer's Batch/Single
  // Prefill/Decode/POD kernels and state merges, FlashMLA and cutlass MLA,
  // TensorRT-LLM's fmha and XQA, SGLang's Triton attention (named from
  // _fwd_kernel / _fwd_grouped_kernel), and linear attention (chunked KDA,
  // the delta rule's chunked and recurrent kernels).
  const bool triton_attention =
      lower.rfind("_fwd_kernel", 0) == 0 || lower.rfind("_fwd_grouped_kernel", 0) == 0;
  if (triton_attention ||
      ContainsAny(lower,
                  {"attn",          "attention",    "fmha",         "flash::",        "flash_fwd",
                   "flashmla",      "splitkv_mla",  "mla_combine",  "batchmla",       "cutlass_mla",
                   "mla_decode",    "decode_mla",   "batchprefill", "batchdecode",    "batchpod",
                   "singleprefill", "singledecode", "mergestate",   "merge_state",    "xqa",
                   "kernel_mha",    "chunk_kda",    "delta_rule",   "fused_recurrent"}))
    return ComputeClass::kAttention;
  // cuBLAS/cuBLASLt (sm90_xmma_gemm, nvjet, gemv), cutlass, DeepGEMM, Triton matmuls.
  if (ContainsAny(lower,
                  {"gemm", "gemv", "cutlass", "cublas", "nvjet", "xmma", "matmul", "_mm_", "bmm"}))
    return ComputeClass::kGemm;
  return ComputeClass::kOther;
}

std::string ClassesText(const std::function<std::string(ComputeClass)>& value) {
  std::string out;
  for (ComputeClass c : kAllComputeClasses)
    out += (out.empty() ? "" : ", ") + std::string(ComputeClassName(c)) + " " + value(c);
  return out;
}

}  // namespace ppsearch::nsys
