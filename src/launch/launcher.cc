#include "launch/launcher.h"

#include <unistd.h>

#include <filesystem>

#include "launch/launchers.h"

namespace ppsearch::launch {

std::vector<std::string> Launcher::NodeWords(const ServerLaunch& launch) const {
  if (!sudo_.Runs(launch.step)) return WithEnv(launch.env, launch.argv);
  // `env K=V sudo --preserve-env=K -- ...`: env execs sudo, so a value is
  // not left on the command line of a process that lives as long as the server.
  std::vector<std::string> names;
  for (const auto& [name, value] : launch.env) names.push_back(name);
  return WithEnv(launch.env, sudo_.Wrap(launch.argv, names));
}

std::string Launcher::StepInput(SudoStep step) const {
  return sudo_.Runs(step) ? sudo_.input() : "";
}

Result<Captured> Launcher::RunStep(SudoStep step, int node, const std::vector<std::string>& argv,
                                   double timeout_s) {
  return RunStepWithInput(step, node, argv, timeout_s, "");
}

Result<Captured> Launcher::RunStepWithInput(SudoStep step, int node,
                                            const std::vector<std::string>& argv, double timeout_s,
                                            const std::string& input, const CaptureStop& stop) {
  if (!sudo_.Runs(step)) return RunOnHostWithInput(node, argv, timeout_s, input, stop);
  PPS_ASSIGN_OR_RETURN(Captured c, RunOnHostWithInput(node, sudo_.Wrap(argv), timeout_s,
                                                      sudo_.input() + input, stop));
  if (!c.exit.ok())
    if (std::optional<std::string> refused = sudo_.Refusal(c.err))
      return MakeError(*refused + " for the " + SudoStepName(step) + " step on node " +
                       std::to_string(node));
  return c;
}

std::string SshControlDir() { return "/tmp/ppsearch-ssh-" + std::to_string(::getpid()); }

void RemoveSshControlDir(const std::string& control_dir) {
  if (control_dir.empty()) return;
  std::error_code ec;
  for (int attempt = 0; attempt < 3 && std::filesystem::exists(control_dir, ec); ++attempt)
    std::filesystem::remove_all(control_dir, ec);
}

Status CheckSudo(Launcher& launcher, const spec::Spec& spec, double timeout_s) {
  const Sudo& sudo = launcher.sudo();
  if (sudo.empty() || !sudo.has_password()) return Status::Ok();
  for (size_t n = 0; n < spec.cluster.hosts.size(); ++n) {
    const int node = static_cast<int>(n);
    const std::string& host = spec.cluster.hosts[n].name;
    // -v authenticates without running a command: any sudoers rule allows it.
    PPS_ASSIGN_OR_RETURN(Captured c,
                         launcher.RunOnHostWithInput(node, {"sudo", "-k", "-S", "-p", "", "-v"},
                                                     timeout_s, sudo.input(), {}));
    if (c.exit.ok()) continue;
    if (std::optional<std::string> refused = sudo.Refusal(c.err))
      return MakeError("[cluster.sudo] on " + host + ": " + *refused);
    const std::string line = c.err.substr(0, c.err.find('\n'));
    return MakeError("[cluster.sudo] on " + host + ": `sudo -v` " +
                     (c.timed_out ? "did not finish in time" : c.exit.Describe()) +
                     (line.empty() ? "" : ": " + line));
  }
  return Status::Ok();
}

}  // namespace ppsearch::launch
