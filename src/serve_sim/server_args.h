#pragma once
// The launch arguments of `ppsearch serve-sim`: the SGLang server flags that
// matter for a layout, the simulation's own knobs and the fault injectors.

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace ppsearch::serve_sim {

struct FaultArgs {
  int exit_after_requests = 0;  // > 0: exit (status 1) after answering this many requests
  bool never_ready = false;     // /health stays 503 forever
  std::string log;              // "", "oom", "nccl", "traceback": printed after the first request
  double http500_fraction = 0;  // seeded fraction of requests answered with HTTP 500
  uint64_t seed = 1;            // for http500_fraction
  int hang_after_requests = 0;  // > 0: request N+1 never answers
  double slow_start_s = 0;      // extra wall seconds before the server is ready
  bool exit_during_start = false;  // a model-loading traceback, exit 1, never ready
  double die_after_s = 0;          // > 0: exit 1 this many wall seconds after ready/joined
  // > 0: exit 1 abruptly once the deployment (node 0) has answered this many
  // requests; node 0 tells a node >= 1 over --dist-init-addr.
  int die_after_requests = 0;
  bool ignore_sigterm = false;  // SIGTERM is logged and ignored
  double leak_gpu_s = 0;        // GPU registration kept this long after exit
  // > 0 on a PD prefill server: the KV transfer of its request N+1 fails
  // (logged as SGLang logs one; its decode server is told, and fails it).
  int kv_fail_after = 0;
};

// A launch flag serve-sim does not model, kept as given: "--name value" or a
// switch "--name" (no value).
struct ExtraFlag {
  std::string name;  // without the leading "--", e.g. "moe-runner-backend"
  std::optional<std::string> value;
};

// SGLang flags serve-sim does not model, from the words CLI parsing left
// over: a word after "--name" that does not start with "--" is its value,
// otherwise "--name" is a switch; "--name=value" is one word. Errors name a
// word that is not a flag.
Result<std::vector<ExtraFlag>> ParseExtraFlags(const std::vector<std::string>& words);

struct ServerArgs {
  std::string model_path;    // what --model-path said (config.json or a model directory)
  std::string model_config;  // --model-config: config used when model_path has none
  int tp_size = 1;
  int pp_size = 1;
  int ep_size = 1;
  std::optional<int64_t> chunked_prefill_size;
  std::optional<int> max_running_requests;
  std::optional<int> pp_max_micro_batch_size;
  std::optional<double> mem_fraction_static;
  int nnodes = 1;
  int node_rank = 0;
  std::string dist_init_addr;  // host:port that node 0 listens on when nnodes > 1
  std::string host = "127.0.0.1";
  int port = 30000;
  std::string hardware = "rtx-6000d";
  std::string calibration_path;
  double time_scale = 1.0;  // simulated seconds per wall second
  std::string log_file;     // empty: stdout
  int decode_log_interval = 40;
  std::string gpu_state_dir;           // register this node's GPU memory here (smi-sim)
  std::vector<ExtraFlag> extra_flags;  // in the order given
  // The environment variables SGLang reads that the model follows
  // (spec::ModelledEnvNames()), as this process was started with them: a run's
  // [engine.env] and [engine.pp_layer_partition] reach a simulated server
  // as they reach SGLang.
  std::vector<std::pair<std::string, std::string>> engine_env;
  FaultArgs fault;

  // Prefill-decode disaggregation (SGLang's --disaggregation-* flags): a
  // prefill server runs prompts and hands their KV to decode servers over
  // its bootstrap port; a decode server takes it and decodes (pd_routes.cc).
  std::string disaggregation_mode = "null";  // null | prefill | decode
  int disaggregation_bootstrap_port = 8998;
  std::string disaggregation_transfer_backend = "mooncake";
  std::string disaggregation_ib_device;  // accepted and shown; no RDMA here
  // SGLang's SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT (prefill: how long a
  // request waits for its decode server's handshake) and
  // SGLANG_DISAGGREGATION_WAITING_TIMEOUT (decode: how long it waits for
  // the KV), wall seconds, 300 each unless the environment says otherwise.
  double bootstrap_timeout_s = 300;
  double waiting_timeout_s = 300;

  // The config.json (or directory) to load: model_config when given, else model_path.
  const std::string& ModelSource() const {
    return model_config.empty() ? model_path : model_config;
  }
};

// Checks the combinations SGLang and serve-sim reject; the message names the flag.
Status ValidateServerArgs(const ServerArgs& args);

// host and port of --dist-init-addr ("10.0.0.1:25000").
Result<std::pair<std::string, int>> SplitHostPort(const std::string& addr);

// SGLang's `server_args=ServerArgs(model_path='...', tp_size=8, ...)` text,
// resolved values (`pp_max_micro_batch_size` as given; None when unset).
std::string ServerArgsRepr(const ServerArgs& args);

// The same fields as JSON (keys as SGLang's dataclass names them).
nlohmann::json ServerArgsJson(const ServerArgs& args);

}  // namespace ppsearch::serve_sim
