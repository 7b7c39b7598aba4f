#include "launch/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "util/files.h"

extern char** environ;

namespace ppsearch::launch {
namespace {

// The environment a child gets: ours with `extra` set on top, built before
// fork because only async-signal-safe calls are allowed between fork and exec.
std::vector<std::string> ChildEnvironment(const EnvList& extra) {
  std::map<std::string, std::string> vars;
  std::vector<std::string> order;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (!vars.count(name)) order.push_back(name);
    vars[name] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : extra) {
    if (!vars.count(name)) order.push_back(name);
    vars[name] = value;
  }
  std::vector<std::string> out;
  for (const auto& name : order) out.push_back(name + "=" + vars[name]);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& words) {
  std::vector<char*> out;
  for (auto& w : words) out.push_back(w.data());
  out.push_back(nullptr);
  return out;
}

ExitInfo FromStatus(int status) {
  ExitInfo e;
  if (WIFSIGNALED(status)) {
    e.signaled = true;
    e.signal = WTERMSIG(status);
  } else {
    e.code = WEXITSTATUS(status);
  }
  return e;
}

// In the child after fork: only async-signal-safe calls until exec. `in_fd`
// < 0: stdin is /dev/null.
[[noreturn]] void ExecChild(char* const* argv, char* const* envp, int in_fd, int out_fd, int err_fd,
                            bool new_session) {
  if (new_session) ::setsid();
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
  if (in_fd < 0) in_fd = ::open("/dev/null", O_RDONLY);
  if (in_fd >= 0) ::dup2(in_fd, STDIN_FILENO);
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(err_fd, STDERR_FILENO);
  ::execvpe(argv[0], argv, envp);
  const char* prefix = "ppsearch: cannot execute ";
  ::write(STDERR_FILENO, prefix, strlen(prefix));
  ::write(STDERR_FILENO, argv[0], strlen(argv[0]));
  ::write(STDERR_FILENO, ": ", 2);
  const char* why = strerror(errno);
  ::write(STDERR_FILENO, why, strlen(why));
  ::write(STDERR_FILENO, "\n", 1);
  ::_exit(127);
}

void CloseInput(int fds[2]);

// A pipe that will feed `input` to a child's stdin; {-1, -1} for no input.
Status OpenInput(const std::string& input, int fds[2]) {
  fds[0] = fds[1] = -1;
  if (input.empty()) return Status::Ok();
  if (input.size() > kMaxInputBytes)
    return MakeError("standard input of " + std::to_string(input.size()) +
                     " bytes is more than the " + std::to_string(kMaxInputBytes) + " allowed");
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return MakeError(std::string("pipe failed: ") + strerror(errno));
  // The whole input must fit the pipe (64 KiB by default on Linux; a lower
  // pipe-max-size or a user over the pipe quota gets less).
  const int capacity = ::fcntl(fds[1], F_GETPIPE_SZ);
  if (capacity < 0 || static_cast<size_t>(capacity) < input.size()) {
    if (::fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(input.size())) < 0) {
      const std::string why = strerror(errno);
      CloseInput(fds);
      return MakeError("standard input of " + std::to_string(input.size()) +
                       " bytes does not fit a pipe here: " + why);
    }
  }
  return Status::Ok();
}

// In the parent after fork: writes `input` while the read end is still open
// here (so a child that exited at once cannot make the write fail with
// SIGPIPE), then closes both ends: the child reads the input, then EOF. The
// input fits in the pipe's buffer, so the write never waits.
void FeedInput(const std::string& input, int fds[2]) {
  if (fds[1] < 0) return;
  size_t done = 0;
  while (done < input.size()) {
    const ssize_t n = ::write(fds[1], input.data() + done, input.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fds[1]);
  ::close(fds[0]);
}

void CloseInput(int fds[2]) {
  for (int i = 0; i < 2; ++i)
    if (fds[i] >= 0) ::close(fds[i]);
}

// Starts spec.output_filter with its standard input a new pipe and its
// output `out_fd`; returns the pipe's write end, for the command's output.
// Forked twice, so the filter is no child of this process: nothing here
// waits for it, and it ends at its input's end.
Result<int> StartOutputFilter(const SpawnSpec& spec, int out_fd) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return MakeError(std::string("pipe failed: ") + strerror(errno));
  std::vector<std::string> argv = spec.output_filter;
  std::vector<std::string> env = ChildEnvironment(spec.filter_env);
  std::vector<char*> argv_p = Pointers(argv);
  std::vector<char*> env_p = Pointers(env);
  const pid_t middle = ::fork();
  if (middle < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return MakeError(std::string("fork failed: ") + strerror(errno));
  }
  if (middle == 0) {
    if (::fork() == 0) ExecChild(argv_p.data(), env_p.data(), pipe_fds[0], out_fd, out_fd, true);
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  ::close(pipe_fds[0]);
  return pipe_fds[1];
}

// The file a command's output is appended to: /dev/null when none, else
// never through a symbolic link (see SpawnSpec::output_root).
Result<int> OpenOutput(const SpawnSpec& spec) {
  const int append = O_WRONLY | O_CREAT | O_APPEND;
  if (spec.output_path.empty()) {
    const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return MakeError(std::string("cannot open /dev/null: ") + strerror(errno));
    return fd;
  }
  const std::string& root = spec.output_root;
  if (!root.empty() && spec.output_path.rfind(root + "/", 0) == 0)
    return OpenBelow(root, spec.output_path.substr(root.size() + 1), append, 0600, true);
  const std::string dir = DirName(spec.output_path);
  return OpenBelow(dir.empty() ? "." : dir,
                   std::filesystem::path(spec.output_path).filename().string(), append, 0600,
                   false);
}

}  // namespace

