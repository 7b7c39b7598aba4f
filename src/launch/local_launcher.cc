// The local launcher: every node is this machine (a single-node cluster, or
// a rehearsal with several "nodes" on distinct loopback addresses or ports).
// The server runs in its own session, so its pid is its process group and a
// signal to -pid reaches everything it started.

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "launch/launchers.h"

namespace ppsearch::launch {
namespace {

// A zombie (exited, not yet reaped by its new parent) counts as gone.
bool AliveAndSame(int64_t pid, uint64_t start_ticks) {
  const std::optional<ProcStat> stat = ReadProcStat(static_cast<pid_t>(pid));
  if (!stat || stat->state == 'Z') return false;
  return start_ticks == 0 || stat->start_ticks == start_ticks;
}

// `sig` to process group `pgid`; through sudo when the spec runs the stop
// step through it (a server the container step started as root).
Status SignalGroup(const Sudo& sudo, int64_t pgid, int sig, double timeout_s) {
  if (sudo.Runs(SudoStep::kStop)) {
    PPS_ASSIGN_OR_RETURN(
        Captured c, RunCaptured(sudo.Wrap(KillGroupWords(sig, pgid)), timeout_s, {}, sudo.input()));
    if (std::optional<std::string> refused = sudo.Refusal(c.err))
      return MakeError("cannot signal process group " + std::to_string(pgid) + ": " + *refused);
    return Status::Ok();
  }
  if (::kill(-static_cast<pid_t>(pgid), sig) != 0 && errno != ESRCH)
    return MakeError("cannot signal process group " + std::to_string(pgid) + ": " +
                     strerror(errno));
  return Status::Ok();
}

class LocalProcess : public ChildProcess {
 public:
  LocalProcess(pid_t child, ServerRecord record, const Sudo* sudo, double timeout_s)
      : ChildProcess(child, std::move(record)), sudo_(sudo), timeout_s_(timeout_s) {}
  // The group may outlive its leader (a child that ignored SIGTERM).
  Status Signal(int sig) override { return SignalGroup(*sudo_, child_, sig, timeout_s_); }

 private:
  const Sudo* sudo_;  // the launcher's, which outlives its servers
  double timeout_s_;
};

class LocalLauncher : public Launcher {
 public:
  explicit LocalLauncher(const spec::Spec& spec) : spec_(spec) {}
  const char* kind() const override { return "local"; }

  std::vector<std::string> WrapServer(int, const ServerLaunch& launch) const override {
    return NodeWords(launch);
  }

  Result<std::unique_ptr<ServerProcess>> StartServer(const ServerLaunch& launch) override {
    SpawnSpec s;
    s.argv = WrapServer(launch.node, launch);
    s.output_path = launch.log_path;
    s.output_filter = launch.output_filter;
    s.filter_env = launch.filter_env;
    s.output_root = launch.log_root;
    s.input = StepInput(launch.step);
    PPS_ASSIGN_OR_RETURN(pid_t pid, Spawn(s));
    ServerRecord r;
    r.launcher = kind();
    r.host = spec_.cluster.hosts[launch.node].name;
    r.node = launch.node;
    r.pid = pid;
    r.start_ticks = ProcessStartTicks(pid).value_or(0);
    r.tag = launch.tag;
    return std::unique_ptr<ServerProcess>(
        new LocalProcess(pid, r, &sudo_, spec_.lifecycle.host_timeout_s));
  }

  Result<Captured> RunOnHost(int, const std::vector<std::string>& argv, double timeout_s) override {
    return RunCaptured(argv, timeout_s);
  }

  // The command runs in its own session here: a stop reaches all it started.
  Result<Captured> RunOnHostWithInput(int, const std::vector<std::string>& argv, double timeout_s,
                                      const std::string& input, const CaptureStop& stop) override {
    return RunCaptured(argv, timeout_s, {}, input, stop);
  }

  Status StopRecorded(const ServerRecord& r, double grace_s) override {
    if (!AliveAndSame(r.pid, r.start_ticks)) return Status::Ok();
    const double timeout_s = spec_.lifecycle.host_timeout_s;
    PPS_RETURN_IF_ERROR(SignalGroup(sudo_, r.pid, SIGTERM, timeout_s));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (AliveAndSame(r.pid, r.start_ticks) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (AliveAndSame(r.pid, r.start_ticks))
      PPS_RETURN_IF_ERROR(SignalGroup(sudo_, r.pid, SIGKILL, timeout_s));
    for (int i = 0; i < 250 && AliveAndSame(r.pid, r.start_ticks); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (AliveAndSame(r.pid, r.start_ticks))
      return MakeError("server " + r.Describe() + " survived SIGKILL");
    return Status::Ok();
  }

 private:
  const spec::Spec& spec_;
};

}  // namespace

std::vector<std::string> WithEnv(const EnvList& env, const std::vector<std::string>& argv) {
  if (env.empty()) return argv;
  std::vector<std::string> out = {"env"};
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::vector<std::string> KillGroupWords(int sig, int64_t pgid) {
  // Appended, not `"-" + std::to_string(...)`: g++ 12 warns (-Wrestrict) on that.
  std::string signal = "-", group = "-";
  signal += std::to_string(sig);
  group += std::to_string(pgid);
  return {"kill", signal, "--", group};
}

std::unique_ptr<Launcher> MakeLocalLauncher(const spec::Spec& spec) {
  return std::make_unique<LocalLauncher>(spec);
}

}  // namespace ppsearch::launch
