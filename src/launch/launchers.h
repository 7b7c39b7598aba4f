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

// `env K=V ... argv` (argv alone when there is no variable): the variables
// travel as words of one exec, so the same vector runs locally and remotely.
std::vector<std::string> WithEnv(const EnvList& env, const std::vector<std::string>& argv);

}  // namespace ppsearch::launch
