#pragma once
// Runs probe_script.py on every node of a spec's cluster through the spec's
// launcher, container and sudo rules, as `run` starts servers: first each
// node alone (GEMMs, DRAM, burst, launch floor, node-local collectives), one
// node after the other so none disturbs another's timings, then every node
// at once for the cross-node ping-pong. The I/O edge of the probe.

#include <atomic>
#include <ostream>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "probe/node_result.h"
#include "probe/request.h"
#include "spec/spec.h"

namespace ppsearch::probe {

struct ProbeOptions {
  std::string python = "python3";  // the interpreter on the node (in the container)
  double node_timeout_s = 1200;    // one node's phase, all of it
  int port = 0;                    // cross-node rendezvous on the first node
  bool cross = true;               // run the cross-node phase (with two nodes or more)
  // Set (by a signal handler) to stop: every node's running script is ended
  // (SIGTERM to its group, then SIGKILL) and RunProbe fails as interrupted.
  const std::atomic<bool>* interrupted = nullptr;
};

struct ProbeRun {
  std::vector<NodeResult> nodes;
  std::vector<CollectiveTiming> cross;  // the first node's cross-phase rows
  // Why the cross-node phase gave nothing ("" when it ran, or had nothing to run).
  std::string cross_failure;
};

// Every node's phase, then the cross phase. A node whose probe fails is an
// error naming the host and what it printed; a cross phase that fails is
// reported in ProbeRun::cross_failure (the first node that failed; its
// partners are stopped, not waited for) and keeps the nodes' figures. When
// `options.interrupted` is set, the node running is stopped and the error
// is ErrorKind::kIncomplete.
Result<ProbeRun> RunProbe(const spec::Spec& spec, launch::Launcher& launcher,
                          const ProbeRequest& request, const ProbeOptions& options,
                          std::ostream& progress);

}  // namespace ppsearch::probe
