#pragma once
// `ppsearch router-sim`: SGLang's router in PD mode (`python3 -m
// sglang_router.launch_router --pd-disaggregation --prefill URL
// BOOTSTRAP_PORT --decode URL --policy P --host H --port P`), played over
// real HTTP so that a disaggregated deployment of serve-sim servers
// (pd_routes.cc) runs end to end: each request goes to one prefill server
// and one decode server at once, with bootstrap_host, bootstrap_port (the
// prefill server's) and a fresh bootstrap_room added to its JSON body; the
// client gets the decode server's answer, streamed as it comes. Its own
// routes: /health and /health_generate (200 while it runs); /flush_cache
// (every server flushes); GET
// /server_info, /get_server_info, /model_info, /get_model_info and
// /v1/models are passed to the first prefill server.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "serve_sim/http_front.h"
#include "serve_sim/server_log.h"
#include "util/result.h"

namespace ppsearch::serve_sim {

struct RouterWorker {
  std::string url;  // as given: http://host:port
  std::string host;
  int port = 0;
  int bootstrap_port = 0;  // prefill servers: the port its decode servers fetch the KV from
  int in_flight = 0;       // the router's own count (loop thread)
};

struct RouterArgs {
  std::vector<RouterWorker> prefill;
  std::vector<RouterWorker> decode;
  // round_robin: each pool's servers in turn; any other policy the router
  // knows (cache_aware, its default, random, power_of_two, ...): the server
  // with the fewest requests in flight (prompts that share no prefix give
  // cache_aware nothing else to go by), as the simulator's router
  // (sim/disaggregated_engine.h).
  std::string policy = "cache_aware";
  // --prefill-policy / --decode-policy: a pool's own, instead of --policy.
  std::string prefill_policy, decode_policy;
  // --worker-startup-timeout-secs: accepted; router-sim does not wait for
  // its servers (ppsearch's readiness check does).
  int worker_startup_timeout_s = 1800;
  std::string host = "127.0.0.1";
  int port = 30000;
  std::string log_file;  // empty: stdout
  uint64_t seed = 0;     // of the bootstrap rooms; 0: from the clock
  double request_timeout_s = 1800;
};

// The router's command line as `ppsearch router-sim` reads it (CLI11 in
// cli/cmd_router_sim.cc, which lists these in --help), before it is checked.
struct RouterFlags {
  bool pd_disaggregation = false;
  // Each --prefill: a URL, then an optional bootstrap port or "none" (SGLang's default, 8998).
  std::vector<std::vector<std::string>> prefill;
  std::vector<std::string> decode;
  std::string policy = "cache_aware", prefill_policy, decode_policy;
  std::string worker_startup_timeout_secs;  // "" when not given
  std::string host = "127.0.0.1";
  std::string port = "30000";
  std::string log_file;
  std::vector<std::string> unknown;  // words no option took, in order
};

// Checks the router's command line. Errors name the flag and value: a flag
// it does not know, a URL that is not http://host:port, a port or policy it
// cannot take, no --pd-disaggregation (it plays the PD router only), no
// prefill or no decode server.
Result<RouterArgs> RouterArgsFromFlags(const RouterFlags& flags);

// SGLang's PD router's first log line: where it listens, the mode with its
// servers, the policy.
std::string RouterStartLine(const RouterArgs& args);

class PdRouter {
 public:
  PdRouter(RouterArgs args, ServerLog* log);
  ~PdRouter();

  // Listens and serves until `stop_requested` (polled); an error when the
  // port cannot be bound.
  Status Run(const std::atomic<bool>& stop_requested);

 private:
  using Call = std::shared_ptr<HttpCall>;
  void Handle(const Call& call);
  void Route(const Call& call);
  void PassGet(const Call& call);
  void FlushAll(const Call& call);
  // The server a request goes to, by the policy; counted in flight.
  RouterWorker& Pick(std::vector<RouterWorker>& pool, const std::string& policy, size_t& next);

  RouterArgs args_;
  ServerLog* log_;
  std::unique_ptr<HttpFront> http_;
  size_t next_prefill_ = 0;
  size_t next_decode_ = 0;
  uint64_t room_state_ = 0;
};

}  // namespace ppsearch::serve_sim
