#pragma once
// The state file of every server a run starts (state/servers/<tag>.json):
// written before the server can do anything and removed once it is seen
// stopped, so whatever a crashed or killed ppsearch left running is known
// and `run --resume` stops it on every host before running anything.

#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "launch/launcher.h"
#include "util/result.h"

namespace ppsearch::run {

Status SaveServerState(const evidence::RunPaths& paths, const launch::ServerRecord& record);
void RemoveServerState(const evidence::RunPaths& paths, const launch::ServerRecord& record);

// Every recorded server; unreadable files are errors naming the file.
Result<std::vector<launch::ServerRecord>> LoadServerStates(const evidence::RunPaths& paths);

// Stops every recorded server through `launcher` (SIGTERM, SIGKILL after
// `grace_s`, then its cleanup command) and removes its state file. Returns one
// line per server stopped; an error when one could not be stopped (its file
// stays, so a later resume tries again).
Result<std::vector<std::string>> StopLeftoverServers(const evidence::RunPaths& paths,
                                                     launch::Launcher& launcher, double grace_s,
                                                     double host_timeout_s);

}  // namespace ppsearch::run
