#pragma once
// The experiment spec: one TOML file describing a whole search. Parsed by
// ParseSpec (spec/spec_parser.h); every value keeps where it came from so
// later checks (the planner's) can point at file:line:col and key.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "decide/objective.h"
#include "decide/sla.h"
#include "util/source_loc.h"
#include "workload/lengths_file.h"

namespace ppsearch::spec {

struct LayoutSpec {
  int pp = 1;
  int tp = 1;
  int ep = 1;
  SourceLoc origin;  // where this layout was written (a tuple, or the list it expands from)
  // Attention data-parallel size: > 1 runs SGLang with --enable-dp-attention
  // --dp-size dp (attention in dp groups of tp / dp ranks, MoE over the
  // whole TP group); 1 is plain TP attention. Last, so {pp, tp, ep, origin}
  // still reads as before.
  int dp = 1;
  // Independent copies of the layout, each a whole SGLang deployment on its
  // own nodes (instance i on hosts [i*k, (i+1)*k), k = hosts / instances),
  // the load split between them as a router would.
  int instances = 1;
  // A disaggregated deployment (SGLang's prefill-decode disaggregation,
  // [sweep.prefill] and [sweep.decode]): {the prefill pool, the decode
  // pool}, each pool's servers its `instances`. The sizes above are then
  // no pool's and stay 1: read a deployment's through its pools. Empty for
  // an aggregated layout.
  std::vector<LayoutSpec> pools{};

  bool disaggregated() const { return !pools.empty(); }
  const LayoutSpec& prefill() const { return pools.front(); }
  const LayoutSpec& decode() const { return pools.back(); }
  // "PP2/TP16/EP4", "PP1/TP8/EP8/DP8" with DP attention, "2xPP2/TP8/EP4" with
  // 2 instances; "1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8/DP8" for a deployment of
  // one prefill and three decode servers.
  std::string Label() const;
  // "pp2-tp16-ep4" ("-dp8" appended with DP attention, "2x-" prefixed with 2
  // instances; "1p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8" for the deployment
  // above): names in files and directories.
  std::string Slug() const;
  // Every instance's GPUs together (64-bit: each size may be up to 32768);
  // a deployment's, both pools'.
  int64_t gpus() const {
    if (disaggregated()) return prefill().gpus() + decode().gpus();
    return int64_t{instances} * pp * tp;
  }
  bool operator==(const LayoutSpec& o) const {
    return pp == o.pp && tp == o.tp && ep == o.ep && dp == o.dp && instances == o.instances &&
           pools == o.pools;
  }
};

// The layout that names a disaggregated deployment of these pools.
LayoutSpec DeploymentLayout(const LayoutSpec& prefill, const LayoutSpec& decode,
                            const SourceLoc& origin);

struct HostSpec {
  std::string name;      // as the user names it, e.g. "601"; a host name, safe as a file name
  std::string address;   // where to reach it (host name or IP address); defaults to name
  int server_port = 0;   // this node's HTTP port; 0: cluster.server_port
  std::string ssh_user;  // empty: current user
  int ssh_port = 22;
  std::string ssh_key;  // empty: ssh's default
  SourceLoc origin;
};

// [cluster.slurm]: how the slurm launcher runs inside (or submits) an allocation.
struct SlurmSpec {
  std::vector<std::string> srun_args;    // extra srun words, e.g. ["--mpi=none"]
  std::vector<std::string> sbatch_args;  // extra #SBATCH lines for --slurm-submit
  std::string partition;
  std::string account;
  std::string time_limit;  // sbatch --time, e.g. "04:00:00"
  SourceLoc origin;
};

// [cluster.sudo]: which of ppsearch's own steps on a node run through sudo.
struct SudoSpec {
  // "container": the container runtime that starts a server, and its `rm -f`;
  // "stop": signalling a server's process tree (a sample's end, a crashed
  // run's leftovers).
  std::vector<std::string> steps;
  std::string password_file;  // resolved absolute; empty: PPSEARCH_SUDO_PASSWORD_FILE or none
  SourceLoc origin;

