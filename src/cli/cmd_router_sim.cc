// `ppsearch router-sim --pd-disaggregation --prefill URL [BOOTSTRAP_PORT]
// ... --decode URL ... [--policy P] [--host H] [--port P] [--log-file F]`:
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

Result<ExitCode> RunRouterSim(const std::vector<std::string>& words) {
  auto args = serve_sim::ParseRouterArgs(words);
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
  CLI::App* c = app.add_subcommand(
      "router-sim",
      "Run SGLang's PD router (sglang_router.launch_router --pd-disaggregation) in front of "
      "serve-sim prefill and decode servers");
  // Its flags are the router's own, read in order (--prefill takes one or two values).
  c->allow_extras();
  c->prefix_command();
  return [c] { return RunRouterSim(c->remaining()); };
}

}  // namespace ppsearch::cli
