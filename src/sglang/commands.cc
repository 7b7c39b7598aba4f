#include "sglang/commands.h"

#include <fmt/format.h>

#include <algorithm>

#include "launch/launchers.h"
#include "launch/process.h"
#include "plan/disaggregation.h"
#include "plan/engine_config.h"
#include "sglang/nsys_profile.h"
#include "spec/engine_env.h"
#include "util/files.h"

namespace ppsearch::sglang {
namespace {

std::string Fill(std::string word, const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [key, value] : vars) {
    for (size_t at = word.find(key); at != std::string::npos;
         at = word.find(key, at + value.size()))
      word.replace(at, key.size(), value);
  }
  return word;
}

std::string HostPort(const std::string& address, int port) {
  const bool v6 = address.find(':') != std::string::npos;
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

std::vector<std::string> ContainerWords(const spec::EngineSpec& e, const launch::EnvList& env,
                                        const std::string& name, const std::string& profile_dir) {
  const std::string mount = e.model_path + ":" + e.model_path;
  // A profiled server writes its report where the host's export step finds it.
  const std::string profile_mount = profile_dir.empty() ? "" : profile_dir + ":" + profile_dir;
  std::vector<std::string> w;
  if (e.container == "docker" || e.container == "podman") {
    w = {e.container, "run", "--rm", "--name", name, "--network", "host", "--ipc", "host"};
    if (e.container == "docker") {
      // SGLang's documented docker command (which also says --ipc=host).
      w.insert(w.end(), {"--gpus", "all", "--shm-size", "32g"});
    } else {
      // podman refuses --shm-size with --ipc host ("cannot set shmsize when
      // running in the host IPC Namespace"): the host's /dev/shm is shared.
      w.insert(w.end(), {"--device", "nvidia.com/gpu=all"});
    }
    w.insert(w.end(), {"-v", mount});
    if (!profile_mount.empty()) w.insert(w.end(), {"-v", profile_mount});
    // Values stay in the client's environment (set by the launcher), out of argv.
    for (const auto& [k, v] : env) w.insert(w.end(), {"-e", k});
  } else if (e.container == "apptainer") {
    // The values travel as APPTAINERENV_<name> in the client's environment
    // (ServerCommand renames them), never as --env K=V on its command line.
    w = {"apptainer", "exec", "--nv", "--bind", mount};
    if (!profile_mount.empty()) w.insert(w.end(), {"--bind", profile_mount});
  } else {  // enroot
    w = {"enroot", "start", "--rw", "--mount", mount};
    if (!profile_mount.empty()) w.insert(w.end(), {"--mount", profile_mount});
    for (const auto& [k, v] : env) w.insert(w.end(), {"--env", k});
  }
  w.insert(w.end(), e.container_args.begin(), e.container_args.end());
  w.push_back(e.image);
  return w;
}

}  // namespace

std::string SelfExecutable() {
  const std::string self = ExecutablePath();
  return self.empty() ? "ppsearch" : self;
}

std::string FillHostWords(const std::string& word, const spec::Spec& spec, int node) {
  return Fill(word, {{"{host}", spec.cluster.hosts[node].name},
                     {"{spec_dir}", spec.base_dir},
                     {"{ppsearch}", SelfExecutable()}});
}

std::vector<std::string> EngineArgWords(const spec::EngineSpec& engine) {
  // SGLang renamed these flags in 0.5.14 (server_args.py keeps the old names
  // as deprecated aliases); a spec written either way gets the spelling its
  // version expects.
  const int version = plan::VersionCode(engine.version);
  const bool renamed = !engine.version.empty() && (version < 0 || version >= 514);
  const bool old = !engine.version.empty() && !renamed;
  std::vector<std::string> out;
  for (const auto& [flag, value] : engine.args) {
    std::string name = flag;
    if (renamed && name == "cuda-graph-max-bs") name = "cuda-graph-max-bs-decode";
    if (old && name == "cuda-graph-max-bs-decode") name = "cuda-graph-max-bs";
    if (value.kind == spec::ArgValue::Kind::kBool) {
      if (!value.bool_value) continue;
      if (renamed && name == "disable-cuda-graph") {
        out.insert(out.end(), {"--cuda-graph-backend-decode", "disabled",
                               "--cuda-graph-backend-prefill", "disabled"});
        continue;
      }
      out.push_back("--" + name);
    } else {
      out.push_back("--" + name);
      out.push_back(value.text);
    }
  }
  return out;
}

std::string NodeUrl(const spec::Spec& spec, int node) {
  return "http://" + HostPort(spec.cluster.Address(node), spec.cluster.ServerPort(node));
}

std::string ServerTag(const std::string& run_id, const evidence::SampleId& sample,
                      const std::string& host) {
  return "ppsearch-" + run_id + "-" + sample.str() + "-" + host;
}

std::vector<int> InstanceHeads(const spec::Spec& spec, const spec::LayoutSpec& layout) {
  const int hosts = static_cast<int>(spec.cluster.hosts.size());
  const int instances = std::max(layout.instances, 1);
  std::vector<int> heads;
  if (hosts % instances != 0) return heads;
  for (int i = 0; i < instances; ++i) heads.push_back(i * (hosts / instances));
  return heads;
}

NodeCommand ServerCommand(const spec::Spec& spec, const evidence::SampleId& sample, int node,
                          const std::string& sample_name) {
  const std::string name_of_sample = sample_name.empty() ? sample.str() : sample_name;
  const spec::EngineSpec& e = spec.engine;
  // The node's instance: nodes [head, head + nnodes).
  const int nnodes =
      static_cast<int>(spec.cluster.hosts.size()) / std::max(sample.layout.instances, 1);
  const int head = nnodes > 0 ? node - node % nnodes : 0;
  const int rank = node - head;
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"{host}", spec.cluster.hosts[node].name},
      {"{node_rank}", std::to_string(rank)},
      {"{sample}", name_of_sample},
      {"{port}", std::to_string(spec.cluster.ServerPort(node))},
      {"{spec_dir}", spec.base_dir},
      {"{ppsearch}", SelfExecutable()}};
  NodeCommand c;
  for (const auto& [k, v] : e.env) c.env.emplace_back(k, Fill(v, vars));
  // [engine.pp_layer_partition]: the split of this layout's pipeline size,
  // as SGLang reads it (the spec refuses it beside [engine.env]'s).
  if (const auto split = e.pp_layer_partitions.find(sample.layout.pp);
      split != e.pp_layer_partitions.end())
    c.env.emplace_back(spec::kPpLayerPartitionEnv, spec::PpLayerPartitionText(split->second));
  std::vector<std::string> server;
  for (const auto& w : e.command) server.push_back(Fill(w, vars));
  const spec::LayoutSpec& l = sample.layout;
  server.insert(server.end(),
                {"--model-path", e.model_path, "--tp-size", std::to_string(l.tp), "--pp-size",
                 std::to_string(l.pp), "--ep-size", std::to_string(l.ep)});
  // SGLang turns DP attention off at dp_size 1 (arg_groups/overrides.py
  // _data_parallelism_defaults), so the flags are written only above 1.
  if (l.dp > 1)
    server.insert(server.end(), {"--enable-dp-attention", "--dp-size", std::to_string(l.dp)});
  if (nnodes > 1)
    server.insert(
        server.end(),
        {"--nnodes", std::to_string(nnodes), "--node-rank", std::to_string(rank),
         "--dist-init-addr", HostPort(spec.cluster.Address(head), spec.cluster.dist_init_port)});
  server.insert(server.end(), {"--host", spec.cluster.Address(node), "--port",
                               std::to_string(spec.cluster.ServerPort(node))});
  for (const auto& w : EngineArgWords(e)) server.push_back(Fill(w, vars));
  if (spec.profile.nsys) {
    std::vector<std::string> profiled =
        NsysProfileWords(spec.profile, NsysReportBase(spec, sample, node));
    server.insert(server.begin(), profiled.begin(), profiled.end());
  }
  if (e.image.empty()) {
    c.argv = server;
    return c;
  }
  // The container's name, so what outlives a killed client can be removed.
  const std::string name = "ppsearch-" + name_of_sample + "-" + spec.cluster.hosts[node].name;
  c.argv = ContainerWords(e, c.env, name, spec.profile.nsys ? spec.profile.output_dir : "");
  c.step = launch::SudoStep::kContainer;
  c.argv.insert(c.argv.end(), server.begin(), server.end());
  if (e.container == "apptainer")
    for (auto& [k, v] : c.env) k = "APPTAINERENV_" + k;
  if (e.container == "docker" || e.container == "podman")
    c.cleanup = {e.container, "rm", "-f", name};
  return c;
}

