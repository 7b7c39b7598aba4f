#pragma once
// Which kernels are communication: NCCL's device kernels by name, and the
// custom all-reduce and expert all-to-all kernels SGLang ships besides NCCL.
// Everything else is compute.

#include <array>
#include <optional>
#include <string_view>

namespace ppsearch::nsys {

enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kSendRecv,  // NCCL's point-to-point kernel: PP activation transfers, and all-to-all over NCCL
  kAllToAll,  // dedicated all-to-all kernels (DeepEP dispatch/combine)
  kBroadcast,
  kReduce,
  kOther,  // an NCCL kernel of no kind above (ncclDevKernel_Generic)
};
inline constexpr int kCollectiveKinds = 8;
inline constexpr std::array<Collective, kCollectiveKinds> kAllCollectives = {
    Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
    Collective::kSendRecv,  Collective::kAllToAll,  Collective::kBroadcast,
    Collective::kReduce,    Collective::kOther};

const char* CollectiveName(Collective kind);  // "AllReduce", ...

// The collective a kernel name runs, nullopt for compute. Recognises NCCL's
// names across versions: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL" (2.19+),
// "ncclKernel_AllGather_RING_LL_Sum_int8_t" (2.7-2.18),
// "ncclAllReduceRingLLKernel_sum_f32" (older), "ncclDevKernel_SendRecv";
// SGLang's custom all-reduce ("cross_device_reduce_1stage"), FlashInfer's
// and TensorRT-LLM's fused and one/two-shot all-reduces
// ("allreduce_fusion_kernel_oneshot_lamport", "oneShotAllReduceKernel"), and
// DeepEP's dispatch/combine kernels as all-to-all.
std::optional<Collective> ClassifyKernel(std::string_view name);

// Whether a name may be communication, for a cheap SQL prefilter: every name
// ClassifyKernel recognises contains one of these (case-insensitively).
inline constexpr std::array<const char*, 6> kCommunicationNameParts = {
    "nccl", "cross_device_reduce", "deep_ep", "allreduce_fusion", "shotallreduce", "lamport"};

}  // namespace ppsearch::nsys
