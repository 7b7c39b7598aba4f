#include "run/server_state.h"

namespace ppsearch::run {

Result<std::vector<std::string>> StopLeftoverServers(const evidence::RunPaths& paths,
                                                     launch::Launcher& launcher, double grace_s,
                                                     double host_timeout_s) {
  PPS_ASSIGN_OR_RETURN(std::vector<launch::ServerRecord> records,
                       evidence::LoadServerStates(paths));
  std::vector<std::string> lines;
  for (const launch::ServerRecord& r : records) {
    if (r.launcher != launcher.kind())
      return MakeError(paths.server_state(r.tag) + ": started by the " + r.launcher +
                       " launcher, but the spec now uses " + launcher.kind());
    Status stopped = launcher.StopRecorded(r, grace_s);
    if (!stopped.ok())
      return MakeError("cannot stop " + r.Describe() +
                       " left by an earlier run: " + stopped.error().message);
    // The cleanup removes a container: the container step's (sudo.h).
    if (!r.cleanup.empty())
      launcher.RunStep(launch::SudoStep::kContainer, r.node, r.cleanup, host_timeout_s);
    evidence::RemoveServerState(paths, r);
    lines.push_back("stopped " + r.Describe() + " (" + r.tag + ") left by an interrupted run");
  }
  return lines;
}

}  // namespace ppsearch::run
