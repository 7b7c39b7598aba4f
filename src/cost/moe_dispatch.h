#pragma once
// DeepEP's dispatch and combine, the all-to-all that replaces the MoE
// all-reduce under SGLang's --moe-a2a-backend deepep. Each rank holds 1/tp
// of the batch's tokens (the layer communicator reduce-scatters attention's
// output: layers/communicator.py gives sparse layers ScatterMode.SCATTERED
// when the backend is not none), sends each token to the ranks holding its
// top-k experts (dispatch), and gets the experts' outputs back (combine).
//
// Kernels (deepseek-ai/DeepEP README; SGLang --deepep-mode, auto by default:
// normal for batches that extend, low-latency for decode):
//  - normal: one copy per destination rank (the token's experts on one rank
//    share it); across nodes one copy per destination node over RDMA, then
//    forwarded over NVLink. Without NVLink (DeepEP's PCIe mode, DeepEP
//    PR #375, only on its hybrid-ep branch) every copy goes through the
//    NIC; SGLang never enables that mode, so the planner refuses DeepEP
//    there (plan/layout_checks.cc CheckDeepEpLinks) and this path is costed
//    only for callers below it.
//  - low-latency: one copy per expert, straight to its rank: NVLink inside a
//    node where there is one, the NIC otherwise.
// Dispatch is FP8 with one fp32 scale per 128 values when the kernels ask
// for it (low-latency by default; normal when the experts run DeepGEMM's
// FP8 path: token_dispatcher/deepep.py), BF16 otherwise and always under the
// cutlass and flashinfer_cutedsl MoE runners (layers/moe/utils.py
// get_deepep_output_dtype); combine is BF16.
// Routing is uniform over the experts, as everywhere in the cost model.

#include <cstdint>

#include "cost/collective.h"

namespace ppsearch::cost {

enum class DeepEpKernels { kNormal, kLowLatency };
// SGLang's --deepep-mode: auto runs the normal kernels on batches that
// extend and the low-latency ones on decode batches (DeepEPMode.resolve).
enum class DeepEpMode { kAuto, kNormal, kLowLatency };
DeepEpKernels KernelsFor(DeepEpMode mode, bool decode);

struct DispatchShape {
  int64_t rows = 0;   // tokens this rank holds
  int64_t width = 0;  // values per token (the experts' input width)
  int experts = 0;    // routed experts, spread evenly over the EP ranks
  int top_k = 0;
  bool fp8_dispatch = false;
  DeepEpKernels kernels = DeepEpKernels::kNormal;
};

struct DispatchTime {
  double dispatch_ns = 0;
  double combine_ns = 0;
  double total_ns() const { return dispatch_ns + combine_ns; }
};

// Expected number of `groups` equal groups of `experts` experts that top_k
// distinct experts, drawn uniformly, touch: groups x (1 - P(a group is
// missed)), P = prod_i (E - E/groups - i) / (E - i).
double ExpectedGroupsHit(int experts, int groups, int top_k);

// One rank's dispatch and combine over the EP group `group` (the TP group:
// DeepEP forces EP = TP), each the slower of its NVLink and NIC traffic plus
// a startup latency: the node's all-to-all floor, and one NIC latency when
// a copy crosses a NIC.
DispatchTime DeepEpNs(const DispatchShape& shape, const GroupSpan& group, const LinkParams& links);

}  // namespace ppsearch::cost