NodeCommand ToolCommand(const spec::Spec& spec, int node, const std::string& name,
                        const std::vector<std::string>& argv) {
  const spec::EngineSpec& e = spec.engine;
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"{host}", spec.cluster.hosts[node].name}, {"{spec_dir}", spec.base_dir}};
  NodeCommand c;
  for (const auto& [k, v] : e.env) c.env.emplace_back(k, Fill(v, vars));
  if (e.image.empty()) {
    c.argv = argv;
    return c;
  }
  c.argv = ContainerWords(e, c.env, name, "");
  // docker and podman close a container's standard input unless told (-i).
  if (e.container == "docker" || e.container == "podman") c.argv.insert(c.argv.begin() + 2, "-i");
  c.step = launch::SudoStep::kContainer;
  c.argv.insert(c.argv.end(), argv.begin(), argv.end());
  if (e.container == "apptainer")
    for (auto& [k, v] : c.env) k = "APPTAINERENV_" + k;
  if (e.container == "docker" || e.container == "podman")
    c.cleanup = {e.container, "rm", "-f", name};
  return c;
}

loadgen::BenchOptions BenchOptionsFor(const spec::Spec& spec, const evidence::SampleId& s,
                                      uint64_t seed) {
  const auto& w = spec.workload;
  loadgen::BenchOptions o;
  o.url = NodeUrl(spec, 0);
  const std::vector<int> heads = InstanceHeads(spec, s.layout);
  for (size_t i = 1; i < heads.size(); ++i) o.more_urls.push_back(NodeUrl(spec, heads[i]));
  o.num_requests = w.requests;
  o.concurrency = s.concurrency;
  o.request_rate = w.request_rate;
  o.routing = loadgen::ParseRouting(w.routing).value_or(loadgen::Routing::kLeastOutstanding);
  o.input_tokens = w.input_tokens;
  o.output_tokens = w.output_tokens;
  o.range_ratio = w.input_distribution == "uniform" ? w.range_ratio : 1.0;
  o.output_range_ratio = w.output_distribution == "uniform" ? w.output_range_ratio : 1.0;
  o.lengths = w.lengths;
  o.lengths_file = w.lengths_file;
  o.warmup_requests = w.warmup_requests;
  o.flush_cache = spec.lifecycle.flush_cache;
  o.timeout_s = spec.lifecycle.request_timeout_s;
  o.prompt.seed = seed;
  o.api_key = spec.engine.ArgString("api-key").value_or("");
  return o;
}

