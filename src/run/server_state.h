#pragma once
// What `run --resume` does with the servers an interrupted run left: the
// state files (evidence/server_state_file.h) name them, and each is stopped
// on its host before anything runs.

#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "evidence/server_state_file.h"
#include "launch/launcher.h"
#include "util/result.h"

namespace ppsearch::run {

// Stops every recorded server through `launcher` (SIGTERM, SIGKILL after
// `grace_s`, then its cleanup command) and removes its state file. Returns one
// line per server stopped; an error when one could not be stopped (its file
// stays, so a later resume tries again).
Result<std::vector<std::string>> StopLeftoverServers(const evidence::RunPaths& paths,
                                                     launch::Launcher& launcher, double grace_s,
                                                     double host_timeout_s);

}  // namespace ppsearch::run
