#pragma once
// An in-memory Launcher for unit tests, as LevelDB's in-memory Env and
// ninja's VirtualFileSystem: no processes, sockets or clocks. Each node's
// server follows a script (runs until SIGTERM, exits at once with a status,
// ignores SIGTERM, cannot be started), each short command on a node gets a
// scripted answer (nvidia-smi's CSV, a failure, a timeout), and every call is
// recorded in order, so a test asserts the lifecycle an engine drives: which
// node started with what, which signal went where, which command ran when.
//
// Safe to use from two threads (a test's loopback HTTP stand-in may end a server
// while the engine polls it).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"

namespace ppsearch::launch {

// How a fake node's server behaves once started.
struct FakeServerScript {
  // StartServer fails with this message (ssh refused, srun rejected).
  std::optional<std::string> start_error;
  // Exits on its own with this status as soon as it is started (a crash
  // during start-up); unset: runs until a signal ends it.
  std::optional<int> exit_code_at_start;
  // SIGTERM does nothing; only SIGKILL ends it.
  bool ignores_sigterm = false;
  // Appended to the server's log file at start, as its output would be.
  std::string log;
  // Run when a server that started serving starts and when it exits, outside
  // the fake's lock: a test starts and stops what the server would serve
  // (a loopback HTTP stand-in on the node's port).
  std::function<void()> on_start;
  std::function<void()> on_exit;
};

// One recorded call, in the order the launcher saw it.
struct FakeCall {
  enum class Kind { kStart, kSignal, kRunOnHost, kStopRecorded };
  Kind kind = Kind::kStart;
  int node = 0;
  std::vector<std::string> argv;    // kStart: the server command; kRunOnHost: the command
  EnvList env;                      // kStart
  std::string log_path;             // kStart
  std::string tag;                  // kStart, kStopRecorded
  int signal = 0;                   // kSignal
  double seconds = 0;               // kRunOnHost: timeout; kStopRecorded: grace
  SudoStep step = SudoStep::kNone;  // kStart
  std::string input;                // kStart, kRunOnHost: what the command's standard input gets

  // "start 0 python3 -m ...", "signal 1 SIGTERM", "run 0 nvidia-smi ...",
  // "stop-recorded 2 <tag>": what order assertions compare.
  std::string Describe() const;
};

// Captured results for scripted answers.
Captured FakeOutput(std::string out);               // exit 0 with `out` on stdout
Captured FakeFailure(int status, std::string err);  // exit `status`, `err` on stderr
Captured FakeTimeout();                             // killed at the deadline

class FakeLauncher : public Launcher {
 public:
  static constexpr int kAnyNode = -1;

  // `hosts` name the nodes in server records ("node<N>" beyond them);
  // `kind` is the launcher it stands in for, as its records name it (state
  // files accept only the real kinds).
  explicit FakeLauncher(std::vector<std::string> hosts = {}, std::string kind = "local");
  ~FakeLauncher() override;

  // The script of the next server started on `node` (and of every later
  // one there, until scripted again). Unscripted: runs until SIGTERM.
  void ScriptServer(int node, FakeServerScript script);

  // Commands on `node` (or kAnyNode) whose words, joined by spaces, contain
  // `match` get `answers` in turn, the last one repeating. The most recent
  // matching script answers. Unscripted commands exit with 127.
  void ScriptCommand(int node, std::string match, std::vector<Result<Captured>> answers);

  // StopRecorded's answer (Ok unless set).
  void ScriptStopRecorded(Status status);

  // Ends `node`'s running server now with `status` (a crash mid-benchmark).
  void ExitServer(int node, int status);

  // Every call so far, and their descriptions in order.
  std::vector<FakeCall> calls() const;
  std::vector<std::string> CallLog() const;

  const char* kind() const override { return kind_.c_str(); }
  std::vector<std::string> WrapServer(int node, const ServerLaunch& launch) const override;
  Result<std::unique_ptr<ServerProcess>> StartServer(const ServerLaunch& launch) override;
  Result<Captured> RunOnHost(int node, const std::vector<std::string>& argv,
                             double timeout_s) override;
  // Answers at once, as scripted: `stop` is never asked.
  Result<Captured> RunOnHostWithInput(int node, const std::vector<std::string>& argv,
                                      double timeout_s, const std::string& input,
                                      const CaptureStop& stop) override;
  Status StopRecorded(const ServerRecord& record, double grace_s) override;

  struct State;  // shared with the servers it started, which may outlive it

 private:
  std::string kind_;
  std::shared_ptr<State> state_;
};

}  // namespace ppsearch::launch