std::vector<std::string> BenchArgv(const loadgen::BenchOptions& o) {
  auto num = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  std::string urls = o.url;
  for (const std::string& url : o.more_urls) urls += "," + url;
  std::vector<std::string> a = {"ppsearch",        "bench",
                                "--url",           urls,
                                "--api",           loadgen::ApiName(o.api),
                                "--concurrency",   std::to_string(o.concurrency),
                                "--requests",      std::to_string(o.num_requests),
                                "--input-tokens",  std::to_string(o.input_tokens),
                                "--output-tokens", std::to_string(o.output_tokens),
                                "--seed",          std::to_string(o.prompt.seed),
                                "--timeout-s",     num(o.timeout_s)};
  if (o.range_ratio != 1.0) a.insert(a.end(), {"--range-ratio", num(o.range_ratio)});
  if (o.output_range_ratio != 1.0)
    a.insert(a.end(), {"--output-range-ratio", num(o.output_range_ratio)});
  if (!o.lengths_file.empty()) a.insert(a.end(), {"--lengths-file", o.lengths_file});
  if (o.warmup_requests > 0) a.insert(a.end(), {"--warmup", std::to_string(o.warmup_requests)});
  if (o.request_rate > 0) a.insert(a.end(), {"--request-rate", num(o.request_rate)});
  if (o.flush_cache) a.push_back("--flush-cache");
  if (!o.more_urls.empty()) a.insert(a.end(), {"--routing", loadgen::RoutingName(o.routing)});
  return a;
}

std::string RouterUrl(const spec::Spec& spec) {
  const spec::Disaggregation& d = *spec.disaggregation;
  return "http://" +
         HostPort(spec.cluster.Address(d.prefill.hosts.front()), d.transfer.router_port);
}

std::vector<PoolServer> DeploymentServers(const spec::Spec& spec,
                                          const evidence::SampleId& sample) {
  const spec::Disaggregation& d = *spec.disaggregation;
  std::vector<PoolServer> out;
  for (const spec::PoolSpec* pool : {&d.prefill, &d.decode}) {
    const spec::Spec pool_spec = plan::PoolSpecOf(spec, d, *pool);
    const evidence::SampleId pool_sample{pool->layout, sample.concurrency, sample.repeat};
    for (size_t n = 0; n < pool->hosts.size(); ++n)
      out.push_back({pool->hosts[n], pool->role,
                     ServerCommand(pool_spec, pool_sample, static_cast<int>(n), sample.str())});
  }
  return out;
}

std::vector<std::string> PoolServerUrls(const spec::Spec& spec, const spec::PoolSpec& pool) {
  const spec::Spec pool_spec = plan::PoolSpecOf(spec, *spec.disaggregation, pool);
  std::vector<std::string> urls;
  for (int head : InstanceHeads(pool_spec, pool.layout)) urls.push_back(NodeUrl(pool_spec, head));
  return urls;
}