  bool Runs(const std::string& step) const {
    return std::find(steps.begin(), steps.end(), step) != steps.end();
  }
};

// Whether `cluster.hardware` names a file the user wrote (a slash, or a
// name ending in .toml, as `ppsearch probe -o` writes: found relative to
// the spec like other paths) rather than a shipped profile ("rtx-6000d").
bool HardwareNamesAFile(const std::string& hardware);

struct ClusterSpec {
  std::vector<HostSpec> hosts;
  int gpus_per_node = 8;
  std::string hardware = "rtx-6000d";  // profile name or path
  std::string launcher = "local";      // local | ssh | slurm
  int server_port = 30000;             // HTTP port of every node's server
  int dist_init_port = 5000;           // node 0's --dist-init-addr port
  // The GPU query program on every host, before nvidia-smi's own flags
  // (a rehearsal names `ppsearch smi-sim ...` here).
  std::vector<std::string> nvidia_smi = {"nvidia-smi"};
  std::vector<std::string> ssh_options;  // extra `ssh -o` options, e.g. "StrictHostKeyChecking=yes"
  std::string ssh_config;                // `ssh -F` file, resolved absolute; empty: ssh's default
  SlurmSpec slurm;
  SudoSpec sudo;
  SourceLoc origin;

  int world_size() const { return static_cast<int>(hosts.size()) * gpus_per_node; }
  int ServerPort(int node) const {
    return hosts[node].server_port > 0 ? hosts[node].server_port : server_port;
  }
  const std::string& Address(int node) const {
    return hosts[node].address.empty() ? hosts[node].name : hosts[node].address;
  }
};

// A server flag value as written in TOML (`chunked-prefill-size = 8192`,
// `disable-radix-cache = true`). Booleans become bare switches when true.
struct ArgValue {
  enum class Kind { kString, kInt, kFloat, kBool } kind = Kind::kString;
  std::string text;  // canonical text form
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  SourceLoc origin;
};

// "0.5.18" (a leading 'v' and a suffix such as ".post1" or "rc2" allowed) as
// {0, 5, 18}; nullopt when it does not start with numbers.
std::optional<std::vector<int>> ParseVersion(const std::string& text);

struct EngineSpec {
  std::string kind = "sglang";
  // The server program; SGLang's launch flags follow it. Words may hold
  // {host}, {node_rank}, {sample} and {port}, filled per node and sample.
  std::vector<std::string> command = {"python3", "-m", "sglang.launch_server"};
  std::string image;                        // container image; empty: run on the host
  std::string container = "docker";         // docker | podman | apptainer | enroot (with image)
  std::vector<std::string> container_args;  // extra words for the container runtime
  // Environment variables whose values are secrets, on top of every name
  // holding TOKEN, KEY, SECRET or PASSWORD: redacted wherever ppsearch writes.
  std::vector<std::string> secret_env;
  std::string model_path;    // path the server loads
  std::string model_config;  // config.json (or directory) for planning, resolved to absolute
  std::string version;  // engine version, e.g. "0.5.18" (flag spellings; the state pool under PP)
  // Files the engine runs with besides its image or install: patches, extra
  // modules (resolved absolute). A run records their SHA-256 in run.json.
  std::vector<std::string> patches;
  // Fixed server args (without leading dashes), in the order written.
  std::vector<std::pair<std::string, ArgValue>> args;
  std::vector<std::pair<std::string, std::string>> env;
  // Where `env` comes from, for messages: the spec's table, or for a
  // simulated server (serve-sim) the environment it was started in.
  std::string env_origin = "[engine.env]";
  // [engine.pp_layer_partition]: a PP degree's SGLANG_PP_LAYER_PARTITION
  // (each stage's layers, stage 0 first; as many entries as the degree),
  // set for the servers of the layouts of that degree only. The spec
  // refuses it beside [engine.env] SGLANG_PP_LAYER_PARTITION.
  std::map<int, std::vector<int>> pp_layer_partitions;
  SourceLoc origin;

  const ArgValue* FindArg(const std::string& flag) const;
  std::optional<int64_t> ArgInt(const std::string& flag) const;
  std::optional<std::string> ArgString(const std::string& flag) const;
  bool ArgTrue(const std::string& flag) const;
};

struct SweepSpec {
  std::vector<LayoutSpec> layouts;  // expanded, in spec order
  std::vector<int> concurrency;
  int repeats = 1;
  SourceLoc origin;

