#include "sglang/host_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>

#include "launch/net.h"
#include "sglang/node_gpus.h"

namespace ppsearch::sglang {
namespace {

// How long a port probe from this machine waits for the connection.
constexpr int kPortProbeMs = 1000;

HostProblem Problem(const spec::Spec& spec, int node, const char* check, std::string detail) {
  return {spec.cluster.hosts[node].name, check, std::move(detail)};
}

// The process listening on `port` of `node`, asked of the host itself (the
// port probe from here cannot tell who holds it); "" when the host cannot say.
std::string AskPortHolder(launch::Launcher& launcher, int node, int port, double timeout_s) {
  Result<launch::Captured> c =
      launcher.RunOnHost(node, {"ss", "-Hltnp", "sport = :" + std::to_string(port)}, timeout_s);
  if (!c.ok() || c->timed_out || !c->exit.ok()) return "";
  return PortHolder(c->out);
}

void CheckPort(launch::Launcher& launcher, const spec::Spec& spec, int node, int port,
               const char* what, double timeout_s, std::vector<HostProblem>& out) {
  const std::string& address = spec.cluster.Address(node);
  if (!launch::AcceptsConnections(address, port, kPortProbeMs)) return;
  const std::string holder = AskPortHolder(launcher, node, port, timeout_s);
  out.push_back(Problem(spec, node, "port",
                        fmt::format("{} {} on {} is already in use{}", what, port, address,
                                    holder.empty() ? "" : " by " + holder)));
}

}  // namespace

std::string HostProblem::Describe() const { return host + ": " + check + ": " + detail; }

std::string PortHolder(const std::string& ss_output) {
  // users:(("python3",pid=1234,fd=7)): the first process named.
  const size_t open = ss_output.find("((\"");
  if (open == std::string::npos) return "";
  const size_t name_end = ss_output.find('"', open + 3);
  if (name_end == std::string::npos || ss_output.compare(name_end, 6, "\",pid=") != 0) return "";
  const size_t digits = name_end + 6;
  const size_t digits_end = ss_output.find_first_not_of("0123456789", digits);
  if (digits_end == digits || digits_end == std::string::npos) return "";
  return "pid " + ss_output.substr(digits, digits_end - digits) + " (" +
         ss_output.substr(open + 3, name_end - open - 3) + ")";
}

std::vector<HostProblem> CheckHost(launch::Launcher& launcher, const spec::Spec& spec, int node,
                                   double timeout_s, bool check_reach, bool check_busy) {
  std::vector<HostProblem> out;
  if (check_reach) {
    Result<launch::Captured> c = launcher.RunOnHost(node, {"true"}, timeout_s);
    if (!c.ok()) {
      out.push_back(Problem(spec, node, "reach", c.error().message));
      return out;
    }
    if (c->timed_out) {
      out.push_back(Problem(spec, node, "reach",
                            fmt::format("no answer within {} s (unreachable, or the {} launcher "
                                        "is waiting for something)",
                                        timeout_s, launcher.kind())));
      return out;
    }
  }
  if (check_busy) {
    CheckPort(launcher, spec, node, spec.cluster.ServerPort(node), "server port", timeout_s, out);
    if (node == 0 && spec.cluster.hosts.size() > 1)
      CheckPort(launcher, spec, node, spec.cluster.dist_init_port, "--dist-init-addr port",
                timeout_s, out);
  }
  Result<std::vector<ComputeApp>> apps = QueryComputeApps(launcher, spec, node, timeout_s);
  if (!apps.ok()) {
    out.push_back(Problem(spec, node, "nvidia-smi", apps.error().message));
    return out;
  }
  if (!check_busy) return out;
  const double limit = spec.lifecycle.preflight_gpu_mib;
  // nvidia-smi lists a process once per GPU it holds: one problem per process.
  std::vector<int64_t> pids;
  for (const ComputeApp& app : *apps)
    if (app.used_mib && *app.used_mib > limit &&
        std::find(pids.begin(), pids.end(), app.pid) == pids.end())
      pids.push_back(app.pid);
  for (const int64_t pid : pids) {
    std::string name;
    double most = 0;
    int gpus = 0;
    for (const ComputeApp& app : *apps)
      if (app.pid == pid && app.used_mib && *app.used_mib > limit) {
        name = app.name;
        most = std::max(most, *app.used_mib);
        ++gpus;
      }
    const std::string used = gpus == 1
                                 ? fmt::format("{:.0f} MiB", most)
                                 : fmt::format("up to {:.0f} MiB on each of {} GPUs", most, gpus);
    out.push_back(Problem(spec, node, "gpu",
                          fmt::format("GPU memory is held by another process: pid {} ({}) uses {} "
                                      "(more than lifecycle.preflight_gpu_mib = {:.0f})",
                                      pid, name, used, limit)));
  }
  Result<std::vector<std::string>> held = GpusAbove(launcher, spec, node, limit, timeout_s);
  if (!held.ok()) {
    out.push_back(Problem(spec, node, "nvidia-smi", held.error().message));
  } else if (!held->empty() && apps->empty()) {
    for (const auto& g : *held)
      out.push_back(Problem(spec, node, "gpu", g + " with no process listed"));
  }
  return out;
}

std::vector<HostProblem> CheckCluster(launch::Launcher& launcher, const spec::Spec& spec,
                                      double timeout_s, bool check_busy) {
  std::vector<std::future<std::vector<HostProblem>>> checks;
  for (size_t n = 0; n < spec.cluster.hosts.size(); ++n)
    checks.push_back(std::async(std::launch::async, [&, node = static_cast<int>(n)] {
      return CheckHost(launcher, spec, node, timeout_s, /*check_reach=*/true, check_busy);
    }));
  std::vector<HostProblem> out;
  for (auto& c : checks) {
    std::vector<HostProblem> found = c.get();
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace ppsearch::sglang
