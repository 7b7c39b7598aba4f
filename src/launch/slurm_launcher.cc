// The slurm launcher: inside an existing allocation (SLURM_JOB_ID set), each
// node's server is one `srun` step of one task on that node, its output
// streamed back by srun into the local log file. srun forwards SIGTERM to
// the step's tasks; a step whose srun is gone (the runner crashed) is found
// again by its name with squeue and cancelled with scancel.

#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "launch/launchers.h"

namespace ppsearch::launch {
namespace {

class SlurmProcess : public ChildProcess {
 public:
  using ChildProcess::ChildProcess;
  Status Signal(int sig) override {
    // srun forwards SIGTERM; SIGKILL to srun makes Slurm kill the step.
    if (!exit_ && ::kill(child_, sig) != 0 && errno != ESRCH)
      return MakeError("cannot signal srun (pid " + std::to_string(child_) + ")");
    return Status::Ok();
  }
};

class SlurmLauncher : public Launcher {
 public:
  SlurmLauncher(const spec::Spec& spec, double host_timeout_s)
      : spec_(spec), host_timeout_s_(host_timeout_s) {
    if (const char* job = std::getenv("SLURM_JOB_ID")) job_ = job;
  }
  const char* kind() const override { return "slurm"; }

  std::vector<std::string> Srun(int node, const std::string& name) const {
    std::vector<std::string> a = {"srun",       "--nodes=1",
                                  "--ntasks=1", "--nodelist=" + spec_.cluster.hosts[node].name,
                                  "--overlap",  "--job-name=" + name};
    for (const auto& extra : spec_.cluster.slurm.srun_args) a.push_back(extra);
    return a;
  }

  std::vector<std::string> WrapServer(int node, const ServerLaunch& launch) const override {
    std::vector<std::string> a = Srun(node, launch.tag);
    a.push_back("--kill-on-bad-exit=1");
    for (const auto& w : NodeWords(launch)) a.push_back(w);
    return a;
  }

  Result<std::unique_ptr<ServerProcess>> StartServer(const ServerLaunch& launch) override {
    if (job_.empty()) return MakeError(SlurmAllocationProblem());
    SpawnSpec s;
    s.argv = WrapServer(launch.node, launch);
    s.output_path = launch.log_path;
    s.output_filter = launch.output_filter;
    s.filter_env = launch.filter_env;
    s.output_root = launch.log_root;
    s.input = StepInput(launch.step);  // srun forwards its stdin to the step's one task
    PPS_ASSIGN_OR_RETURN(pid_t client, Spawn(s));
    ServerRecord r;
    r.launcher = kind();
    r.host = spec_.cluster.hosts[launch.node].name;
    r.node = launch.node;
    r.client_pid = client;
    r.pid = client;
    r.tag = launch.tag;
    r.slurm_job = job_;
    return std::unique_ptr<ServerProcess>(new SlurmProcess(client, r));
  }

  Result<Captured> RunOnHost(int node, const std::vector<std::string>& argv,
                             double timeout_s) override {
    return RunOnHostWithInput(node, argv, timeout_s, "", {});
  }

  // A stopped command's srun gets SIGTERM, which it forwards to the step's tasks.
  Result<Captured> RunOnHostWithInput(int node, const std::vector<std::string>& argv,
                                      double timeout_s, const std::string& input,
                                      const CaptureStop& stop) override {
    std::vector<std::string> a = Srun(node, "ppsearch-query");
    a.push_back("--quiet");
    for (const auto& w : argv) a.push_back(w);
    return RunCaptured(a, timeout_s, {}, input, stop);
  }

  // Step ids ("1234.5") of the job's steps named `tag`.
  Result<std::vector<std::string>> StepsNamed(const std::string& job, const std::string& tag) {
    PPS_ASSIGN_OR_RETURN(Captured c, RunCaptured({"squeue", "--steps", "--noheader",
                                                  "--format=%i %j", "--jobs=" + job},
                                                 host_timeout_s_));
    if (!c.exit.ok()) return MakeError("squeue failed: " + c.err.substr(0, c.err.find('\n')));
    std::vector<std::string> steps;
    std::istringstream in(c.out);
    std::string id, name;
    while (in >> id >> name)
      if (name == tag) steps.push_back(id);
    return steps;
  }

  Status StopRecorded(const ServerRecord& r, double grace_s) override {
    PPS_ASSIGN_OR_RETURN(std::vector<std::string> steps, StepsNamed(r.slurm_job, r.tag));
    for (const auto& step : steps) RunCaptured({"scancel", "--signal=TERM", step}, host_timeout_s_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (!steps.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      PPS_ASSIGN_OR_RETURN(steps, StepsNamed(r.slurm_job, r.tag));
    }
    for (const auto& step : steps) RunCaptured({"scancel", step}, host_timeout_s_);
    return Status::Ok();
  }

 private:
  const spec::Spec& spec_;
  double host_timeout_s_;
  std::string job_;
};

}  // namespace

std::string SlurmAllocationProblem() {
  if (std::getenv("SLURM_JOB_ID") != nullptr) return "";
  return "the slurm launcher runs inside an allocation, but SLURM_JOB_ID is not set: run "
         "ppsearch inside salloc/sbatch, or let `ppsearch run SPEC --slurm-submit` submit the "
         "whole search as a job";
}

std::unique_ptr<Launcher> MakeSlurmLauncher(const spec::Spec& spec, double host_timeout_s) {
  return std::make_unique<SlurmLauncher>(spec, host_timeout_s);
}

Result<std::unique_ptr<Launcher>> MakeLauncher(const spec::Spec& spec,
                                               const std::string& control_dir,
                                               double host_timeout_s) {
  const std::string& kind = spec.cluster.launcher;
  // Read once, before any sample: an unreadable password file is a config error.
  PPS_ASSIGN_OR_RETURN(Sudo sudo, Sudo::FromSpec(spec.cluster.sudo));
  std::unique_ptr<Launcher> launcher;
  if (kind == "local") {
    launcher = MakeLocalLauncher(spec);
  } else if (kind == "ssh") {
    launcher = MakeSshLauncher(spec, control_dir, host_timeout_s);
  } else if (kind == "slurm") {
    launcher = MakeSlurmLauncher(spec, host_timeout_s);
  } else {
    return MakeError("unknown launcher '" + kind + "' (expected local, ssh or slurm)");
  }
  launcher->set_sudo(std::move(sudo));
  return launcher;
}

}  // namespace ppsearch::launch