  // Benchmark samples the sweep holds: layouts x concurrency points x repeats.
  int sample_count() const {
    return static_cast<int>(layouts.size() * concurrency.size()) * repeats;
  }
};

struct WorkloadSpec {
  int64_t input_tokens = 0;
  int64_t output_tokens = 1;
  int requests = 0;  // per sample
  uint64_t seed = 1;
  // "fixed": every prompt exactly input_tokens; "uniform": uniform on
  // [input_tokens * range_ratio, input_tokens].
  std::string input_distribution = "fixed";
  double range_ratio = 1.0;
  // "fixed": every output exactly output_tokens; "uniform": uniform on
  // [output_tokens * output_range_ratio, output_tokens].
  std::string output_distribution = "fixed";
  double output_range_ratio = 1.0;
  // A lengths file (workload/lengths_file.h), relative to the spec's
  // directory, read when the spec is: each request draws both lengths from
  // its rows; the lengths and distributions above are then unused.
  std::string lengths_file;
  std::vector<workload::LengthPair> lengths{};
  bool unique_prompts = true;  // false: prompts repeat across requests/repeats
  int warmup_requests = 0;
  double request_rate = 0;  // requests/s for open loop; 0 = closed loop
  // How a sample's requests are spread over a layout's instances:
  // "least-outstanding" (to the server with the fewest in flight) or
  // "round-robin" (bench --routing).
  std::string routing = "least-outstanding";
  SourceLoc origin;
};

struct BaselineSpec {
  std::optional<LayoutSpec> layout;  // which swept (or imported) layout is the baseline
  std::string import_csv;            // CSV of medians (resolved absolute), optional
  std::string import_run;            // earlier run directory (resolved absolute), optional
  SourceLoc origin;
};

struct DecisionSpec {
  decide::Objective objective;  // input_tps unless [decision] objective names another
  double min_headroom_mib = 0;
  double max_repeat_spread = 0.05;         // (max - min) / median
  std::string failure_policy = "exclude";  // exclude | warn
  // ttft_p99_s, tpot_p99_ms, itl_p99_ms, e2e_p99_s, held in seconds: a
  // layout that misses one at a concurrency level does not qualify.
  decide::SlaLimits sla;
  // An adaptive run stops once the chance that a candidate it has not
  // measured would enter the top two is below this (docs/adaptive.md).
  double stop_probability = 0.05;
  SourceLoc origin;
};

// [adaptive]: what an adaptive run may spend, and what a server start is
// expected to cost before one has been timed (docs/adaptive.md).
struct AdaptiveSpec {
  double budget_gpu_hours = 0;  // 0: no budget
  int budget_samples = 0;       // 0: no budget
  // Wall seconds of one server start (weights loaded, ready), used until the
  // run has timed a start of its own.
  double server_start_s = 600;
  SourceLoc origin;
};

// [search]: the bounds `ppsearch search` explores (docs/search.md). An empty
// list (the key left out) leaves that dimension to the search's flag or default.
struct SearchSpec {
  std::vector<int> instances;
  std::vector<int> pp;
  std::vector<int> ep;
  std::vector<int> dp;
  std::vector<int64_t> chunked_prefill_size;
  std::vector<int> max_running_requests;
  std::vector<std::string> moe_a2a_backend;  // SGLang --moe-a2a-backend values
  std::vector<int> concurrency;              // load points: requests in flight
  // Open-loop load points, requests/s; with them `concurrency` is the cap.
  std::vector<double> request_rate;
  // Disaggregated candidates beside the aggregated layouts: "on", "off",
  // or "" (left out: the search's default, as --disaggregated's).
  std::string disaggregated;
  SourceLoc origin;
};

// The simulated engine's knobs: per-repeat noise and injected failures, so a
// simulated search exercises the same checks a real one needs.
struct SimFault {
  std::string sample;  // sample id, e.g. "pp2-tp16-ep4_c8_r2"
  std::string fault;   // lose_requests | oom | nccl | traceback | engine_exit
  int count = 1;       // lose_requests: how many requests fail
  SourceLoc origin;
};

struct SimSpec {
  // Coefficient of variation of a sample's throughput across repeats: every
  // timestamp of a repeat is stretched by a seeded lognormal factor.
  double noise_cv = 0.003;
  uint64_t seed = 1;
  std::vector<SimFault> inject;
  SourceLoc origin;
};

// [lifecycle]: the timeouts and thresholds of each real sample (see
// docs/cluster.md, "Lifecycle of a sample"). Seconds and MiB.
struct LifecycleSpec {
  double host_timeout_s = 30;             // one command on a host (ssh, nvidia-smi, kill)
  double check_timeout_s = 10;            // each command of the cluster check before a run
  double start_timeout_s = 1800;          // launch to ready (MoE weights load slowly)
  double poll_interval_s = 2;             // readiness and memory polls
  double request_timeout_s = 3600;        // one benchmark request, send to last byte
  double bench_timeout_s = 0;             // the whole benchmark; 0: derived from the workload
  double stop_grace_s = 30;               // SIGTERM to SIGKILL
  double memory_release_timeout_s = 180;  // after stop, until every GPU is under the threshold
  double memory_release_mib = 1024;       // "released": used memory per GPU at most this
  double preflight_gpu_mib = 1024;        // another process holding more fails preflight
  double min_window_s = 0;                // a shorter measured window is not a valid sample
  bool reuse_server = false;              // one server per layout, cache flushed between samples
  bool flush_cache = true;                // POST /flush_cache before each sample
  SourceLoc origin;
};

// [profile]: Nsight Systems evidence attached to samples (docs/tools.md,
// "[profile] in the spec"). nsys = true wraps every node's server of the real
// engine in `nsys profile` and analyses each node's export after the sample;
// `file` attaches an existing export (a rehearsal, the simulated engine)
// instead.
struct ProfileSpec {
  bool nsys = false;
  std::vector<std::string> nsys_command = {"nsys"};  // the profiler program on every node
  std::string output_dir = "/tmp/ppsearch-nsys";     // where each node writes its report
  std::string file;       // an existing SQLite export, resolved absolute; empty: none
  SourceLoc file_origin;  // where `file` is written
  std::string layout;     // the layout `file` profiled ("pp1-tp32-ep4"); empty: every layout
  std::string window = "forward";  // forward | nvtx:REGEX (as `ppsearch nsys --window`)
  int gap_us = 1000;               // forward windows: idle gap that ends a pass
  SourceLoc origin;

