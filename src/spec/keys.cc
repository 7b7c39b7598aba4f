#include "spec/keys.h"

#include <algorithm>

namespace ppsearch::spec {

const KeyList kSpecSections = {"experiment", "cluster",  "engine",   "sweep",
                               "workload",   "baseline", "decision", "lifecycle",
                               "sim",        "profile",  "adaptive", "search"};

const KeyList kExperimentKeys = {"name", "results_dir"};
const KeyList kClusterKeys = {
    "hosts", "gpus_per_node", "hardware",    "launcher",       "ssh",
    "slurm", "sudo",          "server_port", "dist_init_port", "nvidia_smi"};
const KeyList kHostTableKeys = {"name", "address", "server_port"};
const KeyList kSshKeys = {"user", "port", "key", "options", "config"};
const KeyList kSshHostKeys = {"address", "user", "port", "key"};
const KeyList kSlurmKeys = {"srun_args", "sbatch_args", "partition", "account", "time_limit"};
const KeyList kSudoKeys = {"steps", "password_file"};
const KeyList kSudoSteps = {"container", "stop"};
const KeyList kEngineKeys = {"kind",           "command",           "image",      "container",
                             "container_args", "secret_env",        "model_path", "model_config",
                             "version",        "patches",           "args",       "env",
                             "disaggregation", "pp_layer_partition"};
const KeyList kEngineDisaggregationKeys = {"transfer_backend", "ib_device",   "bootstrap_port",
                                           "router_policy",    "router_port", "router_command"};
const KeyList kSweepKeys = {"pp",          "tp",      "ep",        "dp",      "layouts",
                            "concurrency", "repeats", "instances", "prefill", "decode"};
const KeyList kPoolKeys = {"hosts", "pp", "tp", "ep", "dp", "instances", "args"};
const KeyList kLayoutKeys = {"pp", "tp", "ep", "dp", "instances"};
const KeyList kWorkloadKeys = {"input_tokens",
                               "output_tokens",
                               "requests",
                               "seed",
                               "input_distribution",
                               "range_ratio",
                               "output_distribution",
                               "output_range_ratio",
                               "lengths_file",
                               "unique_prompts",
                               "warmup_requests",
                               "request_rate",
                               "routing"};
const KeyList kBaselineKeys = {"layout", "import_csv", "import_run"};
const KeyList kDecisionKeys = {"objective",      "min_headroom_mib", "max_repeat_spread",
                               "failure_policy", "ttft_p99_s",       "tpot_p99_ms",
                               "itl_p99_ms",     "e2e_p99_s",        "stop_probability"};
const KeyList kAdaptiveKeys = {"budget_gpu_hours", "budget_samples", "server_start_s"};
const KeyList kSearchKeys = {
    "pp",          "ep",           "dp",        "chunked_prefill_size", "max_running_requests",
    "concurrency", "request_rate", "instances", "moe_a2a_backend",      "disaggregated"};
const KeyList kLifecycleKeys = {
    "host_timeout_s",     "check_timeout_s",   "start_timeout_s", "poll_interval_s",
    "request_timeout_s",  "bench_timeout_s",   "stop_grace_s",    "memory_release_timeout_s",
    "memory_release_mib", "preflight_gpu_mib", "min_window_s",    "reuse_server",
    "flush_cache"};
const KeyList kSimKeys = {"noise_cv", "seed", "inject"};
const KeyList kSimFaultKeys = {"sample", "fault", "count"};
const KeyList kProfileKeys = {"nsys",   "nsys_command", "output_dir", "file",
                              "layout", "window",       "gap_us"};

namespace {

struct TableKeys {
  const char* path;
  const KeyList& keys;
};

// Every table the readers check, by where it sits in the spec. A nested
// table's path is itself a key of its parent.
const TableKeys kTables[] = {
    {"experiment", kExperimentKeys},
    {"cluster", kClusterKeys},
    {"cluster.hosts", kHostTableKeys},
    {"cluster.ssh", kSshKeys},
    {"cluster.ssh.<host>", kSshHostKeys},
    {"cluster.slurm", kSlurmKeys},
    {"cluster.sudo", kSudoKeys},
    {"engine", kEngineKeys},
    {"engine.disaggregation", kEngineDisaggregationKeys},
    {"sweep", kSweepKeys},
    {"sweep.layouts", kLayoutKeys},
    {"sweep.prefill", kPoolKeys},
    {"sweep.decode", kPoolKeys},
    {"workload", kWorkloadKeys},
    {"baseline", kBaselineKeys},
    {"baseline.layout", kLayoutKeys},
    {"decision", kDecisionKeys},
    {"lifecycle", kLifecycleKeys},
    {"sim", kSimKeys},
    {"sim.inject", kSimFaultKeys},
    {"profile", kProfileKeys},
    {"adaptive", kAdaptiveKeys},
    {"search", kSearchKeys},
};

}  // namespace

std::vector<std::string> AcceptedKeys() {
  std::vector<std::string> out;
  auto add = [&out](std::string key) {
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(std::move(key));
  };
  for (const TableKeys& t : kTables) {
    const std::string path = t.path;
    // A nested table ("cluster.ssh.<host>") is a key of its parent table.
    if (path.find('.') != std::string::npos) add(path);
    for (const std::string& key : t.keys) add(path + "." + key);
  }
  return out;
}

}  // namespace ppsearch::spec
