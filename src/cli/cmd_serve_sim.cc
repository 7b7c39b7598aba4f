// `ppsearch serve-sim --model-path M --tp-size T --pp-size P ...`: a simulated
// SGLang server over real HTTP, for testing the harness without GPUs.
// SGLang flags it does not model are accepted and shown in server_args.
// Exit codes: 0 stopped by SIGTERM/SIGINT; 1 a fault exit (--fault-exit-after,
// --fault-exit-during-start, --fault-die-after-s, --fault-die-after-requests), a stage whose
// batches outgrow its GPU, a lost peer node or a port that cannot be bound; 2 bad arguments, fault
// plan, model, hardware profile, calibration or a layout SGLang rejects.

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string_view>
#include <thread>

#include "cli/command.h"
#include "serve_sim/deployment.h"
#include "serve_sim/fault_plan.h"
#include "serve_sim/sim_server.h"
#include "spec/engine_env.h"
#include "util/excerpt.h"
#include "util/files.h"

namespace ppsearch::cli {
namespace {

std::atomic<bool> g_stop_requested{false};
std::atomic<bool> g_ignore_sigterm{false};
std::atomic<int> g_sigterms_ignored{0};

// Async-signal-safe: only sets lock-free atomics the server polls.
void OnServeSimStopSignal(int sig) {
  if (sig == SIGTERM && g_ignore_sigterm) {
    ++g_sigterms_ignored;
  } else {
    g_stop_requested = true;
  }
}

void AddFaultOptions(CLI::App* c, serve_sim::FaultArgs& f) {
  c->add_option("--fault-exit-after", f.exit_after_requests,
                "exit (status 1) after N answered requests");
  c->add_flag("--fault-never-ready", f.never_ready, "/health stays 503");
  c->add_option("--fault-log", f.log,
                "print an oom|nccl|traceback failure into the log after request 1");
  c->add_option("--fault-http500", f.http500_fraction,
                "answer this seeded fraction of requests with 500");
  c->add_option("--fault-seed", f.seed, "seed of --fault-http500")->capture_default_str();
  c->add_option("--fault-hang-after", f.hang_after_requests, "request N+1 never answers");
  c->add_option("--fault-slow-start-s", f.slow_start_s, "extra wall seconds before ready");
  c->add_flag("--fault-exit-during-start", f.exit_during_start,
              "a model-loading traceback, then exit 1 before ready");
  c->add_option("--fault-die-after-s", f.die_after_s,
                "exit abruptly (status 1) S wall seconds after ready (node 0) or joined");
  c->add_option("--fault-die-after-requests", f.die_after_requests,
                "exit abruptly (status 1) once the deployment answered N requests (any node)");
  c->add_flag("--fault-ignore-sigterm", f.ignore_sigterm, "log and ignore SIGTERM");
  c->add_option("--fault-kv-fail-after", f.kv_fail_after,
                "a PD prefill server: the KV transfer after N good ones fails");
  c->add_option("--fault-leak-gpu-s", f.leak_gpu_s,
                "keep the --gpu-state-dir registration S seconds after exit");
}

// Adds the fault flags of FILE's line KEY; errors read "FILE:LINE: ...".
Status ApplyFaultPlan(const std::string& file, const std::string& key, serve_sim::FaultArgs& f) {
  if (key.empty()) return MakeError("--fault-plan needs --fault-key KEY");
  auto text = ReadFile(file);
  if (!text.ok())
    return MakeError(file + ":0: cannot read the fault plan: " + text.error().message);
  auto line = serve_sim::FindFaultPlanLine(*text, file, key);
  if (!line.ok()) return line.error();
  if (line->line == 0) return Status::Ok();
  CLI::App plan("fault plan");
  AddFaultOptions(&plan, f);
  // CLI11 reads a vector of arguments from the back.
  std::vector<std::string> args(line->words.rbegin(), line->words.rend());
  try {
    plan.parse(args);
  } catch (const CLI::ParseError& e) {
    return MakeError(fmt::format("{}:{}: {}", file, line->line, e.what()));
  }
  return Status::Ok();
}

struct ServeSimOptions {
  serve_sim::ServerArgs args;
  // Set in `args` only when given: each given value is checked
  // (serve_sim::ValidateServerArgs), never quietly replaced by a default.
  int64_t chunked_prefill_size = 0;
  int max_running_requests = 0;
  int pp_max_micro_batch_size = 0;
  double mem_fraction_static = 0;
  CLI::Option *chunked_flag = nullptr, *max_running_flag = nullptr, *micro_batch_flag = nullptr,
              *mem_fraction_flag = nullptr;
  std::string fault_plan;
  std::string fault_key;
};

// SGLang's PD timeouts (the transfer engine reads them from its
// environment), seconds; an unset variable keeps the default.
Status ReadPdTimeout(const char* name, double& seconds) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return Status::Ok();
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0))
    return MakeError(fmt::format("{}='{}': expected a positive number of seconds", name, text));
  seconds = v;
  return Status::Ok();
}

// The variables SGLang reads that the model follows, from this process's
// environment. A layer split SGLang cannot read stops its start (int() in
// get_pp_indices raises); the others are SGLang's EnvField values, which it
// replaces with their defaults after a warning (environ.py), as this does.
Status ReadModelledEnv(serve_sim::ServerArgs& a) {
  for (const char* name : spec::ModelledEnvNames()) {
    const char* text = std::getenv(name);
    if (text == nullptr) continue;
    if (const char* expected = spec::ModelledEnvExpected(name, text)) {
      const std::string what = fmt::format("{}='{}': expected {}", name, Excerpt(text), expected);
      if (std::string_view(name) == spec::kPpLayerPartitionEnv) return MakeError(what);
      std::cerr << "warning: " << what << "; running with SGLang's default\n";
      continue;
    }
    a.engine_env.emplace_back(name, text);
  }
  return Status::Ok();
}