  bool enabled() const { return nsys || !file.empty(); }
};

// A disaggregated deployment's tables (spec/disaggregation_section.h reads
// them; names and defaults are SGLang's, cited there).
struct DisaggregationEngineSpec {
  std::string transfer_backend = "mooncake";  // --disaggregation-transfer-backend
  std::string ib_device;                      // --disaggregation-ib-device; empty: SGLang detects
  int bootstrap_port = 8998;                  // --disaggregation-bootstrap-port (prefill servers)
  std::string router_policy = "cache_aware";  // the router's --policy (RouterArgs.policy)
  int router_port = 8000;                     // the router's --port
  // The router's program, before ppsearch's flags (--pd-disaggregation,
  // --prefill, --decode, --policy, --host, --port): SGLang's router, or
  // `ppsearch router-sim` in a rehearsal. Placeholders as engine.command.
  std::vector<std::string> router_command = {"python3", "-m", "sglang_router.launch_router"};
  SourceLoc origin;
};

// One pool: its layout (instances of PP/TP/EP/DP), the hosts it runs on and
// the engine arguments it adds to [engine.args] (its own win).
struct PoolSpec {
  std::string role;  // "prefill" | "decode": SGLang's --disaggregation-mode
  LayoutSpec layout;
  std::vector<int> hosts;  // indices into cluster.hosts, in the order listed
  std::vector<std::pair<std::string, ArgValue>> args;
  SourceLoc origin;
};

struct Disaggregation {
  DisaggregationEngineSpec transfer;
  PoolSpec prefill;
  PoolSpec decode;
};

struct ExperimentSpec {
  std::string name;
  std::string results_dir = "results";  // resolved relative to the spec file
  SourceLoc origin;
};

struct Spec {
  std::string path;      // the spec file as given
  std::string base_dir;  // directory relative paths resolve against
  ExperimentSpec experiment;
  ClusterSpec cluster;
  EngineSpec engine;
  SweepSpec sweep;
  WorkloadSpec workload;
  BaselineSpec baseline;
  DecisionSpec decision;
  LifecycleSpec lifecycle;
  SimSpec sim;
  ProfileSpec profile;
  AdaptiveSpec adaptive;
  SearchSpec search;
  // Where every key and array element was written, by dotted path
  // ("workload.requests", "sweep.pp[2]", "engine.args.chunked-prefill-size"),
  // for checks that need to point at a value the structs above hold bare.
  std::map<std::string, SourceLoc> origins;
  // [engine.disaggregation], [sweep.prefill] and [sweep.decode]: set for a
  // disaggregated deployment, whose sweep then holds its one layout
  // (DeploymentLayout of the two pools).
  std::optional<Disaggregation> disaggregation;

  // origins[key], or the spec file alone when the key was not written (a default).
  SourceLoc Origin(const std::string& key) const;
};

// The cluster hosts (indices, ascending) that run a server for `layout`:
// every host, or a disaggregated deployment's pools' (a host in neither
// pool runs nothing).
std::vector<int> ServerNodes(const Spec& spec, const LayoutSpec& layout);

}  // namespace ppsearch::spec
