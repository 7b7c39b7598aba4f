// `ppsearch router-sim --pd-disaggregation --prefill URL [BOOTSTRAP_PORT]
// ... --decode URL ... [--policy P] [--host H] [--port P] [--log-file F]`
// (sglang_router.launch_router's command line, read by CLI11 so --help lists it):
// SGLang's router in PD mode in front of serve-sim's prefill and decode
// servers (serve_sim/pd_router.h), so a disaggregated deployment is
// rehearsed end to end on one machine. Runs until SIGTERM or SIGINT.
// Exit codes: 0 stopped; 2 bad arguments; 1 the port cannot be bound.

#include <atomic>
#include <csignal>
#include <memory>

#include "cli/command.h"
#include "serve_sim/pd_router.h"

namespace ppsearch::cli {
namespace {

std::atomic<bool> g_router_stop{false};

void OnRouterStopSignal(int) { g_router_stop = true; }

Result<ExitCode> RunRouterSim(const serve_sim::RouterFlags& flags) {
  auto args = serve_sim::RouterArgsFromFlags(flags);
  if (!args.ok()) return args.error();
  std::unique_ptr<serve_sim::ServerLog> log;
  if (args->log_file.empty()) {
    log = std::make_unique<serve_sim::ServerLog>();
  } else {
    auto opened = serve_sim::ServerLog::Open(args->log_file);
    if (!opened.ok()) return opened.error();
    log = std::move(opened.value());
  }
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGTERM, OnRouterStopSignal);
  std::signal(SIGINT, OnRouterStopSignal);
  serve_sim::PdRouter router(std::move(*args), log.get());
  if (Status st = router.Run(g_router_stop); !st.ok())
    return MakeError(st.error().message, ErrorKind::kIo);
  return kExitOk;
}

}  // namespace

Runner AddRouterSimCommand(CLI::App& app) {
  auto f = std::make_shared<serve_sim::RouterFlags>();
  CLI::App* c = app.add_subcommand(
      "router-sim",
      "Run SGLang's PD router (sglang_router.launch_router --pd-disaggregation) in front of "
      "serve-sim prefill and decode servers");
  // The router's own flags, as sglang_router.launch_router takes them.
  c->add_flag("--pd-disaggregation", f->pd_disaggregation,
              "PD mode, the only one router-sim plays (required)");
  c->add_option("--prefill", f->prefill,
                "a prefill server and its bootstrap port (default 8998, also for \"none\"); "
                "repeat for each")
      ->expected(1, 2)
      ->type_name("URL [BOOTSTRAP_PORT]");
  c->add_option("--decode", f->decode, "a decode server; repeat for each")->type_name("URL");
  c->add_option("--policy", f->policy,
                "round_robin: each pool's servers in turn; random, cache_aware, power_of_two, "
                "bucket, manual, consistent_hashing, prefix_hash: the server with the fewest "
                "requests in flight")
      ->capture_default_str();
  c->add_option("--prefill-policy", f->prefill_policy, "the prefill pool's, instead of --policy");
  c->add_option("--decode-policy", f->decode_policy, "the decode pool's, instead of --policy");
  c->add_option("--worker-startup-timeout-secs", f->worker_startup_timeout_secs,
                "accepted; router-sim does not wait for its servers (ppsearch's readiness check "
                "does)")
      ->type_name("SECONDS");
  c->add_option("--host", f->host, "HTTP host")->capture_default_str();
  c->add_option("--port", f->port, "HTTP port")->type_name("PORT")->capture_default_str();
  c->add_option("--log-file", f->log_file, "append the router's log here instead of stdout");
  // A flag of SGLang's router that router-sim does not play is named in its error.
  c->allow_extras();
  return [f, c] {
    f->unknown = c->remaining();
    return RunRouterSim(*f);
  };
}

}  // namespace ppsearch::cli
