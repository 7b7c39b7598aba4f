// `ppsearch serve-sim --model-path M --tp-size T --pp-size P ...`: a simulated
// SGLang server over real HTTP, for testing the harness without GPUs.
// Exit codes: 0 stopped by SIGTERM/SIGINT; 1 a fault exit (--fault-exit-after),
// a lost peer node or a port that cannot be bound; 2 bad arguments, model,
// hardware profile, calibration or a layout SGLang rejects.

#include <csignal>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "server/deployment.h"
#include "server/sim_server.h"

namespace ppsearch::cli {
namespace {

std::atomic<bool> g_stop_requested{false};

// Async-signal-safe: only sets a lock-free atomic the server polls.
void OnServeSimStopSignal(int) { g_stop_requested = true; }

struct ServeSimOptions {
  server::ServerArgs args;
  int64_t chunked_prefill_size = 0;  // 0: unset
  int max_running_requests = 0;
  int pp_max_micro_batch_size = 0;
  double mem_fraction_static = 0;
};

int RunServeSim(ServeSimOptions o) {
  server::ServerArgs& a = o.args;
  if (o.chunked_prefill_size != 0) a.chunked_prefill_size = o.chunked_prefill_size;
  if (o.max_running_requests > 0) a.max_running_requests = o.max_running_requests;
  if (o.pp_max_micro_batch_size > 0) a.pp_max_micro_batch_size = o.pp_max_micro_batch_size;
  if (o.mem_fraction_static > 0) a.mem_fraction_static = o.mem_fraction_static;
  if (Status st = server::ValidateServerArgs(a); !st.ok()) {
    std::cerr << "error: " << st.error().message << "\n";
    return kExitConfigError;
  }
  auto deployment = server::BuildDeployment(a);
  if (!deployment.ok()) {
    std::cerr << "error: " << deployment.error().message << "\n";
    return kExitConfigError;
  }
  std::unique_ptr<server::ServerLog> log;
  if (a.log_file.empty()) {
    log = std::make_unique<server::ServerLog>();
  } else {
    auto opened = server::ServerLog::Open(a.log_file);
    if (!opened.ok()) {
      std::cerr << "error: " << opened.error().message << "\n";
      return kExitConfigError;
    }
    log = std::move(opened.value());
  }
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGTERM, OnServeSimStopSignal);
  std::signal(SIGINT, OnServeSimStopSignal);
  server::SimServer sim(a, std::move(deployment.value()), log.get());
  const server::ServeResult r = sim.Run(g_stop_requested);
  if (r.outcome == server::ServeOutcome::kStopped) return kExitOk;
  std::cerr << "error: " << r.message << "\n";
  return kExitFailure;
}

}  // namespace

void AddServeSimCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<ServeSimOptions>();
  server::ServerArgs& a = o->args;
  CLI::App* c = app.add_subcommand(
      "serve-sim",
      "Run a simulated SGLang server over HTTP (timings from the simulator), for harness tests");
  c->add_option("--model-path", a.model_path,
                "config.json or model directory (as SGLang's --model-path)");
  c->add_option("--model-config", a.model_config,
                "config.json to simulate when --model-path has none");
  c->add_option("--tp-size,--tensor-parallel-size", a.tp_size, "tensor parallel size")
      ->capture_default_str();
  c->add_option("--pp-size,--pipeline-parallel-size", a.pp_size, "pipeline parallel size")
      ->capture_default_str();
  c->add_option("--ep-size,--expert-parallel-size", a.ep_size, "expert parallel size")
      ->capture_default_str();
  c->add_option("--chunked-prefill-size", o->chunked_prefill_size,
                "chunk size in tokens (-1 disables)");
  c->add_option("--max-running-requests", o->max_running_requests, "request pool size");
  c->add_option("--pp-max-micro-batch-size", o->pp_max_micro_batch_size,
                "requests per micro-batch");
  c->add_option("--mem-fraction-static", o->mem_fraction_static, "static memory fraction");
  c->add_option("--nnodes", a.nnodes, "number of nodes")->capture_default_str();
  c->add_option("--node-rank", a.node_rank, "this node's rank")->capture_default_str();
  c->add_option("--dist-init-addr,--nccl-init-addr", a.dist_init_addr,
                "host:port node 0 listens on");
  c->add_option("--host", a.host, "HTTP host")->capture_default_str();
  c->add_option("--port", a.port, "HTTP port")->capture_default_str();
  c->add_option("--hardware", a.hardware, "hardware profile name or .toml")->capture_default_str();
  c->add_option("--calibration", a.calibration_path, "calibration JSON (ppsearch calibrate -o)");
  c->add_option("--time-scale", a.time_scale, "simulated seconds per wall second")
      ->capture_default_str();
  c->add_option("--log-file", a.log_file, "append the server log here instead of stdout");
  c->add_option("--decode-log-interval", a.decode_log_interval, "decode batches per log line")
      ->capture_default_str();
  c->add_option("--fault-exit-after", a.fault.exit_after_requests,
                "exit (status 1) after N answered requests");
  c->add_flag("--fault-never-ready", a.fault.never_ready, "/health stays 503");
  c->add_option("--fault-log", a.fault.log,
                "print an oom|nccl|traceback failure into the log after request 1");
  c->add_option("--fault-http500", a.fault.http500_fraction,
                "answer this seeded fraction of requests with 500");
  c->add_option("--fault-seed", a.fault.seed, "seed of --fault-http500")->capture_default_str();
  c->add_option("--fault-hang-after", a.fault.hang_after_requests, "request N+1 never answers");
  c->add_option("--fault-slow-start-s", a.fault.slow_start_s, "extra wall seconds before ready");
  c->callback([o, &exit_code] { exit_code = RunServeSim(*o); });
}

}  // namespace ppsearch::cli
