#pragma once
// The launchers behind MakeLauncher (launcher.h), for tests that build one directly.

#include <memory>
#include <string>

#include "launch/launcher.h"

namespace ppsearch::launch {

std::unique_ptr<Launcher> MakeLocalLauncher(const spec::Spec& spec);
std::unique_ptr<Launcher> MakeSshLauncher(const spec::Spec& spec, const std::string& control_dir,
                                          double connect_timeout_s);
std::unique_ptr<Launcher> MakeSlurmLauncher(const spec::Spec& spec, double host_timeout_s);

// A server seen through a child of this process: the server itself (local)
// or the ssh/srun client that runs it. Its exit is the child's.
class ChildProcess : public ServerProcess {
 public:
  ChildProcess(pid_t child, ServerRecord record) : child_(child), record_(std::move(record)) {}
  std::optional<ExitInfo> Poll() override {
    if (!exit_) exit_ = PollExit(child_);
    return exit_;
  }
  ServerRecord Record() const override { return record_; }

 protected:
  pid_t child_;
  ServerRecord record_;
  std::optional<ExitInfo> exit_;
};

// `env K=V ... argv` (argv alone when there is no variable): the variables
// travel as words of one exec, so the same vector runs locally and remotely.
std::vector<std::string> WithEnv(const EnvList& env, const std::vector<std::string>& argv);

// `kill -SIG -- -PGID`: the words that signal a process group through sudo
// (the "stop" step), where the login user may not signal it.
std::vector<std::string> KillGroupWords(int sig, int64_t pgid);

}  // namespace ppsearch::launch
