#include "probe/probe.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include "launch/launchers.h"
#include "probe/probe_script.h"
#include "sglang/commands.h"

namespace ppsearch::probe {
namespace {

// `python -c` this: the script arrives on the standard input; it is saved to
// a file first because the collectives start worker processes that import
// their code from the main module's file.
//
// SIGTERM (ppsearch stopping the probe) and SIGHUP unwind it as an exit, so
// that the `finally` removes the saved script; the default action would
// leave /tmp/ppsearch-probe-*.py behind.
constexpr const char* kBootstrap = R"(import os, runpy, signal, sys, tempfile
def stop(signum, frame):
    raise SystemExit(128 + signum)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGHUP, stop)
source = sys.stdin.read()
fd, path = tempfile.mkstemp(prefix="ppsearch-probe-", suffix=".py")
try:
    with os.fdopen(fd, "w") as f:
        f.write(source)
    sys.argv = [path] + sys.argv[1:]
    runpy.run_path(path, run_name="__main__")
finally:
    os.unlink(path)
)";

std::string LastLines(const std::string& text, int lines) {
  size_t at = text.find_last_not_of('\n');
  if (at == std::string::npos) return "";
  size_t begin = at;
  for (int n = 0; n < lines && begin > 0; ++n) {
    size_t nl = text.rfind('\n', begin - 1);
    if (nl == std::string::npos) {
      begin = 0;
      break;
    }
    begin = nl;
  }
  return text.substr(begin == 0 ? 0 : begin + 1, at + 1 - (begin == 0 ? 0 : begin + 1));
}

bool Interrupted(const ProbeOptions& options) {
  return options.interrupted != nullptr && options.interrupted->load();
}

// The error of a node stopped early: kIncomplete, which RunProbe's callers
// tell from a node's own failure.
Error Stopped(const std::string& host, const ProbeOptions& options) {
  return MakeError(
      Interrupted(options) ? "interrupted while probing " + host : "probe on " + host + ": stopped",
      ErrorKind::kIncomplete);
}

// `also_stop` ends the node's script early too (a partner that failed).
Result<std::string> RunOn(const spec::Spec& spec, launch::Launcher& launcher, int node,
                          const ProbeOptions& options, const nlohmann::json& request,
                          const std::atomic<bool>* also_stop = nullptr) {
  const sglang::NodeCommand c =
      sglang::ToolCommand(spec, node, "ppsearch-probe-" + spec.cluster.hosts[node].name,
                          {options.python, "-c", kBootstrap, request.dump()});
  const std::string& host = spec.cluster.hosts[node].name;
  const launch::CaptureStop stop = [&options, also_stop] {
    return Interrupted(options) || (also_stop != nullptr && also_stop->load());
  };
  if (stop()) return Stopped(host, options);
  PPS_ASSIGN_OR_RETURN(
      launch::Captured out,
      launcher.RunStepWithInput(c.step, node, launch::WithEnv(c.env, c.argv),
                                options.node_timeout_s, std::string(ProbeScriptText()), stop));
  if (out.stopped) return Stopped(host, options);
  if (out.timed_out)
    return MakeError(fmt::format("probe on {}: no result within {:g} s (--timeout)", host,
                                 options.node_timeout_s));
  if (!out.exit.ok()) {
    const std::string tail = LastLines(out.err, 6);
    return MakeError(fmt::format("probe on {}: `{}` {}{}", host, options.python,
                                 out.exit.Describe(), tail.empty() ? "" : ":\n" + tail));
  }
  return out.out;
}

}  // namespace

Result<ProbeRun> RunProbe(const spec::Spec& spec, launch::Launcher& launcher,
                          const ProbeRequest& request, const ProbeOptions& options,
                          std::ostream& progress) {
  ProbeRun run;
  const int nodes = static_cast<int>(spec.cluster.hosts.size());
  const nlohmann::json local = RequestJson(request);
  for (int n = 0; n < nodes; ++n) {
    if (Interrupted(options)) return Stopped(spec.cluster.hosts[n].name, options);
    progress << "probe: " << spec.cluster.hosts[n].name << " (" << n + 1 << " of " << nodes
             << ")...\n"
             << std::flush;
    PPS_ASSIGN_OR_RETURN(std::string out, RunOn(spec, launcher, n, options, local));
    PPS_ASSIGN_OR_RETURN(NodeResult r, ParseNodeOutput(spec.cluster.hosts[n].name, out));
    // Where the model runs each shape travels only in the request.
    for (GemmTiming& g : r.gemm)
      for (const GemmShape& asked : request.gemm_shapes)
        if (asked.m == g.shape.m && asked.n == g.shape.n && asked.k == g.shape.k)
          g.shape.what = asked.what;
    run.nodes.push_back(std::move(r));
  }
  if (nodes < 2 || !options.cross) return run;
  progress << "probe: between nodes, " << nodes << " at once...\n" << std::flush;
  // Every node must be in the group at once: one thread per node, each
  // bounded by the rendezvous timeout and the node's own. The first node to
  // fail stops the others: its partners would only wait for it until the
  // rendezvous or --timeout ran out.
  const double rendezvous_s = std::min(120.0, options.node_timeout_s);
  std::vector<Result<std::string>> outs(nodes, MakeError("not run"));
  std::atomic<bool> failed{false};
  std::mutex first_mu;
  std::optional<std::string> first_failure;
  std::vector<std::thread> threads;
  for (int n = 0; n < nodes; ++n) {
    threads.emplace_back([&, n] {
      outs[n] = RunOn(
          spec, launcher, n, options,
          CrossRequestJson(request, spec.cluster.Address(0), options.port, n, nodes, rendezvous_s),
          &failed);
      if (outs[n].ok() || outs[n].error().kind == ErrorKind::kIncomplete) return;
      std::lock_guard<std::mutex> lock(first_mu);
      if (!first_failure) first_failure = outs[n].error().message;
      failed = true;
    });
  }
  for (std::thread& t : threads) t.join();
  if (Interrupted(options)) return Stopped("between nodes", options);
  if (first_failure) {
    run.cross_failure = *first_failure;
    return run;
  }
  Result<NodeResult> first = ParseNodeOutput(spec.cluster.hosts[0].name, *outs[0]);
  if (!first.ok()) {
    run.cross_failure = first.error().message;
    return run;
  }
  run.cross = first->cross;
  return run;
}

}  // namespace ppsearch::probe