Result<ExitCode> RunServeSim(ServeSimOptions o, const std::vector<std::string>& extras) {
  serve_sim::ServerArgs& a = o.args;
  PPS_RETURN_IF_ERROR(ReadModelledEnv(a));
  PPS_RETURN_IF_ERROR(
      ReadPdTimeout("SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT", a.bootstrap_timeout_s));
  PPS_RETURN_IF_ERROR(ReadPdTimeout("SGLANG_DISAGGREGATION_WAITING_TIMEOUT", a.waiting_timeout_s));
  auto extra_flags = serve_sim::ParseExtraFlags(extras);
  if (!extra_flags.ok()) return extra_flags.error();
  a.extra_flags = std::move(*extra_flags);
  if (!o.fault_plan.empty())
    PPS_RETURN_IF_ERROR(ApplyFaultPlan(o.fault_plan, o.fault_key, a.fault));
  if (o.chunked_flag->count() > 0) a.chunked_prefill_size = o.chunked_prefill_size;
  if (o.max_running_flag->count() > 0) a.max_running_requests = o.max_running_requests;
  if (o.micro_batch_flag->count() > 0) a.pp_max_micro_batch_size = o.pp_max_micro_batch_size;
  if (o.mem_fraction_flag->count() > 0) a.mem_fraction_static = o.mem_fraction_static;
  PPS_RETURN_IF_ERROR(serve_sim::ValidateServerArgs(a));
  auto deployment = serve_sim::BuildDeployment(a);
  if (!deployment.ok()) return deployment.error();
  std::unique_ptr<serve_sim::ServerLog> log;
  if (a.log_file.empty()) {
    log = std::make_unique<serve_sim::ServerLog>();
  } else {
    auto opened = serve_sim::ServerLog::Open(a.log_file);
    if (!opened.ok()) return opened.error();
    log = std::move(opened.value());
  }
  std::signal(SIGPIPE, SIG_IGN);
  g_ignore_sigterm = a.fault.ignore_sigterm;
  std::signal(SIGTERM, OnServeSimStopSignal);
  std::signal(SIGINT, OnServeSimStopSignal);
  std::atomic<bool> served{false};
  std::thread sigterm_logger;
  if (a.fault.ignore_sigterm) {
    sigterm_logger = std::thread([&] {
      int logged = 0;
      while (!served) {
        for (; logged < g_sigterms_ignored; ++logged)
          log->Info("Received SIGTERM; ignoring it (--fault-ignore-sigterm).");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }
  auto sim = std::make_unique<serve_sim::SimServer>(a, std::move(deployment.value()), log.get());
  const serve_sim::ServeResult r = sim->Run(g_stop_requested);
  served = true;
  if (sigterm_logger.joinable()) sigterm_logger.join();
  if (r.outcome == serve_sim::ServeOutcome::kDied) {
    // Abrupt (a died node): the server and its log stay alive, and the
    // process ends without unwinding (main, std::_Exit) once the outcome is
    // reported.
    static_cast<void>(sim.release());
    static_cast<void>(log.release());
    EndProcessWithoutUnwinding();
  }
  // A fault exit, a lost peer node or a port that cannot be bound: exit 1.
  if (r.outcome != serve_sim::ServeOutcome::kStopped) return MakeError(r.message, ErrorKind::kIo);
  return kExitOk;
}

}  // namespace

Runner AddServeSimCommand(CLI::App& app) {
  auto o = std::make_shared<ServeSimOptions>();
  serve_sim::ServerArgs& a = o->args;
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
  o->chunked_flag = c->add_option("--chunked-prefill-size", o->chunked_prefill_size,
                                  "chunk size in tokens (-1 disables)");
  o->max_running_flag =
      c->add_option("--max-running-requests", o->max_running_requests, "request pool size");
  o->micro_batch_flag = c->add_option("--pp-max-micro-batch-size", o->pp_max_micro_batch_size,
                                      "requests per micro-batch");
  o->mem_fraction_flag =
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
  c->add_option("--gpu-state-dir", a.gpu_state_dir,
                "register this node's GPU memory here for `ppsearch smi-sim`");
  c->add_option("--disaggregation-mode", a.disaggregation_mode,
                "null, or a PD server: prefill | decode")
      ->capture_default_str();
  c->add_option("--disaggregation-bootstrap-port", a.disaggregation_bootstrap_port,
                "a prefill server's bootstrap port (decode servers fetch the KV there)")
      ->capture_default_str();
  c->add_option("--disaggregation-transfer-backend", a.disaggregation_transfer_backend,
                "mooncake | nixl (the transfer is simulated either way)")
      ->capture_default_str();
  c->add_option("--disaggregation-ib-device", a.disaggregation_ib_device,
                "RDMA devices (shown in server_args; nothing uses them here)");
  AddFaultOptions(c, a.fault);
  c->add_option("--fault-plan", o->fault_plan,
                "file of `KEY --fault-flag [value] ...` lines; the --fault-key line applies");
  c->add_option("--fault-key", o->fault_key, "this node's key in --fault-plan");
  // SGLang flags serve-sim does not model are kept for server_args.
  c->allow_extras();
  return [o, c] { return RunServeSim(*o, c->remaining()); };
}

}  // namespace ppsearch::cli
