#pragma once
// Where a server runs: one small interface with a launcher per way of
// reaching the nodes (local, ssh, slurm). A launcher starts a command on a
// node with its output streamed into a local file, signals its whole process
// tree, tells when and how it exited, runs short commands on a node
// (nvidia-smi, kill), and can stop a server that an earlier ppsearch process
// started, from what that process recorded (resume after a crash).

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "launch/process.h"
#include "launch/sudo.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::launch {

struct ServerLaunch {
  int node = 0;
  std::vector<std::string> argv;  // the server command, container wrapper included
  EnvList env;                    // set for the server (and the container runtime)
  std::string log_path;           // local file the output is appended to
  // What the output passes through on its way there (SpawnSpec::output_filter).
  std::vector<std::string> output_filter = {};
  EnvList filter_env = {};
  std::string tag;  // unique per run, sample and node: names Slurm steps
  // The run directory log_path lies in: no directory between them, nor the
  // log itself, is opened through a symbolic link (SpawnSpec::output_root).
  std::string log_root;
  // kContainer when argv runs a container runtime: through sudo when the
  // spec's [cluster.sudo] names that step.
  SudoStep step = SudoStep::kNone;
};

// What identifies a running server across ppsearch processes (the state file).
struct ServerRecord {
  std::string launcher;  // "local" | "ssh" | "slurm"
  std::string host;      // node's host name
  int node = 0;
  int64_t pid = 0;           // local: the server's pid (= its process group); ssh: remote pid
  uint64_t start_ticks = 0;  // the process's start time, against pid reuse (0: unknown)
  int64_t client_pid = 0;    // ssh/slurm: the local ssh or srun client
  std::string tag;           // slurm: the step name
  std::string slurm_job;     // slurm: the job id
  std::vector<std::string> cleanup;  // run on the host after a kill (remove a container)

  std::string Describe() const;  // "pid 1234 on n1", for messages
};

class ServerProcess {
 public:
  virtual ~ServerProcess() = default;
  // The exit, once it has exited (the local client's exit for ssh/slurm).
  virtual std::optional<ExitInfo> Poll() = 0;
  // `sig` to the server's whole process tree on its host.
  virtual Status Signal(int sig) = 0;
  virtual ServerRecord Record() const = 0;
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual const char* kind() const = 0;
  // The exact command this launcher executes locally to run `argv` on `node`
  // (the ssh or srun wrapper included): dry runs and commands.txt print it.
  virtual std::vector<std::string> WrapServer(int node, const ServerLaunch& launch) const = 0;
  virtual Result<std::unique_ptr<ServerProcess>> StartServer(const ServerLaunch& launch) = 0;
  // Runs a short command on `node` and captures its output.
  virtual Result<Captured> RunOnHost(int node, const std::vector<std::string>& argv,
                                     double timeout_s) = 0;
  // RunOnHost with `input` on the command's standard input (then closed);
  // an empty `input` is RunOnHost. When `stop` says so, the command is ended
  // early (Captured::stopped): its process group here gets SIGTERM, then
  // SIGKILL (RunCaptured); for ssh that group is the local client's.
  virtual Result<Captured> RunOnHostWithInput(int node, const std::vector<std::string>& argv,
                                              double timeout_s, const std::string& input,
                                              const CaptureStop& stop) = 0;
  // Runs one of ppsearch's own steps on `node`: through sudo (the password on
  // its standard input) when the spec's [cluster.sudo] names `step`, else as
  // RunOnHost. A refusal by sudo is an error saying so.
  Result<Captured> RunStep(SudoStep step, int node, const std::vector<std::string>& argv,
                           double timeout_s);
  // RunStep with `input` on the command's standard input, after the sudo
  // password where the step runs through sudo (sudo -S reads one line).
  Result<Captured> RunStepWithInput(SudoStep step, int node, const std::vector<std::string>& argv,
                                    double timeout_s, const std::string& input,
                                    const CaptureStop& stop = {});
  // Stops a server recorded by an earlier process: SIGTERM to its tree, then
  // SIGKILL after `grace_s`. Ok when it is not running (any more).
  virtual Status StopRecorded(const ServerRecord& record, double grace_s) = 0;
  // Releases per-run resources (ssh control connections).
  virtual void Close() {}

  // Which steps run through sudo, and its password (MakeLauncher sets it
  // from the spec; none by default).
  void set_sudo(Sudo sudo) { sudo_ = std::move(sudo); }
  const Sudo& sudo() const { return sudo_; }

 protected:
  // What a node executes for `launch`: `env K=V ... argv`, with sudo (which
  // keeps those variables) before argv when its step runs through sudo.
  std::vector<std::string> NodeWords(const ServerLaunch& launch) const;
  // What `step`'s command reads on standard input: the sudo password when
  // the step runs through sudo with one, else nothing.
  std::string StepInput(SudoStep step) const;

  Sudo sudo_;
};

// Before any sample: one `sudo -v` on every node (with the password on its
// standard input) when a step runs through sudo with a password, so a wrong
// password is one clear error naming the host and the file, not a failed
// sample. Ok when no step runs through sudo or there is no password.
Status CheckSudo(Launcher& launcher, const spec::Spec& spec, double timeout_s);

// The slurm launcher outside an allocation: what is wrong and what to do.
// Empty when SLURM_JOB_ID is set.
std::string SlurmAllocationProblem();

// ssh's control sockets for this process: a private directory with a short
// path (a Unix socket path holds at most 108 bytes), /tmp/ppsearch-ssh-PID.
std::string SshControlDir();
// Removes it (nothing for ""). The ssh masters remove their own sockets as
// they exit, perhaps while this walks the directory: a socket that vanished
// is not an error.
void RemoveSshControlDir(const std::string& control_dir);

// The launcher the spec's cluster.launcher names. `control_dir` holds ssh's
// control sockets (short path).
Result<std::unique_ptr<Launcher>> MakeLauncher(const spec::Spec& spec,
                                               const std::string& control_dir,
                                               double host_timeout_s);

}  // namespace ppsearch::launch
