#include "nsys/comm_kernels.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

namespace ppsearch::nsys {

const char* CollectiveName(Collective kind) {
  switch (kind) {
    case Collective::kAllReduce:
      return "AllReduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    case Collective::kSendRecv:
      return "SendRecv";
    case Collective::kAllToAll:
      return "AllToAll";
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kOther:
      return "Other";
  }
  return "Other";
}

std::optional<Collective> ClassifyKernel(std::string_view name) {
  // Demangled names may carry a return type or namespace before the kernel.
  const size_t nccl = name.find("nccl");
  if (nccl != std::string_view::npos) {
    const std::string_view rest = name.substr(nccl + 4);
    // Longer names first: "ReduceScatter" and "AllReduce" contain "Reduce".
    static constexpr std::pair<const char*, Collective> kOps[] = {
        {"ReduceScatter", Collective::kReduceScatter},
        {"AllReduce", Collective::kAllReduce},
        {"AllGather", Collective::kAllGather},
        {"AllToAll", Collective::kAllToAll},
        {"SendRecv", Collective::kSendRecv},
        {"Broadcast", Collective::kBroadcast},
        {"Reduce", Collective::kReduce},
        // Pre-2.7 NCCL launched sends and receives as separate kernels.
        {"Send", Collective::kSendRecv},
        {"Recv", Collective::kSendRecv},
    };
    for (const auto& [op, kind] : kOps)
      if (rest.find(op) != std::string_view::npos) return kind;
    // NCCL's host-side helpers never run on the GPU; any kernel named nccl* is its work.
    return Collective::kOther;
  }
  if (name.find("cross_device_reduce") != std::string_view::npos) return Collective::kAllReduce;
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  for (const char* part : {"allreduce_fusion", "shotallreduce", "lamport"})
    if (lower.find(part) != std::string::npos) return Collective::kAllReduce;
  if (name.find("deep_ep") != std::string_view::npos &&
      (name.find("dispatch") != std::string_view::npos ||
       name.find("combine") != std::string_view::npos))
    return Collective::kAllToAll;
  return std::nullopt;
}

}  // namespace ppsearch::nsys
