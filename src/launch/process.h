#pragma once
// Processes on this machine, at the edge: spawning a command with its output
// appended to a file (in its own session, so one signal reaches its whole
// tree), polling for its exit, and running a short command with its output
// captured under a deadline. Commands are argv vectors executed directly;
// nothing here goes through a shell.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/result.h"

namespace ppsearch::launch {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// How a process ended.
struct ExitInfo {
  int code = 0;    // exit status when !signaled
  int signal = 0;  // terminating signal when signaled
  bool signaled = false;
  bool ok() const { return !signaled && code == 0; }
  std::string Describe() const;  // "exited with status 1", "was killed by signal 9 (SIGKILL)"
};

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  EnvList env;                    // added to (or replacing in) this process's environment
  std::string output_path;        // stdout and stderr are appended here; empty: /dev/null
  bool new_session = true;        // setsid(): pid == process group id
  // Written to the command's standard input, which is then closed (at most
  // kMaxInputBytes, so the write never waits on the reader); empty: stdin is
  // /dev/null. A secret travels here, never on the command line.
  std::string input;
  // A program the output passes through on its way to output_path (it
  // reads it on its standard input and writes the file), with these
  // additions to its environment; empty: the output goes to the file as
  // is. It runs in a session of its own, outside this process's children,
  // so it outlives this process and ends when the output does.
  std::vector<std::string> output_filter = {};
  EnvList filter_env = {};
  // When set, `output_path` lies under this directory and every directory
  // between them is opened by descriptor, never through a symbolic link (the
  // output file itself never is one either way).
  std::string output_root;
};

// Within Linux's default pipe capacity (64 KiB); the probe's script is the largest.
inline constexpr size_t kMaxInputBytes = 60 * 1024;

// Starts `spec`. The output file is readable by its owner only (0600, an
// existing one made so): a server's output may hold what the run keeps
// secret. Errors: the output file cannot be opened, fork fails. A program
// that cannot be executed exits with status 127 and says why in its output
// file.
Result<pid_t> Spawn(const SpawnSpec& spec);

// The exit of a child of this process, if it has exited (reaps it).
std::optional<ExitInfo> PollExit(pid_t pid);
// Waits up to `timeout_s` for the child to exit.
std::optional<ExitInfo> WaitExit(pid_t pid, double timeout_s);

struct Captured {
  ExitInfo exit;
  std::string out;
  std::string err;
  bool timed_out = false;  // killed (SIGKILL to its group) at the deadline
  bool stopped = false;    // ended early because `stop` said so (CaptureStop)
};

// Asked of a captured command while it runs (at least every 100 ms): true
// ends it early. Empty: it runs to its end or its deadline.
using CaptureStop = std::function<bool()>;

// How long a stopped command's group has between SIGTERM and SIGKILL: long
// enough for a Python script to unwind and remove its temporary files.
inline constexpr double kStopGraceS = 5;

// Runs `argv` to completion, capturing stdout and stderr, killing it and its
// process group after `timeout_s`, with `input` on its standard input as
// SpawnSpec::input. When `stop` says so, its process group gets SIGTERM,
// then SIGKILL after kStopGraceS (Captured::stopped): a command interrupted
// leaves nothing running here. Errors only when it cannot be started.
Result<Captured> RunCaptured(const std::vector<std::string>& argv, double timeout_s,
                             const EnvList& env = {}, const std::string& input = "",
                             const CaptureStop& stop = {});

// The kernel's start time of `pid` (clock ticks since boot, /proc/<pid>/stat
// field 22): with the pid it identifies a process across pid reuse.
std::optional<uint64_t> ProcessStartTicks(pid_t pid);

// The process `pid` as /proc/<pid>/stat shows it; nullopt when it is gone.
struct ProcStat {
  char state = '?';  // 'R', 'S', 'Z' (exited, not yet reaped), ...
  uint64_t start_ticks = 0;
};
std::optional<ProcStat> ReadProcStat(pid_t pid);

// kill(pid, 0) succeeds or fails with EPERM.
bool ProcessExists(pid_t pid);

// Shell quoting for display and for the one place a remote shell reads a
// command (ssh): safe words as they are, anything else in single quotes.
std::string ShellQuote(const std::string& word);
std::string ShellJoin(const std::vector<std::string>& argv);

// "SIGTERM" for display.
std::string SignalName(int sig);

}  // namespace ppsearch::launch
