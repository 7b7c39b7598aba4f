#pragma once
// The exact commands a sample runs on a real cluster: one SGLang launch per
// node (inside the container image when the spec names one), as an argv
// vector with its environment, and the benchmark the built-in client runs,
// as options and as the equivalent `ppsearch bench` command line. Dry runs
// print them; every run records them (secrets redacted, run/redact.h).

#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "launch/launcher.h"
#include "loadgen/bench_client.h"
#include "spec/spec.h"

namespace ppsearch::sglang {

struct NodeCommand {
  std::vector<std::string> argv;  // container runtime (if any), then the server and its flags
  launch::EnvList env;            // [engine.env], placeholders filled
  // Run on the node after the server is killed, to remove what outlives its
  // process tree (a container); empty when nothing does.
  std::vector<std::string> cleanup;
  // kContainer when argv starts a container runtime (argv and cleanup then
  // run through sudo where [cluster.sudo] names that step).
  launch::SudoStep step = launch::SudoStep::kNone;
};

// The launch of `node` for `sample`: [engine] command, SGLang's flags
// (--model-path, --tp-size, --pp-size, --ep-size, --nnodes, --node-rank,
// --dist-init-addr, --host, --port), then [engine.args] spelled for
// [engine] version; {host}, {node_rank}, {sample}, {port}, {spec_dir} (the
// spec's directory) and {ppsearch} (this binary) filled in. With several
// instances each is a deployment of its own: --nnodes counts the
// instance's nodes, --node-rank is the node's rank within it and
// --dist-init-addr is the instance's first node.
// `sample_name` names the sample in {sample} and the container where the
// server is one pool of a disaggregated deployment's sample (its own
// `sample` is then the pool's layout); "" for sample.str().
NodeCommand ServerCommand(const spec::Spec& spec, const evidence::SampleId& sample, int node,
                          const std::string& sample_name = "");

// One of ppsearch's own tools run on `node` where the server would run:
// `argv` inside the spec's container image (its standard input kept open)
// when it names one, with [engine.env] ({host} and {spec_dir} filled in).
// `name` names the container.
NodeCommand ToolCommand(const spec::Spec& spec, int node, const std::string& name,
                        const std::vector<std::string>& argv);

// `[engine.args]` as SGLang flags for `version` ("" = as written): flags
// renamed in 0.5.14 (cuda-graph-max-bs -> cuda-graph-max-bs-decode,
// disable-cuda-graph -> cuda-graph-backend-{decode,prefill} disabled).
std::vector<std::string> EngineArgWords(const spec::EngineSpec& engine);

// The first node of each instance of `layout` (hosts split in order,
// hosts / instances each): {0} with one instance. Empty when the hosts do
// not split evenly (the planner refuses that layout).
std::vector<int> InstanceHeads(const spec::Spec& spec, const spec::LayoutSpec& layout);

// The benchmark of a sample against node 0, or spread over every
// instance's first node (loadgen::BenchOptions::more_urls) with several.
loadgen::BenchOptions BenchOptionsFor(const spec::Spec& spec, const evidence::SampleId& sample,
                                      uint64_t seed);
// The `ppsearch bench` command that runs the same benchmark.
std::vector<std::string> BenchArgv(const loadgen::BenchOptions& options);

// One server of a disaggregated deployment's sample: the cluster node it
// runs on, its pool's role and its command, its pool planned as a layout of
// its own on its hosts (plan::PoolSpecOf: its engine flags with SGLang's
// --disaggregation-* ones); the pools in order, prefill first.
struct PoolServer {
  int node = 0;
  std::string role;
  NodeCommand command;
};
std::vector<PoolServer> DeploymentServers(const spec::Spec& spec, const evidence::SampleId& sample);
// The URL of each server instance's first node in `pool` (what the router
// and readiness address).
std::vector<std::string> PoolServerUrls(const spec::Spec& spec, const spec::PoolSpec& pool);

// The router of a disaggregated deployment (SGLang's sglang_router in PD
// mode: sgl-model-gateway/bindings/python/src/sglang_router/router_args.py
// at 71de97b264b04dcd514cf904003028aefe9775c8): `--pd-disaggregation`, each
// prefill server's URL with its bootstrap port (`--prefill URL PORT`), each
// decode server's (`--decode URL`), the policy and the port of
// [engine.disaggregation]. It runs on the first prefill node, where the
// benchmark sends its requests.
// Its program is engine.disaggregation.router_command ({sample} is
// `sample_name`).
std::vector<std::string> RouterArgv(const spec::Spec& spec, const std::string& sample_name = "");
// The router's command on its node, as the servers' are (environment,
// container).
NodeCommand RouterCommand(const spec::Spec& spec, const evidence::SampleId& sample);
// A deployment's benchmark: the sample's, sent to the router.
loadgen::BenchOptions DeploymentBenchOptions(const spec::Spec& spec,
                                             const evidence::SampleId& sample, uint64_t seed);
// http://<first prefill node>:<router port>.
std::string RouterUrl(const spec::Spec& spec);

// Every command of a sample as one display line each ("<host>: <command>"),
// the launcher's wrapper included when one is given, then the benchmark. A
// disaggregated deployment's: each pool's servers ("<host> (prefill): ..."),
// the router, then the benchmark through the router.
// Not redacted: callers pass the lines through a Redactor.
std::vector<std::string> SampleCommands(const spec::Spec& spec, const evidence::SampleId& sample,
                                        uint64_t seed, const launch::Launcher* launcher);

// http://<node 0 address>:<port>, brackets around an IPv6 address.
std::string NodeUrl(const spec::Spec& spec, int node);

// This ppsearch binary's absolute path ({ppsearch} in commands).
std::string SelfExecutable();

// `word` with {host}, {spec_dir} and {ppsearch} filled in for `node`
// ([cluster] nvidia_smi words).
std::string FillHostWords(const std::string& word, const spec::Spec& spec, int node);

// A name for a node's server unique within a run (Slurm step, container).
std::string ServerTag(const std::string& run_id, const evidence::SampleId& sample,
                      const std::string& host);

}  // namespace ppsearch::sglang
