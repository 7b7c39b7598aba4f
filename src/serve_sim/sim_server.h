#pragma once
// `ppsearch serve-sim`: a simulated SGLang server over real HTTP. Node 0
// serves SGLang's API (http_routes.cc) with timings from the realtime
// simulated engine; nodes >= 1 join node 0 at --dist-init-addr and serve
// SGLang's dummy /health. Faults from --fault-* are injected here.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "serve_sim/api_json.h"
#include "serve_sim/api_key.h"
#include "serve_sim/connection_guard.h"
#include "serve_sim/deployment.h"
#include "serve_sim/gpu_registry.h"
#include "serve_sim/http_front.h"
#include "serve_sim/node_group.h"
#include "serve_sim/realtime_engine.h"
#include "serve_sim/server_args.h"
#include "serve_sim/server_log.h"
#include "serve_sim/stream_pump.h"

namespace ppsearch::serve_sim {

enum class ServeOutcome {
  kStopped,        // asked to stop (signal): a clean exit
  kStartupFailed,  // port in use, node 0 unreachable: nothing served
  kFaultExit,      // --fault-exit-after reached
  kNodeLost,       // a peer node's connection dropped
  kDied,           // --fault-die-after-s/-requests: the caller should exit at once, without cleanup
};

struct ServeResult {
  ServeOutcome outcome = ServeOutcome::kStopped;
  std::string message;
};

class SimServer {
 public:
  SimServer(ServerArgs args, std::unique_ptr<Deployment> deployment, ServerLog* log);
  ~SimServer();

  // Serves until stopped, a fault exit or a lost node. `stop_requested` is
  // polled (set it from a signal handler). The GPU registration
  // (--gpu-state-dir) is released (or held, --fault-leak-gpu-s) before it returns.
  ServeResult Run(const std::atomic<bool>& stop_requested);

  // Thread-safe; the first call decides the outcome.
  void Shutdown(ServeOutcome outcome, const std::string& message);

 private:
  ServeResult RunLeader(const std::atomic<bool>& stop_requested);
  ServeResult RunFollower(const std::atomic<bool>& stop_requested);
  bool StartHttp();
  // Closes every connection (requests being answered are aborted).
  void StopHttp();
  // Puts this node's GPU memory into --gpu-state-dir (weights are loading).
  void RegisterGpus();
  // With served_mu_ held: `memory` into the registry unless released.
  void RegisterGpusLocked(const memory::MemoryPlan& memory);
  // The registration removed (or held until then); never written again.
  void ReleaseGpus(double until_unix_s);
  // Waits until shutdown or `pred()`; polls stop_requested. False on shutdown.
  template <typename Pred>
  bool WaitFor(const std::atomic<bool>& stop_requested, double max_s, Pred pred);
  // Serves until shutdown; with --fault-die-after-s, until that many seconds passed (kDied).
  void WaitUntilDeath(const std::atomic<bool>& stop_requested);
  // --fault-die-after-requests reached (node 0's count, told to the others).
  void DieAfterRequests();
  bool shutting_down() const { return shutting_down_.load(); }

