#pragma once
// A real Slurm cluster on this machine for the slurm launcher's end-to-end
// tests: Debian's munged, slurmctld and one slurmd per node (`slurmd -N
// NAME`; Debian's slurmd runs several on one host, each on its own port),
// children of the test with a slurm.conf generated in a private directory.
// The clients (srun, sbatch, squeue, scancel) find it through SLURM_CONF,
// which Start sets in this process for the commands the test runs, and find
// munged through the conf's AuthInfo=socket=. Each node reports 8 GPUs
// (gres gpu, device files linked to /dev/null) so job scripts may ask for
// --gres=gpu:8 as on a GPU cluster. The daemons run as root (SlurmUser=root,
// slurmd starts each step as its user), without cgroups: proctrack/linuxproc
// finds a step's processes, task/none binds nothing.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "process_fixture.h"

namespace ppsearch::testing {

struct SlurmNode {
  std::string name;
  std::string address;  // NodeAddr: a loopback address
};

struct ShellResult {
  int status = -1;  // the exit status; 124 when `timeout` stopped it
  std::string out;  // stdout and stderr
};

// `command` (a shell command line) under coreutils' timeout, its outputs together.
inline ShellResult Shell(const std::string& command, int timeout_s = 20) {
  ShellResult r;
  const std::string cmd =
      "timeout " + std::to_string(timeout_s) + " " + command + " 2>&1 </dev/null";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), pipe)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class LocalSlurmCluster {
 public:
  ~LocalSlurmCluster() { Stop(); }

  // Starts the cluster and waits (bounded) until every node is idle. Empty
  // when it is up; otherwise what is missing or which daemon failed and its
  // log's last lines (the test skips with it). Stop cleans up either way.
  std::string Start(const std::vector<SlurmNode>& nodes) {
    nodes_ = nodes;
    if (::geteuid() != 0)
      return "the test cluster's daemons run as root (SlurmUser=root): run this test as root";
    for (const char* d : {kMunged, kSlurmctld, kSlurmd})
      if (::access(d, X_OK) != 0)
        return std::string(d) +
               " is missing: install munge, slurmctld and slurmd (scripts/setup.sh "
               "--tests)";
    if (Shell("which srun sbatch salloc squeue scancel sinfo scontrol").status != 0)
      return "the Slurm clients (srun, sbatch, salloc, squeue, ...) are missing: install "
             "slurm-client (scripts/setup.sh --tests)";
    // A short private directory: munged's and slurmstepd's Unix sockets live
    // under it, and a socket path has at most 107 characters.
    char tmpl[] = "/tmp/ppsearch-slurm-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return "cannot create a directory under /tmp";
    root_ = tmpl;
    std::filesystem::permissions(
        root_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                   std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                   std::filesystem::perms::others_exec);
    if (std::string why = WriteFiles(); !why.empty()) return why;
    ::setenv("SLURM_CONF", conf().c_str(), 1);

    Daemon("munged", {kMunged, "--foreground", "--force", "--socket=" + Path("munge/socket"),
                      "--key-file=" + Path("munge/munge.key"), "--pid-file=" + Path("munge/pid"),
                      "--log-file=" + Path("munge.log"), "--seed-file=" + Path("munge/seed")});
    if (std::string why = WaitFor("munged's socket", 10,
                                  [&] { return std::filesystem::exists(Path("munge/socket")); });
        !why.empty())
      return why;
    Daemon("slurmctld", {kSlurmctld, "-D", "-i"});
    for (const auto& n : nodes_) Daemon("slurmd-" + n.name, {kSlurmd, "-D", "-N", n.name});
    return WaitFor("every node idle", 30, [&] {
      const ShellResult s = Shell("sinfo --noheader --Node --format=\"%N %T\"", 10);
      int idle = 0;
      std::istringstream in(s.out);
      for (std::string node, state; in >> node >> state;) idle += state == "idle" ? 1 : 0;
      last_sinfo_ = s.out;
      return s.status == 0 && idle == static_cast<int>(nodes_.size());
    });
  }

  // Kills the daemons, then every process still carrying this cluster's
  // SLURM_CONF in its environment (slurmstepd, steps' tasks, batch scripts,
  // srun clients of a killed runner), and removes the directory. Nothing is
  // stopped gracefully: the cluster's state goes with it.
  void Stop() {
    if (root_.empty()) return;
    StopDaemons(pids_, 0);
    pids_.clear();
    KillAll([&] { return ProcessesWhose("environ", {"SLURM_CONF=" + conf()}); });
    ::unsetenv("SLURM_CONF");
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
    root_.clear();
  }

  std::string conf() const { return Path("slurm.conf"); }
  std::string NodeLog(const std::string& node) const { return Path("slurmd-" + node + ".log"); }
  std::string ControllerLog() const { return Path("slurmctld.log"); }

 private:
  static constexpr const char* kMunged = "/usr/sbin/munged";
  static constexpr const char* kSlurmctld = "/usr/sbin/slurmctld";
  static constexpr const char* kSlurmd = "/usr/sbin/slurmd";

  std::string Path(const std::string& rel) const { return root_ + "/" + rel; }

  // munge's key and directories, the GPU device files, slurm.conf, gres.conf.
  std::string WriteFiles() {
    namespace fs = std::filesystem;
    fs::create_directories(Path("munge"));
    fs::create_directories(Path("state"));
    fs::create_directories(Path("dev"));
    for (const auto& n : nodes_) fs::create_directories(Path("spool/" + n.name));
    {
      std::random_device rd;
      std::string key;
      for (int i = 0; i < 128; ++i) key += static_cast<char>(rd() & 0xff);
      const int fd = ::open(Path("munge/munge.key").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
      if (fd < 0 || ::write(fd, key.data(), key.size()) != static_cast<ssize_t>(key.size()))
        return "cannot write " + Path("munge/munge.key");
      ::close(fd);
    }
    // gres/gpu wants character devices: /dev/null stands in for each GPU.
    for (int g = 0; g < 8; ++g)
      fs::create_symlink("/dev/null", Path("dev/nvidia" + std::to_string(g)));
    std::ofstream(Path("gres.conf")) << "Name=gpu File=" << Path("dev/nvidia[0-7]") << "\n";

    const std::vector<int> ports = FreePorts(1 + static_cast<int>(nodes_.size()));
    std::ostringstream c;
    c << "ClusterName=ppsearch-test\n"
      << "SlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=" << ports[0] << "\n"
      << "SlurmUser=root\nSlurmdUser=root\n"
      << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << Path("munge/socket")
      << "\n"
      << "StateSaveLocation=" << Path("state") << "\nSlurmdSpoolDir=" << Path("spool/%n") << "\n"
      << "SlurmctldPidFile=" << Path("slurmctld.pid") << "\n"
      << "SlurmdPidFile=" << Path("slurmd-%n.pid") << "\n"
      << "SlurmctldDebug=info\nSlurmdDebug=info\n"
      // No cgroups: processes found through /proc, nothing bound or confined.
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
      // cons_tres: steps can ask for the GPUs of a node (select/linear cannot).
      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
      << "SchedulerType=sched/builtin\nMpiDefault=none\nReturnToService=2\n"
      // The nodes share this machine: what slurm.conf says of them is taken as is.
      << "SlurmdParameters=config_overrides\nPropagateResourceLimits=NONE\n"
      // A cancelled step's SIGKILL follows its SIGTERM after 2 s (30 by default).
      << "KillWait=2\nMailProg=/bin/true\nGresTypes=gpu\n";
    for (size_t i = 0; i < nodes_.size(); ++i)
      c << "NodeName=" << nodes_[i].name << " NodeAddr=" << nodes_[i].address
        << " NodeHostname=localhost Port=" << ports[i + 1] << " CPUs=2 Gres=gpu:8 State=UNKNOWN\n";
    std::string names;
    for (const auto& n : nodes_) names += (names.empty() ? "" : ",") + n.name;
    c << "PartitionName=gpu Nodes=" << names << " Default=YES MaxTime=INFINITE State=UP\n";
    std::ofstream(conf()) << c.str();
    return "";
  }

  void Daemon(const std::string& name, const std::vector<std::string>& argv) {
    std::string command;
    for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
    daemons_.push_back({name, command});
    pids_.push_back(StartDaemon(argv, Path(name + ".log")));
  }

  // Polls `ready` every 100 ms for at most `limit_s`; fails early when a
  // daemon exits. Empty when ready, else what happened.
  template <typename Ready>
  std::string WaitFor(const std::string& what, int limit_s, Ready ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
    while (std::chrono::steady_clock::now() < deadline) {
      for (size_t i = 0; i < pids_.size(); ++i) {
        int status = 0;
        if (pids_[i] > 0 && ::waitpid(pids_[i], &status, WNOHANG) == pids_[i]) {
          pids_[i] = -1;
          return daemons_[i].name + " (" + daemons_[i].command + ") exited with status " +
                 std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                 " while waiting for " + what + "; its log ends:\n" + Tail(daemons_[i].name);
        }
      }
      if (ready()) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::string why = "no " + what + " after " + std::to_string(limit_s) + " s";
    if (!last_sinfo_.empty()) why += "; sinfo says:\n" + last_sinfo_;
    return why + "\nslurmctld's log ends:\n" + Tail("slurmctld");
  }

  // The last lines of a daemon's log.
  std::string Tail(const std::string& daemon) const {
    std::vector<std::string> lines;
    std::istringstream in(ReadBinary(Path(daemon + ".log")));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::string out;
    for (size_t i = lines.size() > 8 ? lines.size() - 8 : 0; i < lines.size(); ++i)
      out += lines[i] + "\n";
    return out;
  }

  struct DaemonInfo {
    std::string name;     // its log is <name>.log
    std::string command;  // for messages
  };
  std::vector<SlurmNode> nodes_;
  std::string root_;
  std::vector<DaemonInfo> daemons_;
  std::vector<pid_t> pids_;
  std::string last_sinfo_;
};

}  // namespace ppsearch::testing