std::vector<std::string> RouterArgv(const spec::Spec& spec, const std::string& sample_name) {
  const spec::Disaggregation& d = *spec.disaggregation;
  const int node = d.prefill.hosts.front();
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"{host}", spec.cluster.hosts[node].name},
      {"{node_rank}", "0"},
      {"{sample}", sample_name},
      {"{port}", std::to_string(d.transfer.router_port)},
      {"{spec_dir}", spec.base_dir},
      {"{ppsearch}", SelfExecutable()}};
  std::vector<std::string> argv;
  for (const std::string& w : d.transfer.router_command) argv.push_back(Fill(w, vars));
  argv.push_back("--pd-disaggregation");
  for (const spec::PoolSpec* pool : {&d.prefill, &d.decode}) {
    for (const std::string& url : PoolServerUrls(spec, *pool)) {
      argv.push_back(pool == &d.prefill ? "--prefill" : "--decode");
      argv.push_back(url);
      if (pool == &d.prefill) argv.push_back(std::to_string(d.transfer.bootstrap_port));
    }
  }
  argv.insert(argv.end(),
              {"--policy", d.transfer.router_policy, "--host", spec.cluster.Address(node), "--port",
               std::to_string(d.transfer.router_port)});
  // The router waits this long for its servers to become healthy, then
  // exits: as long as ppsearch itself waits for them (the router's own
  // default, 600 s in some releases, is shorter than a large MoE model's load).
  argv.insert(argv.end(),
              {"--worker-startup-timeout-secs",
               std::to_string(static_cast<int64_t>(std::ceil(spec.lifecycle.start_timeout_s)))});
  return argv;
}

NodeCommand RouterCommand(const spec::Spec& spec, const evidence::SampleId& sample) {
  const int node = spec.disaggregation->prefill.hosts.front();
  const std::string name =
      "ppsearch-" + sample.str() + "-" + spec.cluster.hosts[node].name + "-router";
  return ToolCommand(spec, node, name, RouterArgv(spec, sample.str()));
}

loadgen::BenchOptions DeploymentBenchOptions(const spec::Spec& spec,
                                             const evidence::SampleId& sample, uint64_t seed) {
  loadgen::BenchOptions bench = BenchOptionsFor(spec, sample, seed);
  bench.url = RouterUrl(spec);
  bench.more_urls.clear();
  return bench;
}

namespace {

// One server's command as a display line, wrapped by the launcher when one
// is given; `node` is the host's place in the launcher's (the whole) cluster.
std::string ServerLine(const NodeCommand& c, int node, const launch::Launcher* launcher) {
  launch::ServerLaunch l;
  l.node = node;
  l.argv = c.argv;
  l.env = c.env;
  l.step = c.step;
  return launch::ShellJoin(launcher != nullptr ? launcher->WrapServer(node, l)
                                               : launch::WithEnv(c.env, c.argv));
}

// A disaggregated deployment's commands: each pool's servers as that pool's
// own aggregated layout on its hosts (plan::PoolSpecOf: its engine flags
// with SGLang's --disaggregation-* ones), the router, the benchmark.
std::vector<std::string> DeploymentCommands(const spec::Spec& spec,
                                            const evidence::SampleId& sample, uint64_t seed,
                                            const launch::Launcher* launcher) {
  const spec::Disaggregation& d = *spec.disaggregation;
  std::vector<std::string> out;
  for (const PoolServer& server : DeploymentServers(spec, sample))
    out.push_back(spec.cluster.hosts[server.node].name + " (" + server.role +
                  "): " + ServerLine(server.command, server.node, launcher));
  const int router_node = d.prefill.hosts.front();
  out.push_back(spec.cluster.hosts[router_node].name +
                " (router): " + ServerLine(RouterCommand(spec, sample), router_node, launcher));
  out.push_back(spec.cluster.hosts[0].name + " (bench, built in): " +
                launch::ShellJoin(BenchArgv(DeploymentBenchOptions(spec, sample, seed))));
  return out;
}

}  // namespace

std::vector<std::string> SampleCommands(const spec::Spec& spec, const evidence::SampleId& sample,
                                        uint64_t seed, const launch::Launcher* launcher) {
  if (sample.layout.disaggregated() && spec.disaggregation)
    return DeploymentCommands(spec, sample, seed, launcher);
  std::vector<std::string> out;
  for (size_t n = 0; n < spec.cluster.hosts.size(); ++n) {
    const int node = static_cast<int>(n);
    out.push_back(spec.cluster.hosts[n].name + ": " +
                  ServerLine(ServerCommand(spec, sample, node), node, launcher));
  }
  out.push_back(spec.cluster.hosts[0].name + " (bench, built in): " +
                launch::ShellJoin(BenchArgv(BenchOptionsFor(spec, sample, seed))));
  return out;
}

}  // namespace ppsearch::sglang
