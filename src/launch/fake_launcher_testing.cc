#include "launch/fake_launcher_testing.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <mutex>

#include "launch/launchers.h"
#include "util/files.h"

namespace ppsearch::launch {

struct FakeLauncher::State {
  struct Server {
    int node = 0;
    bool ignores_sigterm = false;
    std::function<void()> on_exit;
    std::optional<ExitInfo> exit;
  };
  struct CommandScript {
    int node = kAnyNode;
    std::string match;
    std::vector<Result<Captured>> answers;
    size_t next = 0;
  };

  std::mutex mu;
  std::vector<std::string> hosts;
  std::map<int, FakeServerScript> servers_scripted;
  std::vector<CommandScript> commands;
  Status stop_recorded = Status::Ok();
  std::vector<FakeCall> calls;
  std::vector<std::shared_ptr<Server>> servers;  // every one started, in order
  int64_t next_pid = 1000;

  // Marks `server` exited (under `mu`); its on_exit, for the caller to run
  // once the lock is released.
  static std::function<void()> Exit(Server& server, ExitInfo exit) {
    server.exit = exit;
    return std::move(server.on_exit);
  }
};

namespace {

class FakeProcess : public ServerProcess {
 public:
  FakeProcess(std::shared_ptr<FakeLauncher::State> state,
              std::shared_ptr<FakeLauncher::State::Server> server, ServerRecord record)
      : state_(std::move(state)), server_(std::move(server)), record_(std::move(record)) {}

  std::optional<ExitInfo> Poll() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return server_->exit;
  }

  Status Signal(int sig) override {
    std::function<void()> on_exit;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      FakeCall c;
      c.kind = FakeCall::Kind::kSignal;
      c.node = server_->node;
      c.signal = sig;
      state_->calls.push_back(c);
      const bool ends = sig == SIGKILL || (sig == SIGTERM && !server_->ignores_sigterm);
      if (server_->exit || !ends) return Status::Ok();
      ExitInfo exit;
      exit.signaled = true;
      exit.signal = sig;
      on_exit = FakeLauncher::State::Exit(*server_, exit);
    }
    if (on_exit) on_exit();
    return Status::Ok();
  }

  ServerRecord Record() const override { return record_; }

 private:
  std::shared_ptr<FakeLauncher::State> state_;
  std::shared_ptr<FakeLauncher::State::Server> server_;
  ServerRecord record_;
};

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::string FakeCall::Describe() const {
  const std::string n = std::to_string(node);
  switch (kind) {
    case Kind::kStart:
      return "start " + n + " " + Joined(argv);
    case Kind::kSignal:
      return "signal " + n + " " + SignalName(signal);
    case Kind::kRunOnHost:
      return "run " + n + " " + Joined(argv);
    case Kind::kStopRecorded:
      return "stop-recorded " + n + " " + tag;
  }
  return "?";
}

Captured FakeOutput(std::string out) {
  Captured c;
  c.out = std::move(out);
  return c;
}

Captured FakeFailure(int status, std::string err) {
  Captured c;
  c.exit.code = status;
  c.err = std::move(err);
  return c;
}

Captured FakeTimeout() {
  Captured c;
  c.exit.signaled = true;
  c.exit.signal = SIGKILL;
  c.timed_out = true;
  return c;
}

FakeLauncher::FakeLauncher(std::vector<std::string> hosts, std::string kind)
    : kind_(std::move(kind)), state_(std::make_shared<State>()) {
  state_->hosts = std::move(hosts);
}

FakeLauncher::~FakeLauncher() = default;

void FakeLauncher::ScriptServer(int node, FakeServerScript script) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->servers_scripted[node] = std::move(script);
}

void FakeLauncher::ScriptCommand(int node, std::string match,
                                 std::vector<Result<Captured>> answers) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->commands.push_back({node, std::move(match), std::move(answers), 0});
}

void FakeLauncher::ScriptStopRecorded(Status status) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->stop_recorded = std::move(status);
}

void FakeLauncher::ExitServer(int node, int status) {
  std::function<void()> on_exit;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    for (auto it = state_->servers.rbegin(); it != state_->servers.rend(); ++it) {
      if ((*it)->node != node || (*it)->exit) continue;
      ExitInfo exit;
      exit.code = status;
      on_exit = State::Exit(**it, exit);
      break;
    }
  }
  if (on_exit) on_exit();
}

