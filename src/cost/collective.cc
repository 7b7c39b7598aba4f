#include "cost/collective.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ppsearch::cost {
namespace {

const hardware::IntraCollective* IntraEntry(const LinkParams& links, int group_size) {
  for (const auto& e : links.intra)
    if (e.group_size >= group_size) return &e;
  return links.intra.empty() ? nullptr : &links.intra.back();
}

int64_t ToNs(double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e9)); }

}  // namespace

LinkParams LinkParams::FromProfile(const hardware::HardwareProfile& hw) {
  LinkParams p;
  p.intra = hw.intra_allreduce;
  p.inter_gbps_per_gpu = hw.nic_gbps_per_gpu;
  p.inter_latency_us = hw.inter_latency_us;
  p.p2p_gbps = hw.p2p_gbps;
  p.p2p_latency_us = hw.p2p_latency_us;
  return p;
}

double GroupBusBwGbps(const GroupSpan& group, const LinkParams& links) {
  double bw = std::numeric_limits<double>::infinity();
  const int local = group.ranks_per_node();
  if (local > 1) {
    if (const auto* e = IntraEntry(links, local)) bw = e->busbw_gbps * links.intra_bw_scale;
  }
  if (group.nodes > 1) bw = std::min(bw, links.inter_gbps_per_gpu * local);
  return bw;
}

double GroupLatencyUs(const GroupSpan& group, const LinkParams& links) {
  double us = 0;
  const int local = group.ranks_per_node();
  if (local > 1) {
    if (const auto* e = IntraEntry(links, local)) us += e->latency_us;
  }
  if (group.nodes > 1) us += 2.0 * (group.nodes - 1) * links.inter_latency_us;
  return us;
}

int64_t AllReduceNs(double bytes, const GroupSpan& group, const LinkParams& links) {
  const int n = group.ranks;
  if (n <= 1 || bytes <= 0) return 0;
  const double factor = 2.0 * (n - 1) / n;
  return ToNs(GroupLatencyUs(group, links) * 1e-6 +
              factor * bytes / (GroupBusBwGbps(group, links) * 1e9));
}

int64_t AllGatherNs(double total_bytes, const GroupSpan& group, const LinkParams& links) {
  const int n = group.ranks;
  if (n <= 1 || total_bytes <= 0) return 0;
  const double factor = static_cast<double>(n - 1) / n;
  return ToNs(GroupLatencyUs(group, links) * 1e-6 +
              factor * total_bytes / (GroupBusBwGbps(group, links) * 1e9));
}

int64_t PointToPointNs(double bytes, bool crosses_nodes, const LinkParams& links) {
  if (bytes <= 0) return 0;
  if (crosses_nodes)
    return ToNs(links.inter_latency_us * 1e-6 + bytes / (links.inter_gbps_per_gpu * 1e9));
  return ToNs(links.p2p_latency_us * 1e-6 + bytes / (links.p2p_gbps * 1e9));
}

}  // namespace ppsearch::cost
