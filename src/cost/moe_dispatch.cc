#include "cost/moe_dispatch.h"

#include <algorithm>

namespace ppsearch::cost {
namespace {

constexpr double kBf16 = 2;
constexpr double kFp8WithScales = 1 + 4.0 / 128;  // e4m3 values, fp32 scale per 128

}  // namespace

DeepEpKernels KernelsFor(DeepEpMode mode, bool decode) {
  switch (mode) {
    case DeepEpMode::kNormal:
      return DeepEpKernels::kNormal;
    case DeepEpMode::kLowLatency:
      return DeepEpKernels::kLowLatency;
    case DeepEpMode::kAuto:
      break;
  }
  return decode ? DeepEpKernels::kLowLatency : DeepEpKernels::kNormal;
}

double ExpectedGroupsHit(int experts, int groups, int top_k) {
  if (groups <= 1 || experts <= 0) return groups <= 1 ? 1.0 : 0.0;
  const double e = experts;
  const double outside = e - e / groups;  // experts not in a given group
  double missed = 1;
  for (int i = 0; i < top_k && i < experts; ++i) missed *= std::max(outside - i, 0.0) / (e - i);
  return groups * (1 - missed);
}

DispatchTime DeepEpNs(const DispatchShape& s, const GroupSpan& group, const LinkParams& links) {
  DispatchTime t;
  const int ep = group.ranks;
  if (ep <= 1 || s.rows <= 0) return t;
  const int nodes = std::max(group.nodes, 1);
  const int local = group.ranks_per_node();  // EP ranks on this rank's node
  const bool low_latency = s.kernels == DeepEpKernels::kLowLatency;

  // Copies of one token per destination rank, and where they go: by
  // symmetry a destination is this rank (1/ep), another on its node
  // ((local-1)/ep) or on another node ((ep-local)/ep).
  const double copies = low_latency ? s.top_k : ExpectedGroupsHit(s.experts, ep, s.top_k);
  const double same_node = copies * (local - 1) / ep;
  const double off_node = copies * (ep - local) / ep;
  double nvlink_copies = 0;
  double nic_copies = 0;
  if (!links.nvlink) {
    nic_copies = same_node + off_node;
  } else if (low_latency || nodes == 1) {
    nvlink_copies = same_node;
    nic_copies = off_node;
  } else {
    // One RDMA copy per remote node the token's experts touch; on arrival
    // the node's NVLink forwards it to each destination rank but the one
    // with the sender's local index.
    nic_copies = ExpectedGroupsHit(s.experts, nodes, s.top_k) * (nodes - 1) / nodes;
    nvlink_copies = same_node + off_node * (local - 1) / local;
  }

  // NVLink at the node's measured all-to-all rate (nccl-tests busbw: the
  // bytes each GPU sends to its peers per second), the NICs at theirs.
  const hardware::IntraCollective* intra = NearestEntry(links.intra_alltoall, local);
  const double nvlink_gbps = (intra ? intra->busbw_gbps : links.p2p_gbps) * links.intra_bw_scale;
  const double nic_gbps = links.inter_gbps_per_gpu();
  const double latency_us = (intra ? intra->latency_us : links.p2p_latency_us) +
                            (nic_copies > 0 ? links.inter_latency_us : 0);
  auto phase_ns = [&](double bytes_per_copy) {
    const double per_copy = static_cast<double>(s.rows) * s.width * bytes_per_copy;
    double ns = 0;
    if (nvlink_copies > 0 && nvlink_gbps > 0) ns = nvlink_copies * per_copy / nvlink_gbps;
    if (nic_copies > 0 && nic_gbps > 0) ns = std::max(ns, nic_copies * per_copy / nic_gbps);
    return ns + latency_us * 1e3;
  };
  t.dispatch_ns = phase_ns(s.fp8_dispatch ? kFp8WithScales : kBf16);
  t.combine_ns = phase_ns(kBf16);
  return t;
}

}  // namespace ppsearch::cost
