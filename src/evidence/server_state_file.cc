#include "evidence/server_state_file.h"

#include <algorithm>
#include <filesystem>

#include "evidence/json_fields.h"
#include "util/files.h"

namespace ppsearch::evidence {

nlohmann::json ServerRecordJson(const launch::ServerRecord& r) {
  return {{"launcher", r.launcher},
          {"host", r.host},
          {"node", r.node},
          {"pid", r.pid},
          {"start_ticks", r.start_ticks},
          {"client_pid", r.client_pid},
          {"tag", r.tag},
          {"slurm_job", r.slurm_job},
          {"cleanup", r.cleanup}};
}

Result<launch::ServerRecord> ReadServerRecord(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return MakeError(where + ": not a server record (a JSON object)");
  const JsonFields f(j, where);
  for (const auto& [key, what] : {std::pair{"launcher", "a string (local, ssh or slurm)"},
                                  {"host", "a string"},
                                  {"pid", "an integer"}})
    PPS_RETURN_IF_ERROR(f.Require(key, what));
  launch::ServerRecord r;
  PPS_RETURN_IF_ERROR(f.String("launcher", &r.launcher));
  PPS_RETURN_IF_ERROR(f.String("host", &r.host));
  PPS_RETURN_IF_ERROR(f.Int("node", &r.node));
  PPS_RETURN_IF_ERROR(f.Int64("pid", &r.pid));
  PPS_RETURN_IF_ERROR(f.Uint64("start_ticks", &r.start_ticks));
  PPS_RETURN_IF_ERROR(f.Int64("client_pid", &r.client_pid));
  PPS_RETURN_IF_ERROR(f.String("tag", &r.tag));
  PPS_RETURN_IF_ERROR(f.String("slurm_job", &r.slurm_job));
  PPS_RETURN_IF_ERROR(f.Strings("cleanup", &r.cleanup));
  if (r.launcher != "local" && r.launcher != "ssh" && r.launcher != "slurm")
    return MakeError(where + ": unknown launcher '" + r.launcher + "'");
  return r;
}

Status SaveServerState(const RunPaths& paths, const launch::ServerRecord& record) {
  return WriteFileAtomic(paths.server_state(record.tag), ServerRecordJson(record).dump(2) + "\n");
}

void RemoveServerState(const RunPaths& paths, const launch::ServerRecord& record) {
  std::error_code ec;
  std::filesystem::remove(paths.server_state(record.tag), ec);
}

Result<std::vector<launch::ServerRecord>> LoadServerStates(const RunPaths& paths) {
  std::vector<launch::ServerRecord> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(paths.server_state_dir(), ec)) return out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(paths.server_state_dir(), ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    PPS_ASSIGN_OR_RETURN(const std::string text, ReadEvidenceFile(f.string()));
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return MakeError(f.string() + ": not valid JSON");
    PPS_ASSIGN_OR_RETURN(launch::ServerRecord r, ReadServerRecord(j, f.string()));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ppsearch::evidence
