#pragma once
// The multi-node rendezvous of a serve-sim deployment, standing in for
// torch.distributed's TCP store at --dist-init-addr: node 0 listens there,
// every node k >= 1 connects and says "PPSEARCH-JOIN k nnodes", and each
// keeps the connection open for the life of the server. A dropped
// connection is how either side learns that the other died (as NCCL would
// report a remote process exiting). A node may ask, as it joins, to be told
// when node 0 has answered N requests ("PPSEARCH-JOIN k nnodes N"); node 0
// then sends it one line, "ANSWERED N" (--fault-die-after-requests). Node 0
// tells every node of each batch no earlier one covers, "SERVED prefill
// TOKENS LOGIT_ROWS" or "SERVED decode SEQUENCES": the other stages'
// activations follow node 0's batches (memory/served.h), as their GPU
// memory does in a real deployment.

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "util/result.h"

namespace ppsearch::serve_sim {

class NodeGroupLeader {
 public:
  ~NodeGroupLeader();
  // Binds and listens; `on_lost(rank)` is called (on a monitor thread) when a
  // joined node's connection drops.
  Status Listen(const std::string& host, int port, int nnodes, std::function<void(int)> on_lost);
  int joined() const;
  bool all_joined() const { return joined() == nnodes_ - 1; }
  // Node 0 has answered `answered` requests: tells the nodes that asked for it.
  void Answered(int answered);
  // Sends `line` (no newline) to every joined node without waiting: a node
  // whose socket buffer is full misses it.
  void Tell(const std::string& line);
  void Close();

 private:
  void AcceptLoop();
  void Monitor(int fd, int rank);

  int listen_fd_ = -1;
  int nnodes_ = 1;
  std::function<void(int)> on_lost_;
  mutable std::mutex mu_;
  std::set<int> ranks_;
  std::vector<int> fds_;
  std::vector<std::pair<int, int>> notify_;  // (answered count, fd) asked for
  std::vector<std::thread> threads_;
  std::atomic<bool> closing_{false};
};

class NodeGroupFollower {
 public:
  ~NodeGroupFollower();
  // Connects to node 0 (retrying until `timeout_s`, as nodes start in any
  // order) and joins as `rank`, asking with `notify_at` > 0 to be told when
  // node 0 has answered that many requests; then calls `on_line(line)` at
  // each line node 0 sends (without its newline) and `on_lost()` if the
  // connection drops.
  Status Join(const std::string& host, int port, int rank, int nnodes, double timeout_s,
              std::function<void()> on_lost, int notify_at = 0,
              std::function<void(const std::string&)> on_line = {});
  void Close();

 private:
  int fd_ = -1;
  std::thread monitor_;
  std::atomic<bool> closing_{false};
};

}  // namespace ppsearch::serve_sim
