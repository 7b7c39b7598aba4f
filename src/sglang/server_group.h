#pragma once
// The servers of one layout, one per node, while they run: started through
// the launcher with their state files written, watched for an early exit,
// judged ready on node 0 (`/health_generate`, then one 1-token request), and
// stopped on every node (SIGTERM to each process tree, SIGKILL after the
// grace period, the cleanup command, state files removed).

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/log_scan.h"
#include "evidence/evidence.h"
#include "launch/launcher.h"
#include "sglang/commands.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::sglang {

// One process the group starts: a node's server, or a disaggregated
// deployment's router.
struct ServerSlot {
  int node = 0;      // the cluster's host it runs on (the launcher's node)
  std::string name;  // in messages: "node 1 (n1)", "the router on n0"
  std::string host;  // for its tag and state file
  NodeCommand command;
  std::string log_path;       // live/: streamed while it runs
  std::string kept_log_path;  // service/: what the sample keeps
  bool router = false;
};

// What readiness waits for, in order: `url` answers /health (and, with
// `generate`, /health_generate and a 1-token request).
struct ReadyProbe {
  std::string url;
  bool generate = true;
};

class ServerGroup {
 public:
  ServerGroup(const spec::Spec& spec, launch::Launcher& launcher, const evidence::RunPaths& paths)
      : spec_(spec), launcher_(launcher), paths_(paths) {}
  ~ServerGroup() { Stop(); }

  // Starts every node's server for `sample` of `run_id`, logs streamed into
  // live/<sample>/<host>.log. An error (with the servers already started
  // stopped again) when one cannot be started.
  Status Start(const evidence::SampleId& sample, const std::string& run_id);
  // Starts a disaggregated deployment's sample (deployment_servers.cc):
  // every pool's servers, each pool planned as its own layout on its hosts
  // (plan::PoolSpecOf), then the router on the first prefill node. Ready
  // once every server answers /health and a 1-token request succeeds
  // through the router (a PD server cannot generate alone).
  Status StartDeployment(const evidence::SampleId& sample, const std::string& run_id);
  // Starts `slots` (a disaggregated deployment's servers and router) and
  // makes WaitReady wait for `probes`. `layout` is what layout() reports.
  Status StartSlots(const spec::LayoutSpec& layout, const evidence::SampleId& sample,
                    const std::string& run_id, std::vector<ServerSlot> slots,
                    std::vector<ReadyProbe> probes);

  // Waits until node 0 (with several instances, each instance's first node)
  // answers /health_generate with 200 and a 1-token request succeeds,
  // bounded by lifecycle.start_timeout_s. The error says
  // why: a node exited (with its status and the tail of its log) or time ran out.
  // Once `stop` is set (SIGINT/SIGTERM) it gives up within a fraction of a
  // second, probes in flight included, with an error that says so; the
  // servers keep running for the caller to stop.
  Status WaitReady(const std::atomic<bool>* stop = nullptr);

  // The first node whose server has exited, as "node 2 (n2) exited with status 1".
  std::optional<std::string> FirstExited();

  // Scans each node's log from `offsets` (bytes; the sample's start) on.
  void ScanLogsFrom(const std::vector<uintmax_t>& offsets);
  // The most severe line (the earliest of equals) on any node's log, since
  // ScanLogsFrom, that means a rank cannot go on (analysis::EndsTheServer:
  // OOM, NCCL failure, CUDA error, SGLang's watchdog, a fatal signal, ...),
  // as "node 1 (n1) log line 12: Fatal Python error: Segmentation fault".
  // Such a process may stay up (a segfaulting scheduler sends its parent no
  // SIGQUIT), so this is how a sample learns of it before its requests time
  // out. Reads only the whole lines written since the last call; a crash's
  // lines may take more than one call to arrive.
  std::optional<std::string> FatalLine();

  // A node that exited; else, once a fatal line was seen, the node that exits
  // within two seconds of it, else the line. A peer's line often reports a
  // node that is exiting ("Node 2 lost"), and the exit names the node at
  // fault better than the peer that noticed.
  std::optional<std::string> ExitedElseFatal();

  // Stops every server: SIGTERM, then SIGKILL after lifecycle.stop_grace_s,
  // or as soon as `kill_now` is set (a second interrupt). Returns notes for
  // the record (servers that needed SIGKILL); never fails: what could not be
  // stopped keeps its state file.
  std::vector<std::string> Stop(const std::atomic<bool>* kill_now = nullptr);

  bool running() const { return !servers_.empty(); }
  const spec::LayoutSpec& layout() const { return layout_; }
  // What the last Start started; the log functions below index them (an
  // aggregated layout's slot n is node n).
  const std::vector<ServerSlot>& slots() const { return slots_; }
  // The URL of readiness probe `i` (a deployment's first: its first prefill server).
  std::string ProbeUrl(size_t i) const { return i < probes_.size() ? probes_[i].url : ""; }

  // Each slot's log from `offsets` (bytes) to its end now, and the current ends.
  std::vector<uintmax_t> LogEnds() const;
  std::string LogSince(size_t node, uintmax_t offset) const;
  // The last `lines` lines of a node's log, for error messages.
  std::string LogTail(size_t node, int lines) const;

 private:
  struct Server {
    int slot = 0;
    std::unique_ptr<launch::ServerProcess> process;
    launch::ServerRecord record;
    std::string log_path;
    std::string kept_log_path;  // where the sample keeps the log (service/): live/ goes
    std::optional<launch::ExitInfo> exit;
  };

  // How far the fatal-line scan has read one node's log.
  struct LogScan {
    uintmax_t offset = 0;  // bytes: the next unread line starts here
    int lines = 0;         // whole lines read since ScanLogsFrom
  };

  std::string SlotName(size_t slot) const;
  // A node's streamed log opened for reading, never through a link under
  // the run directory; none when it cannot be opened so.
  std::optional<int> OpenLog(size_t node) const;

  const spec::Spec& spec_;
  launch::Launcher& launcher_;
  const evidence::RunPaths& paths_;
  spec::LayoutSpec layout_;
  std::vector<Server> servers_;
  std::vector<ServerSlot> slots_;  // kept after Stop until the next Start
  std::vector<ReadyProbe> probes_;
  std::vector<std::string> log_paths_;         // per slot, kept after Stop until the next Start
  std::vector<LogScan> scans_;                 // per node
  std::optional<analysis::LogFinding> fatal_;  // file: the node's name
};

}  // namespace ppsearch::sglang