std::vector<FakeCall> FakeLauncher::calls() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->calls;
}

std::vector<std::string> FakeLauncher::CallLog() const {
  std::vector<std::string> out;
  for (const FakeCall& c : calls()) out.push_back(c.Describe());
  return out;
}

std::vector<std::string> FakeLauncher::WrapServer(int, const ServerLaunch& launch) const {
  return NodeWords(launch);
}

Result<std::unique_ptr<ServerProcess>> FakeLauncher::StartServer(const ServerLaunch& launch) {
  // The log opened as Spawn opens it: never through a link under the run
  // directory, so a refusal is the real launchers'.
  int log_fd = -1;
  if (!launch.log_root.empty() && launch.log_path.rfind(launch.log_root + "/", 0) == 0) {
    PPS_ASSIGN_OR_RETURN(
        log_fd, OpenBelow(launch.log_root, launch.log_path.substr(launch.log_root.size() + 1),
                          O_WRONLY | O_CREAT | O_APPEND, 0644, true));
  }
  FakeServerScript script;
  auto server = std::make_shared<State::Server>();
  ServerRecord record;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    FakeCall c;
    c.kind = FakeCall::Kind::kStart;
    c.node = launch.node;
    c.argv = launch.argv;
    c.env = launch.env;
    c.log_path = launch.log_path;
    c.tag = launch.tag;
    c.step = launch.step;
    c.input = StepInput(launch.step);
    state_->calls.push_back(c);
    if (auto it = state_->servers_scripted.find(launch.node); it != state_->servers_scripted.end())
      script = it->second;
    if (script.start_error) {
      if (log_fd >= 0) ::close(log_fd);
      return MakeError(*script.start_error);
    }
    server->node = launch.node;
    server->ignores_sigterm = script.ignores_sigterm;
    if (script.exit_code_at_start) {
      server->exit = ExitInfo{};
      server->exit->code = *script.exit_code_at_start;
    } else {
      server->on_exit = script.on_exit;
    }
    state_->servers.push_back(server);
    record.launcher = kind();
    const auto n = static_cast<size_t>(launch.node);
    record.host = n < state_->hosts.size() ? state_->hosts[n] : "node" + std::to_string(n);
    record.node = launch.node;
    record.pid = state_->next_pid++;
    record.tag = launch.tag;
  }
  // Its output, as a real launcher streams it into the log file.
  if (log_fd >= 0) {
    for (size_t done = 0; done < script.log.size();) {
      const ssize_t n = ::write(log_fd, script.log.data() + done, script.log.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(log_fd);
  } else {
    std::ofstream(launch.log_path, std::ios::app) << script.log;
  }
  if (!script.exit_code_at_start && script.on_start) script.on_start();
  return std::unique_ptr<ServerProcess>(new FakeProcess(state_, server, record));
}

Result<Captured> FakeLauncher::RunOnHost(int node, const std::vector<std::string>& argv,
                                         double timeout_s) {
  return RunOnHostWithInput(node, argv, timeout_s, "", {});
}

Result<Captured> FakeLauncher::RunOnHostWithInput(int node, const std::vector<std::string>& argv,
                                                  double timeout_s, const std::string& input,
                                                  const CaptureStop&) {
  std::lock_guard<std::mutex> lock(state_->mu);
  FakeCall c;
  c.kind = FakeCall::Kind::kRunOnHost;
  c.node = node;
  c.argv = argv;
  c.seconds = timeout_s;
  c.input = input;
  state_->calls.push_back(c);
  const std::string command = Joined(argv);
  for (auto it = state_->commands.rbegin(); it != state_->commands.rend(); ++it) {
    if ((it->node != kAnyNode && it->node != node) ||
        command.find(it->match) == std::string::npos || it->answers.empty())
      continue;
    const size_t at = std::min(it->next, it->answers.size() - 1);
    ++it->next;
    return it->answers[at];
  }
  return FakeFailure(127, "fake launcher: no answer scripted for '" + command + "' on node " +
                              std::to_string(node));
}

Status FakeLauncher::StopRecorded(const ServerRecord& record, double grace_s) {
  std::lock_guard<std::mutex> lock(state_->mu);
  FakeCall c;
  c.kind = FakeCall::Kind::kStopRecorded;
  c.node = record.node;
  c.tag = record.tag;
  c.seconds = grace_s;
  state_->calls.push_back(c);
  return state_->stop_recorded;
}

}  // namespace ppsearch::launch
