#include "run/server_state.h"

#include <algorithm>
#include <filesystem>

#include "util/files.h"

namespace ppsearch::run {

Status SaveServerState(const evidence::RunPaths& paths, const launch::ServerRecord& record) {
  return WriteFileAtomic(paths.server_state(record.tag), record.ToJson().dump(2) + "\n");
}

void RemoveServerState(const evidence::RunPaths& paths, const launch::ServerRecord& record) {
  std::error_code ec;
  std::filesystem::remove(paths.server_state(record.tag), ec);
}

Result<std::vector<launch::ServerRecord>> LoadServerStates(const evidence::RunPaths& paths) {
  std::vector<launch::ServerRecord> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(paths.server_state_dir(), ec)) return out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(paths.server_state_dir(), ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(f.string()));
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return MakeError(f.string() + ": not valid JSON");
    PPS_ASSIGN_OR_RETURN(launch::ServerRecord r, launch::ServerRecord::FromJson(j, f.string()));
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<std::string>> StopLeftoverServers(const evidence::RunPaths& paths,
                                                     launch::Launcher& launcher, double grace_s,
                                                     double host_timeout_s) {
  PPS_ASSIGN_OR_RETURN(std::vector<launch::ServerRecord> records, LoadServerStates(paths));
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
    RemoveServerState(paths, r);
    lines.push_back("stopped " + r.Describe() + " (" + r.tag + ") left by an interrupted run");
  }
  return lines;
}

}  // namespace ppsearch::run