std::string SignalName(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGINT:
      return "SIGINT";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(sig);
  }
}

std::string ExitInfo::Describe() const {
  if (signaled)
    return "was killed by signal " + std::to_string(signal) + " (" + SignalName(signal) + ")";
  return "exited with status " + std::to_string(code);
}

Result<pid_t> Spawn(const SpawnSpec& spec) {
  if (spec.argv.empty()) return MakeError("no command to start");
  // Private (0600): a server's output can hold what redaction has not yet
  // reached.
  PPS_ASSIGN_OR_RETURN(int fd, OpenOutput(spec));
  if (!spec.output_path.empty() && ::fchmod(fd, 0600) != 0) {
    ::close(fd);
    return MakeError("cannot make " + spec.output_path +
                     " private (chmod 600): " + strerror(errno));
  }
  if (!spec.output_filter.empty()) {
    Result<int> piped = StartOutputFilter(spec, fd);
    ::close(fd);
    if (!piped.ok()) return piped.error();
    fd = *piped;
  }
  int in[2];
  if (Status st = OpenInput(spec.input, in); !st.ok()) {
    ::close(fd);
    return st.error();
  }
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> env = ChildEnvironment(spec.env);
  std::vector<char*> argv_p = Pointers(argv);
  std::vector<char*> env_p = Pointers(env);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    CloseInput(in);
    return MakeError(std::string("fork failed: ") + strerror(errno));
  }
  if (pid == 0) ExecChild(argv_p.data(), env_p.data(), in[0], fd, fd, spec.new_session);
  ::close(fd);
  FeedInput(spec.input, in);
  return pid;
}

std::optional<ExitInfo> PollExit(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == pid) return FromStatus(status);
  if (r < 0 && errno == ECHILD) return ExitInfo{};  // reaped elsewhere: gone
  return std::nullopt;
}

std::optional<ExitInfo> WaitExit(pid_t pid, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    if (auto e = PollExit(pid)) return e;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Result<Captured> RunCaptured(const std::vector<std::string>& argv_in, double timeout_s,
                             const EnvList& extra_env, const std::string& input,
                             const CaptureStop& stop) {
  if (argv_in.empty()) return MakeError("no command to run");
  int in[2];
  PPS_RETURN_IF_ERROR(OpenInput(input, in));
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    CloseInput(in);
    return MakeError("pipe failed");
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    CloseInput(in);
    return MakeError("pipe failed");
  }
  std::vector<std::string> argv = argv_in;
  std::vector<std::string> env = ChildEnvironment(extra_env);
  std::vector<char*> argv_p = Pointers(argv);
  std::vector<char*> env_p = Pointers(env);
  const pid_t pid = ::fork();
  if (pid < 0) {
    CloseInput(in);
    return MakeError(std::string("fork failed: ") + strerror(errno));
  }
  if (pid == 0) ExecChild(argv_p.data(), env_p.data(), in[0], out_pipe[1], err_pipe[1], true);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  FeedInput(input, in);
  Captured c;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (!c.stopped && stop && stop()) {
      // SIGTERM first, so that the command can clean up (its temporary
      // files); the output is read on until it ends or the grace runs out.
      c.stopped = true;
      ::kill(-pid, SIGTERM);
      const auto grace_end =
          std::chrono::steady_clock::now() + std::chrono::duration<double>(kStopGraceS);
      if (grace_end < deadline) deadline = grace_end;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      c.timed_out = !c.stopped;
      ::kill(-pid, SIGKILL);
      break;
    }
    if (::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 100))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        (i == 0 ? c.out : c.err).append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  // A stopped command's workers may have closed their pipes and still run:
  // none is left. The leader is not reaped yet, so its group id is still its.
  if (c.stopped) ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  c.exit = FromStatus(status);
  return c;
}

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  ProcStat out;
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(rest >> field)) return std::nullopt;
    if (i == 3) out.state = field[0];
  }
  out.start_ticks = std::strtoull(field.c_str(), nullptr, 10);
  return out;
}

std::optional<uint64_t> ProcessStartTicks(pid_t pid) {
  auto stat = ReadProcStat(pid);
  if (!stat) return std::nullopt;
  return stat->start_ticks;
}

bool ProcessExists(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

std::string ShellQuote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789-_./:=,@%+") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& w : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(w);
  }
  return out;
}

}  // namespace ppsearch::launch
