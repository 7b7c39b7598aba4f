// The ssh launcher: the OpenSSH client, one ControlMaster connection per host
// (ControlPath in a private directory), BatchMode so it never prompts.
//
// A remote server is started as
//   exec /bin/sh -c 'echo ppsearch-pid $$ <start ticks>; exec "$@"' ppsearch-server WORD...
// sshd gives a command without a terminal its own session, and both execs keep
// that process, so the pid it prints is the session's process group: a later
// `kill -TERM -- -PID` on the host reaches the whole tree, even from another
// ppsearch process after a crash. Every spec value is a single-quoted WORD;
// the remote shell reads nothing else. A captured command that may be
// stopped (a probe) starts the same way, its marker on standard error.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "launch/launchers.h"
#include "launch/ssh_failure.h"

namespace ppsearch::launch {
namespace {

constexpr const char* kPidMarker = "ppsearch-pid ";

// Prints the marker, then becomes the server.
constexpr const char* kStartScript =
    "echo ppsearch-pid $$ $(cut -d\" \" -f22 /proc/$$/stat 2>/dev/null || echo 0); exec \"$@\"";

// The same for a command whose output is captured (a probe), the marker on
// its standard error: its standard output stays the command's alone.
constexpr const char* kStepScript =
    "echo ppsearch-pid $$ $(cut -d\" \" -f22 /proc/$$/stat 2>/dev/null || echo 0) >&2; "
    "exec \"$@\"";

// The marker's pid and start ticks from `err`, the line taken out; false
// when the command never printed it (ssh failed first).
bool TakeMarker(std::string& err, int64_t* pid, uint64_t* ticks) {
  const std::string marker(kPidMarker);
  size_t begin = err.rfind(marker, 0) == 0 ? 0 : err.find("\n" + marker);
  if (begin == std::string::npos) return false;
  if (begin != 0) ++begin;
  const size_t end = std::min(err.find('\n', begin), err.size());
  std::istringstream fields(err.substr(begin + marker.size(), end - begin - marker.size()));
  const bool found = static_cast<bool>(fields >> *pid >> *ticks) && *pid > 0;
  err.erase(begin, std::min(end + 1, err.size()) - begin);
  return found;
}

// Signals process group PID when its leader still has start time TICKS (0:
// unchecked); through sudo when the stop step runs through it. kill's own
// complaint (the group is gone) is no error; sudo's refusal stays on stderr.
std::string KillScript(const Sudo& sudo, int sig, int64_t pid, uint64_t ticks) {
  const std::string p = std::to_string(pid);
  std::string check = ticks == 0 ? "true"
                                 : "[ \"$(cut -d' ' -f22 /proc/" + p +
                                       "/stat 2>/dev/null)\" = " + std::to_string(ticks) + " ]";
  if (sudo.Runs(SudoStep::kStop))
    return check + " && " + ShellJoin(sudo.Wrap(KillGroupWords(sig, pid))) + "; exit 0";
  return check + " && kill -" + std::to_string(sig) + " -- -" + p + " 2>/dev/null; exit 0";
}

// Exit status 0 while the process group leader PID (with TICKS) exists and is not a zombie.
std::string AliveScript(int64_t pid, uint64_t ticks) {
  const std::string p = std::to_string(pid);
  std::string s = "s=$(cat /proc/" + p + "/stat 2>/dev/null) || exit 1; ";
  s += "case \"${s##*) }\" in Z*) exit 1;; esac; ";
  if (ticks != 0)
    s += "[ \"$(echo \"${s##*) }\" | cut -d' ' -f20)\" = " + std::to_string(ticks) +
         " ] || exit 1; ";
  return s + "exit 0";
}

class SshLauncher;

class SshProcess : public ChildProcess {
 public:
  SshProcess(SshLauncher* launcher, pid_t client, ServerRecord record)
      : ChildProcess(client, std::move(record)), launcher_(launcher) {}
  ~SshProcess() override { ReapSignallers(5); }
  std::optional<ExitInfo> Poll() override {
    ReapSignallers(0);
    return ChildProcess::Poll();
  }
  // Starts the remote kill and returns without waiting for it: a deployment's
  // nodes are signalled one after another, and an ssh round trip per node
  // (a fifth of a second even over the control connection) let the nodes
  // signalled first exit before the last were told, so those logged a lost
  // peer (an NCCL error) instead of stopping cleanly.
  Status Signal(int sig) override;

 private:
  // Reaps the finished kill commands; waits up to `wait_s` (then kills them).
  void ReapSignallers(double wait_s) {
    std::vector<pid_t> running;
    for (pid_t p : signallers_) {
      if (wait_s <= 0) {
        if (!PollExit(p)) running.push_back(p);
      } else if (!WaitExit(p, wait_s)) {
        ::kill(-p, SIGKILL);
        WaitExit(p, 1);
      }
    }
    signallers_ = std::move(running);
  }

