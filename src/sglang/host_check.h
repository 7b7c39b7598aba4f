#pragma once
// Is a host ready for a new server? One definition of the checks, used twice:
// once for the whole cluster before a run's first sample (every host in
// parallel, with a short timeout, so a cluster that is not there stops the run
// in seconds instead of failing each of its samples), and before every sample
// (the engine's preflight).
//
//   reach       the launcher can run a command on the host (ssh: reachable,
//               the connection accepted, the host key accepted, authenticated)
//   nvidia-smi  present and answering
//   port        the server port (and node 0's --dist-init-addr port) free;
//               a busy port names the process holding it where the host says
//   gpu         no other process holds more than lifecycle.preflight_gpu_mib

#include <string>
#include <vector>

#include "launch/launcher.h"
#include "spec/spec.h"

namespace ppsearch::sglang {

struct HostProblem {
  std::string host;
  std::string check;   // "reach", "nvidia-smi", "port", "gpu"
  std::string detail;  // why, in words: "unreachable: ssh: connect to host ..."

  std::string Describe() const;  // "601: reach: unreachable: ..."
};

// The problems of `node`, in the order above; empty when it is ready. A host
// that cannot be reached is not checked further. `timeout_s` bounds each
// command on the host. Without `check_busy` the ports and GPUs are not
// checked: a resumed run's own leftover servers hold them until it stops them.
std::vector<HostProblem> CheckHost(launch::Launcher& launcher, const spec::Spec& spec, int node,
                                   double timeout_s, bool check_reach, bool check_busy = true);

// Every host of the cluster at once (one thread each); problems in host order.
std::vector<HostProblem> CheckCluster(launch::Launcher& launcher, const spec::Spec& spec,
                                      double timeout_s, bool check_busy = true);

// The holder of a listening port in `ss -Hltnp` output: "pid 1234 (python3)",
// "" when the output names none (another user's process, no ss).
std::string PortHolder(const std::string& ss_output);

}  // namespace ppsearch::sglang
