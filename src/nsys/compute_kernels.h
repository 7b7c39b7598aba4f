#pragma once
// What a compute kernel does, by its name: the classes the cost model
// splits a stage's compute into (cost::StageBreakdown), so a profile of the
// target says which of them the model over- or under-counts. Names only:
// a kernel no rule recognises is "other" (norms, activations, routing,
// copies), never guessed into a class.

#include <array>
#include <functional>
#include <string>
#include <string_view>

namespace ppsearch::nsys {

enum class ComputeClass {
  kGemm,       // dense GEMMs: projections, shared experts, LM head
  kMoe,        // routed-expert grouped GEMMs and their permute/align/finalize
  kAttention,  // attention cores (softmax attention, MLA, linear attention)
  kOther,      // element-wise and everything else
};
inline constexpr int kComputeClasses = 4;
inline constexpr std::array<ComputeClass, kComputeClasses> kAllComputeClasses = {
    ComputeClass::kGemm, ComputeClass::kMoe, ComputeClass::kAttention, ComputeClass::kOther};

const char* ComputeClassName(ComputeClass c);  // "gemm", "moe", "attention", "other"

// The class of a (non-communication) kernel from its short or demangled
// name, case-insensitively. MoE is tried first (its grouped GEMMs are GEMMs
// too, and cutlass names both), then attention, then GEMM.
ComputeClass ClassifyComputeKernel(std::string_view name);

// "gemm A, moe B, attention C, other D": every class in order, each with
// what `value` writes for it (a share, or a measured / predicted pair).
std::string ClassesText(const std::function<std::string(ComputeClass)>& value);

}  // namespace ppsearch::nsys
