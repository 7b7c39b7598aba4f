#pragma once
// state/servers/<tag>.json, reader and writer together: the record of every
// server a run starts (launch::ServerRecord), written before the server can
// do anything and removed once it is seen stopped, so whatever a crashed or
// killed ppsearch left running is known and `run --resume` stops it
// (run/server_state.h) on every host before running anything.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "launch/launcher.h"
#include "util/result.h"

namespace ppsearch::evidence {

nlohmann::json ServerRecordJson(const launch::ServerRecord& record);
// Errors name `where`, the key and what it must be; an unknown launcher is
// named too.
Result<launch::ServerRecord> ReadServerRecord(const nlohmann::json& j, const std::string& where);

Status SaveServerState(const RunPaths& paths, const launch::ServerRecord& record);
void RemoveServerState(const RunPaths& paths, const launch::ServerRecord& record);

// Every recorded server, by file name; a file that cannot be read (or is a
// link) is an error naming it.
Result<std::vector<launch::ServerRecord>> LoadServerStates(const RunPaths& paths);

}  // namespace ppsearch::evidence
