#include "launch/launcher.h"

namespace ppsearch::launch {

nlohmann::json ServerRecord::ToJson() const {
  return {{"launcher", launcher},
          {"host", host},
          {"node", node},
          {"pid", pid},
          {"start_ticks", start_ticks},
          {"client_pid", client_pid},
          {"tag", tag},
          {"slurm_job", slurm_job},
          {"cleanup", cleanup}};
}

Result<ServerRecord> ServerRecord::FromJson(const nlohmann::json& j, const std::string& where) {
  ServerRecord r;
  try {
    r.launcher = j.at("launcher").get<std::string>();
    r.host = j.at("host").get<std::string>();
    r.node = j.value("node", 0);
    r.pid = j.at("pid").get<int64_t>();
    r.start_ticks = j.value("start_ticks", uint64_t{0});
    r.client_pid = j.value("client_pid", int64_t{0});
    r.tag = j.value("tag", std::string());
    r.slurm_job = j.value("slurm_job", std::string());
    r.cleanup = j.value("cleanup", std::vector<std::string>());
  } catch (const nlohmann::json::exception& e) {
    return MakeError(where + ": not a server record (" + std::string(e.what()) + ")");
  }
  if (r.launcher != "local" && r.launcher != "ssh" && r.launcher != "slurm")
    return MakeError(where + ": unknown launcher '" + r.launcher + "'");
  return r;
}

std::string ServerRecord::Describe() const {
  if (launcher == "slurm") return "Slurm step '" + tag + "' on " + host;
  return "pid " + std::to_string(pid) + " on " + host;
}

}  // namespace ppsearch::launch
