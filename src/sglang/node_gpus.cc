#include "sglang/node_gpus.h"

#include <fmt/format.h>

#include <sstream>

#include "sglang/commands.h"

namespace ppsearch::sglang {
namespace {

std::vector<std::string> SmiArgv(const spec::Spec& spec, int node) {
  std::vector<std::string> argv;
  for (const std::string& w : spec.cluster.nvidia_smi) argv.push_back(FillHostWords(w, spec, node));
  return argv;
}

Result<std::string> RunSmi(launch::Launcher& launcher, const spec::Spec& spec, int node,
                           const std::string& query, std::optional<double> timeout) {
  const double timeout_s = timeout.value_or(spec.lifecycle.host_timeout_s);
  std::vector<std::string> argv = SmiArgv(spec, node);
  argv.push_back(query);
  argv.push_back("--format=csv,noheader,nounits");
  const std::string& host = spec.cluster.hosts[node].name;
  PPS_ASSIGN_OR_RETURN(launch::Captured c, launcher.RunOnHost(node, argv, timeout_s));
  if (c.timed_out)
    return MakeError(fmt::format("{} on {} did not answer within {} s", argv[0], host, timeout_s));
  if (!c.exit.ok()) {
    std::string why = c.err.empty() ? c.out : c.err;
    why = why.substr(0, why.find('\n'));
    return MakeError(fmt::format("{} on {} {}: {}", argv[0], host, c.exit.Describe(),
                                 why.empty() ? "no message" : why));
  }
  return c.out;
}

std::string Trim(std::string s) {
  const size_t b = s.find_first_not_of(" \t\r");
  const size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

Result<std::string> QueryGpuCsv(launch::Launcher& launcher, const spec::Spec& spec, int node) {
  return RunSmi(launcher, spec, node, std::string("--query-gpu=") + nvidia_smi::kGpuQueryFields,
                std::nullopt);
}

Result<std::vector<ComputeApp>> ParseComputeApps(const std::string& text,
                                                 const std::string& source) {
  std::vector<ComputeApp> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (Trim(line).empty()) continue;
    // pid, process_name, used_memory: the name may hold commas, so split at the ends.
    const size_t first = line.find(',');
    const size_t last = line.rfind(',');
    if (first == std::string::npos || first == last)
      return MakeError(
          fmt::format("{}:{}: expected 'pid, process_name, used_memory': '{}'", source, n, line));
    ComputeApp app;
    const std::string pid = Trim(line.substr(0, first));
    const std::string used = Trim(line.substr(last + 1));
    app.name = Trim(line.substr(first + 1, last - first - 1));
    try {
      app.pid = std::stoll(pid);
      if (used.find("N/A") == std::string::npos && used.find("Not Supported") == std::string::npos)
        app.used_mib = std::stod(used);
    } catch (const std::exception&) {
      return MakeError(fmt::format("{}:{}: expected a pid and MiB: '{}'", source, n, line));
    }
    out.push_back(app);
  }
  return out;
}

Result<std::vector<ComputeApp>> QueryComputeApps(launch::Launcher& launcher, const spec::Spec& spec,
                                                 int node, std::optional<double> timeout_s) {
  PPS_ASSIGN_OR_RETURN(
      std::string text,
      RunSmi(launcher, spec, node, "--query-compute-apps=pid,process_name,used_memory", timeout_s));
  return ParseComputeApps(text,
                          spec.cluster.nvidia_smi[0] + " on " + spec.cluster.hosts[node].name);
}

Result<std::vector<std::string>> GpusAbove(launch::Launcher& launcher, const spec::Spec& spec,
                                           int node, double threshold_mib,
                                           std::optional<double> timeout_s) {
  PPS_ASSIGN_OR_RETURN(
      std::string csv,
      RunSmi(launcher, spec, node, std::string("--query-gpu=") + nvidia_smi::kGpuQueryFields,
             timeout_s));
  PPS_ASSIGN_OR_RETURN(std::vector<nvidia_smi::GpuMemory> gpus,
                       nvidia_smi::ParseGpuMemoryCsv(csv, spec.cluster.nvidia_smi[0] + " on " +
                                                              spec.cluster.hosts[node].name));
  std::vector<std::string> out;
  for (const auto& g : gpus)
    if (!g.unreadable.empty())
      out.push_back(fmt::format("GPU {} reads {}", g.index, g.unreadable));
    else if (g.used_mib && *g.used_mib > threshold_mib)
      out.push_back(fmt::format("GPU {} holds {:.0f} MiB", g.index, *g.used_mib));
  return out;
}

}  // namespace ppsearch::sglang