  SshLauncher* launcher_;
  std::vector<pid_t> signallers_;  // ssh clients running a kill on the host
};

class SshLauncher : public Launcher {
 public:
  SshLauncher(const spec::Spec& spec, std::string control_dir, double connect_timeout_s)
      : spec_(spec), control_dir_(std::move(control_dir)), connect_timeout_s_(connect_timeout_s) {}
  const char* kind() const override { return "ssh"; }

  // ssh [options] -- address REMOTE-COMMAND. `-n` (stdin from /dev/null)
  // unless there is `input` to send: ssh forwards its stdin to the command.
  // A command that must end within `deadline_s` connects within a second
  // less, so that ssh gives up first and says why (a host that does not
  // answer is "Connection timed out", not only "no answer in time").
  std::vector<std::string> SshArgv(int node, const std::string& remote,
                                   const std::string& input = "", double deadline_s = 0) const {
    const spec::HostSpec& h = spec_.cluster.hosts[node];
    const double connect_s =
        deadline_s > 0 ? std::min(connect_timeout_s_, deadline_s - 1) : connect_timeout_s_;
    std::vector<std::string> a = {
        "ssh",
        "-n",
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=" + std::to_string(std::max(1, static_cast<int>(connect_s)))};
    if (!control_dir_.empty()) {
      for (const char* o : {"ControlMaster=auto", "ControlPersist=120"}) {
        a.push_back("-o");
        a.push_back(o);
      }
      a.push_back("-o");
      a.push_back("ControlPath=" + control_dir_ + "/%C");
    }
    if (!spec_.cluster.ssh_config.empty()) {
      a.push_back("-F");
      a.push_back(spec_.cluster.ssh_config);
    }
    for (const auto& o : spec_.cluster.ssh_options) {
      a.push_back("-o");
      a.push_back(o);
    }
    if (!h.ssh_key.empty()) {
      a.push_back("-i");
      a.push_back(h.ssh_key);
    }
    a.push_back("-p");
    a.push_back(std::to_string(h.ssh_port));
    if (!h.ssh_user.empty()) {
      a.push_back("-l");
      a.push_back(h.ssh_user);
    }
    a.push_back("--");
    a.push_back(spec_.cluster.Address(node));
    a.push_back(remote);
    if (!input.empty()) a.erase(a.begin() + 1);  // the "-n"
    return a;
  }

  std::vector<std::string> WrapServer(int node, const ServerLaunch& launch) const override {
    std::string remote = "exec /bin/sh -c " + ShellQuote(kStartScript) + " ppsearch-server " +
                         ShellJoin(NodeWords(launch));
    return SshArgv(node, remote, StepInput(launch.step));
  }

  Result<std::unique_ptr<ServerProcess>> StartServer(const ServerLaunch& launch) override {
    SpawnSpec s;
    s.argv = WrapServer(launch.node, launch);
    s.output_path = launch.log_path;
    s.output_filter = launch.output_filter;
    s.filter_env = launch.filter_env;
    s.output_root = launch.log_root;
    s.input = StepInput(launch.step);
    std::error_code ec;
    const auto offset = std::filesystem::exists(launch.log_path, ec)
                            ? std::filesystem::file_size(launch.log_path, ec)
                            : 0;
    PPS_ASSIGN_OR_RETURN(pid_t client, Spawn(s));
    ServerRecord r;
    r.launcher = kind();
    r.host = spec_.cluster.hosts[launch.node].name;
    r.node = launch.node;
    r.client_pid = client;
    r.tag = launch.tag;
    // The remote pid is the first line the remote shell prints.
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(connect_timeout_s_ + 5);
    while (true) {
      if (ReadMarker(launch.log_path, offset, &r.pid, &r.start_ticks)) break;
      std::optional<ExitInfo> exited = PollExit(client);
      if (exited || std::chrono::steady_clock::now() >= deadline) {
        if (!exited) {
          ::kill(-client, SIGKILL);
          WaitExit(client, 5);
        }
        return MakeError("cannot start the server on " + r.host + " over ssh (" +
                         spec_.cluster.Address(launch.node) + "): ssh " +
                         (exited ? exited->Describe() : "printed no remote pid in time") +
                         "; see " + launch.log_path);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::unique_ptr<ServerProcess>(new SshProcess(this, client, r));
  }

  Result<Captured> RunOnHost(int node, const std::vector<std::string>& argv,
                             double timeout_s) override {
    return RunOnHostWithInput(node, argv, timeout_s, "", {});
  }

  // Ending ssh's client here does not end the remote command: sshd leaves a
  // command without a terminal running until it next writes. So a command
  // that may be stopped first prints its pid (kStepScript), and a stop or a
  // timeout signals its process group on the host, SIGTERM and then SIGKILL
  // after kStopGraceS, as StopRecorded stops a server.
  Result<Captured> RunOnHostWithInput(int node, const std::vector<std::string>& argv,
                                      double timeout_s, const std::string& input,
                                      const CaptureStop& stop) override {
    const std::string remote =
        stop ? "exec /bin/sh -c " + ShellQuote(kStepScript) + " ppsearch-step " + ShellJoin(argv)
             : ShellJoin(argv);
    PPS_ASSIGN_OR_RETURN(Captured c, RunCaptured(SshArgv(node, remote, input, timeout_s), timeout_s,
                                                 {}, input, stop));
    ServerRecord r;
    const bool marked = stop && TakeMarker(c.err, &r.pid, &r.start_ticks);
    if (marked && (c.stopped || c.timed_out)) {
      r.launcher = kind();
      r.host = spec_.cluster.hosts[node].name;
      r.node = node;
      if (Status st = StopRecorded(r, kStopGraceS); !st.ok())
        c.err +=
            "ppsearch: the command on " + r.host + " may still run: " + st.error().message + "\n";
    }
    if (!c.exit.signaled && c.exit.code == 255)
      return MakeError("ssh to " + spec_.cluster.hosts[node].name + " (" +
                       spec_.cluster.Address(node) + "): " + DescribeSshFailure(c.err));
    return c;
  }

  Status SignalRemote(int node, int sig, int64_t pid, uint64_t ticks) {
    const std::string input = StepInput(SudoStep::kStop);
    PPS_ASSIGN_OR_RETURN(Captured c,
                         RunCaptured(SshArgv(node, KillScript(sudo_, sig, pid, ticks), input),
                                     connect_timeout_s_, {}, input));
    std::optional<std::string> refused = sudo_.Refusal(c.err);
    if (c.timed_out || c.exit.code == 255 || refused)
      return MakeError("cannot signal pid " + std::to_string(pid) + " on " +
                       spec_.cluster.hosts[node].name + ": " +
                       (refused ? *refused : FirstLine(c.err)));
    return Status::Ok();
  }

  // SignalRemote started in the background; its ssh client's pid.
  Result<pid_t> StartSignal(int node, int sig, int64_t pid, uint64_t ticks) {
    SpawnSpec s;
    s.input = StepInput(SudoStep::kStop);
    s.argv = SshArgv(node, KillScript(sudo_, sig, pid, ticks), s.input);
    return Spawn(s);
  }

  Result<bool> RemoteAlive(int node, int64_t pid, uint64_t ticks) {
    PPS_ASSIGN_OR_RETURN(Captured c,
                         RunCaptured(SshArgv(node, AliveScript(pid, ticks)), connect_timeout_s_));
    if (c.timed_out || c.exit.code == 255)
      return MakeError("cannot reach " + spec_.cluster.hosts[node].name + ": " + FirstLine(c.err));
    return c.exit.code == 0;
  }

  Status StopRecorded(const ServerRecord& r, double grace_s) override {
    const int node = NodeOf(r);
    if (node < 0)
      return MakeError("host " + r.host + " of " + r.Describe() + " is not in the spec");
    PPS_ASSIGN_OR_RETURN(bool alive, RemoteAlive(node, r.pid, r.start_ticks));
    if (!alive) return Status::Ok();
    PPS_RETURN_IF_ERROR(SignalRemote(node, SIGTERM, r.pid, r.start_ticks));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (std::chrono::steady_clock::now() < deadline) {
      PPS_ASSIGN_OR_RETURN(alive, RemoteAlive(node, r.pid, r.start_ticks));
      if (!alive) return Status::Ok();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    PPS_RETURN_IF_ERROR(SignalRemote(node, SIGKILL, r.pid, r.start_ticks));
    return Status::Ok();
  }

  void Close() override {
    if (control_dir_.empty()) return;
    for (size_t n = 0; n < spec_.cluster.hosts.size(); ++n) {
      std::vector<std::string> a = SshArgv(static_cast<int>(n), "");
      a.pop_back();  // no remote command
      a.insert(a.begin() + 1, {"-O", "exit"});
      RunCaptured(a, 5);
    }
  }

 private:
  int NodeOf(const ServerRecord& r) const {
    for (size_t n = 0; n < spec_.cluster.hosts.size(); ++n)
      if (spec_.cluster.hosts[n].name == r.host) return static_cast<int>(n);
    return -1;
  }

  static std::string FirstLine(const std::string& text) {
    std::string line = text.substr(0, text.find('\n'));
    return line.empty() ? "no message" : line;
  }

  // "ppsearch-pid PID TICKS" from the log written since `offset`.
  static bool ReadMarker(const std::string& path, uintmax_t offset, int64_t* pid, uint64_t* ticks) {
    std::ifstream in(path);
    in.seekg(static_cast<std::streamoff>(offset));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(kPidMarker, 0) != 0) continue;
      std::istringstream fields(line.substr(std::string(kPidMarker).size()));
      if (fields >> *pid >> *ticks) return *pid > 0;
      return false;
    }
    return false;
  }

  const spec::Spec& spec_;
  std::string control_dir_;
  double connect_timeout_s_;
};

Status SshProcess::Signal(int sig) {
  PPS_ASSIGN_OR_RETURN(pid_t p,
                       launcher_->StartSignal(record_.node, sig, record_.pid, record_.start_ticks));
  signallers_.push_back(p);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Launcher> MakeSshLauncher(const spec::Spec& spec, const std::string& control_dir,
                                          double connect_timeout_s) {
  return std::make_unique<SshLauncher>(spec, control_dir, connect_timeout_s);
}

}  // namespace ppsearch::launch