  // http_routes.cc. Every handler runs on the HTTP loop's thread.
  using Call = std::shared_ptr<HttpCall>;
  // Routes a request (the --api-key check first) to its handler.
  void Dispatch(const Call& call);
  void HandleLeader(const Call& call);
  void HandleFollower(const Call& call);
  void HandleGenerate(const Call& call);
  void HandleFlushCache(const Call& call);
  void HandleServerInfo(const Call& call);
  void HandleGpuMemory(const Call& call);
  void HandleModels(const Call& call);
  void HandleModelInfo(const Call& call);
  // /v1/completions and /v1/chat/completions alike; `parse_error` non-empty: a 400.
  struct OpenAiRequest {
    std::string model;
    int64_t prompt_tokens = 0;
    int64_t max_tokens = 16;
    bool stream = false;
    bool include_usage = false;
  };
  void ServeOpenAi(const Call& call, const std::string& parse_error, const OpenAiRequest& c,
                   bool chat);
  // Answers with a stream of `render`'s events for a request of
  // `prompt_tokens` and at most `cap` output tokens; `guard` lives as long.
  void Stream(const Call& call, int64_t prompt_tokens, int64_t cap, StreamRenderer render,
              std::shared_ptr<void> guard);
  // Answers once the request finished: `answer(progress)` (or a 500 the engine gave).
  void AnswerWhenFinished(const Call& call, int64_t prompt_tokens, int64_t cap,
                          std::function<void(const RequestProgress&)> answer,
                          std::shared_ptr<void> guard);
  // pd_routes.cc. The engine's handle for a request of `prompt_tokens` and
  // at most `cap` output tokens: submitted at once by an aggregated server;
  // by a PD server once its decode server has shaken hands (prefill) or its
  // KV has come (decode). Null when the request was answered already (a
  // PD server's request without its bootstrap fields: 400).
  std::shared_ptr<RequestHandle> BeginRequest(const Call& call, int64_t prompt_tokens, int64_t cap);
  std::shared_ptr<RequestHandle> BeginPrefill(const PdFields& pd, int64_t prompt_tokens);
  std::shared_ptr<RequestHandle> BeginDecode(const PdFields& pd, int64_t prompt_tokens,
                                             int64_t cap);
  // The prefill server's bootstrap port: GET /kv/<room>/<decode GPUs> is a
  // decode server's handshake for a request, answered once its KV has
  // arrived there (or failed).
  void HandleBootstrap(const Call& call);
  // The handshake and the request are both in: the prompt runs.
  void StartPrefill(uint64_t room);
  std::string PdPrefix() const;  // the scope prefix of PD log lines
  // A prefill server's request finished: its KV goes over the link.
  void SendKv(uint64_t room, const RequestProgress& p);
  // A decode server's queue of requests waiting for their preallocation:
  // takes those that fit, in order, each then fetching its KV.
  struct PdWaiting {
    std::weak_ptr<RequestHandle> handle;
    PdFields pd;
    int64_t prompt_tokens = 0;
    int64_t cap = 0;
  };
  void Preallocate();
  void FetchKv(const std::shared_ptr<RequestHandle>& handle, const PdWaiting& w);
  // A request aborted by its client: a decode server stops waiting for its KV.
  void DropPdFetch(RequestHandle& handle);
  bool bootstrap_call(const Call& call) const;

  // Fault gate for request number `seq` (1-based): true when it answered already.
  bool InjectRequestFault(int seq, const Call& call);
  void OnRequestDone();
  void OnBatch(const sim::BatchLaunch& launch);
  void LogBatch(const sim::BatchLaunch& launch);
  // A prefill batch or a decode step larger than any before, node 0's own
  // or told by node 0: from now on this node's GPUs hold its activations.
  // Re-registers them; a stage of this node that no longer fits dies of it,
  // as SGLang's would.
  void OnServed(const sim::BatchShape* prefill, int64_t decode);
  // A line node 0 sent a node >= 1 (node_group.h).
  void OnLeaderLine(const std::string& line);
  memory::ServedBatches served() const;

  ServerArgs args_;
  std::unique_ptr<Deployment> d_;
  ServerLog* log_;
  SteadyClock clock_;
  std::unique_ptr<RealtimeEngine> engine_;
  std::unique_ptr<HttpFront> http_;
  // Cuts clients that hold a worker without sending a request
  // (connection_guard.h); made once the port is bound.
  std::unique_ptr<ConnectionGuard> guard_;
  // --api-key; asks for none without it.
  ApiKeyCheck api_key_;
  GpuRegistry gpu_registry_;
  NodeGroupLeader leader_;
  NodeGroupFollower follower_;
  BatchLogger batch_logger_;
  double startup_unix_s_ = 0;

  std::atomic<bool> ready_{false};
  std::atomic<bool> shutting_down_{false};
  std::atomic<int> request_seq_{0};
  std::atomic<int> requests_done_{0};
  std::atomic<int> active_requests_{0};
  std::atomic<bool> fault_log_written_{false};
  std::atomic<double> last_gen_throughput_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  ServeResult result_;
  // The largest batches the deployment has run (memory/served.h), and the
  // peak of this node's GPUs last registered, whole MiB.
  mutable std::mutex served_mu_;
  memory::ServedBatches served_;
  std::vector<double> registered_mib_;
  bool released_ = false;

  // A PD server's requests in flight between the two servers (loop thread
  // only): a prefill server's by bootstrap room, a decode server's fetches.
  struct PdRoom;
  std::map<uint64_t, std::shared_ptr<PdRoom>> pd_rooms_;
  double pd_link_free_s_ = 0;  // steady seconds: the prefill's link is busy until then
  int pd_transfers_ = 0;       // KV transfers started (--fault-kv-fail-after counts them)
  // A decode server's KV fetches by their own number, and each waiting
  // request's (a handle's address is taken only while it is alive).
  std::map<uint64_t, std::shared_ptr<Fetch>> pd_fetches_;
  std::map<RequestHandle*, uint64_t> pd_fetch_of_;
  uint64_t pd_fetch_seq_ = 0;
  std::deque<PdWaiting> pd_prealloc_;
  int64_t pd_held_tokens_ = 0;  // preallocated, not yet in the running batch
  int pd_active_ = 0;           // preallocated and not finished
};

}  // namespace ppsearch::serve_sim
