#include "evidence/run_metadata.h"

#include <filesystem>

#include "util/files.h"
#include "util/json_text.h"
#include "util/sha256.h"

namespace ppsearch::evidence {
namespace {

Error TypeError(const std::string& file, const std::string& key, const std::string& expected,
                const nlohmann::json& got) {
  return MakeError(file + ": key '" + key + "': expected " + expected + ", got " +
                   std::string(got.type_name()) + " " + JsonText(got));
}

// `key`'s value when present and not null.
const nlohmann::json* Find(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

Status ReadString(const nlohmann::json& j, const char* key, const std::string& file,
                  std::string& out) {
  const nlohmann::json* v = Find(j, key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return TypeError(file, key, "a string", *v);
  out = v->get<std::string>();
  return Status::Ok();
}

Status ReadStrings(const nlohmann::json& j, const char* key, const std::string& what,
                   const std::string& file, std::vector<std::string>& out) {
  const nlohmann::json* v = Find(j, key);
  if (v == nullptr) return Status::Ok();
  bool ok = v->is_array();
  if (ok)
    for (const auto& s : *v) ok = ok && s.is_string();
  if (!ok)
    return MakeError(file + ": key '" + key + "': expected an array of strings (" + what +
                     "), got " + JsonText(*v));
  for (const auto& s : *v) out.push_back(s.get<std::string>());
  return Status::Ok();
}

}  // namespace

Result<std::vector<RunInput>> HashInputs(
    const std::vector<std::pair<std::string, std::string>>& key_paths) {
  std::vector<RunInput> out;
  for (const auto& [key, path] : key_paths) {
    Result<std::string> text = ReadFile(path);
    if (!text.ok())
      return MakeError(key + ": cannot hash the file it names: " + text.error().message);
    out.push_back({key, AbsolutePath(path), Sha256Hex(*text)});
  }
  return out;
}

std::vector<std::string> ChangedInputs(const std::vector<RunInput>& recorded) {
  std::vector<std::string> out;
  for (const RunInput& i : recorded) {
    Result<std::string> text = ReadFile(i.path);
    const std::string what = i.path + " (" + i.key + ")";
    if (!text.ok()) {
      out.push_back(what + " cannot be read now (" + text.error().message + ")");
      continue;
    }
    const std::string now = Sha256Hex(*text);
    if (now != i.sha256)
      out.push_back(what + " changed since the run started (SHA-256 " + i.sha256.substr(0, 12) +
                    "... then, " + now.substr(0, 12) + "... now)");
  }
  return out;
}

nlohmann::json RunMetadataToJson(const RunMetadata& m) {
  nlohmann::json patches = nullptr;
  if (m.patches) {
    patches = nlohmann::json::array();
    for (const RunPatch& p : *m.patches)
      patches.push_back({{"path", p.path}, {"bytes", p.bytes}, {"sha256", p.sha256}});
  }
  nlohmann::json j = {{"schema", m.schema},
                      {"run_id", m.run_id},
                      {"engine", m.engine},
                      {"simulated", m.simulated ? nlohmann::json(*m.simulated) : nullptr},
                      {"launcher", m.launcher},
                      {"tool_version", m.tool_version},
                      {"git_sha", m.git_sha},
                      {"spec_path", m.spec_path},
                      {"overrides", m.overrides},
                      {"hosts", m.hosts},
                      {"image", m.image},
                      {"patches", patches},
                      {"calibration", m.calibration},
                      {"seeds", {{"workload", m.workload_seed}}},
                      {"command_line", m.command_line},
                      {"started_at", m.started_at}};
  if (m.inputs) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const RunInput& i : *m.inputs)
      inputs.push_back({{"key", i.key}, {"path", i.path}, {"sha256", i.sha256}});
    j["inputs"] = std::move(inputs);
  }
  if (m.adaptive) j["adaptive"] = true;
  if (m.noise)
    j["noise"] = {{"model", m.noise->model}, {"cv", m.noise->cv}, {"seed", m.noise->seed}};
  if (m.replay)
    j["replay"] = {
        {"path", m.replay->path}, {"kind", m.replay->kind}, {"sha256", m.replay->sha256}};
  if (m.baseline_sha256) j["baseline_sha256"] = *m.baseline_sha256;
  return j;
}

Result<RunMetadata> RunMetadataFromJson(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) return MakeError(file + ": not a JSON object");
  RunMetadata m;
  m.schema.clear();
  const std::pair<const char*, std::string*> strings[] = {{"schema", &m.schema},
                                                          {"run_id", &m.run_id},
                                                          {"engine", &m.engine},
                                                          {"launcher", &m.launcher},
                                                          {"tool_version", &m.tool_version},
                                                          {"git_sha", &m.git_sha},
                                                          {"spec_path", &m.spec_path},
                                                          {"image", &m.image},
                                                          {"command_line", &m.command_line},
                                                          {"started_at", &m.started_at}};
  for (const auto& [key, field] : strings) PPS_RETURN_IF_ERROR(ReadString(j, key, file, *field));
  if (const nlohmann::json* v = Find(j, "simulated")) {
    if (!v->is_boolean()) return TypeError(file, "simulated", "true or false", *v);
    m.simulated = v->get<bool>();
  }
  PPS_RETURN_IF_ERROR(ReadStrings(j, "overrides", "the --set values", file, m.overrides));
  PPS_RETURN_IF_ERROR(ReadStrings(j, "hosts", "host names", file, m.hosts));
  if (const nlohmann::json* v = Find(j, "patches")) {
    if (!v->is_array()) return TypeError(file, "patches", "an array", *v);
    m.patches.emplace();
    for (const auto& p : *v) {
      if (!p.is_object() || !p.contains("path") || !p["path"].is_string() ||
          !p.contains("sha256") || !p["sha256"].is_string())
        return TypeError(file, "patches", "objects with a string path and sha256", p);
      m.patches->push_back({p["path"].get<std::string>(),
                            p.value("bytes", nlohmann::json(0)).is_number_unsigned()
                                ? p["bytes"].get<uint64_t>()
                                : 0,
                            p["sha256"].get<std::string>()});
    }
  }
  if (const nlohmann::json* v = Find(j, "inputs")) {
    if (!v->is_array()) return TypeError(file, "inputs", "an array", *v);
    m.inputs.emplace();
    for (const auto& i : *v) {
      const bool strings = i.is_object() && i.contains("key") && i["key"].is_string() &&
                           i.contains("path") && i["path"].is_string() && i.contains("sha256") &&
                           i["sha256"].is_string();
      if (!strings)
        return TypeError(file, "inputs", "objects with a string key, path and sha256", i);
      m.inputs->push_back({i["key"].get<std::string>(), i["path"].get<std::string>(),
                           i["sha256"].get<std::string>()});
    }
  }
  if (const nlohmann::json* v = Find(j, "calibration")) {
    if (!v->is_object()) return TypeError(file, "calibration", "an object", *v);
    m.calibration = *v;
  }
  if (const nlohmann::json* v = Find(j, "seeds"))
    if (v->is_object() && v->contains("workload") && (*v)["workload"].is_number_unsigned())
      m.workload_seed = (*v)["workload"].get<uint64_t>();
  if (const nlohmann::json* v = Find(j, "adaptive")) {
    if (!v->is_boolean()) return TypeError(file, "adaptive", "true or false", *v);
    m.adaptive = v->get<bool>();
  }
  if (const nlohmann::json* v = Find(j, "noise")) {
    if (!v->is_object()) return TypeError(file, "noise", "an object", *v);
    NoiseModel n;
    if (v->contains("model") && (*v)["model"].is_string())
      n.model = (*v)["model"].get<std::string>();
    if (v->contains("cv") && (*v)["cv"].is_number()) n.cv = (*v)["cv"].get<double>();
    if (v->contains("seed") && (*v)["seed"].is_number_unsigned())
      n.seed = (*v)["seed"].get<uint64_t>();
    m.noise = n;
  }
  if (const nlohmann::json* v = Find(j, "replay")) {
    ReplaySource r;
    if (!v->is_object()) return TypeError(file, "replay", "an object", *v);
    PPS_RETURN_IF_ERROR(ReadString(*v, "path", file, r.path));
    PPS_RETURN_IF_ERROR(ReadString(*v, "kind", file, r.kind));
    PPS_RETURN_IF_ERROR(ReadString(*v, "sha256", file, r.sha256));
    if (r.path.empty()) return TypeError(file, "replay", "an object with a string 'path'", *v);
    m.replay = r;
  }
  if (const nlohmann::json* v = Find(j, "baseline_sha256")) {
    if (!v->is_string()) return TypeError(file, "baseline_sha256", "a string", *v);
    m.baseline_sha256 = v->get<std::string>();
  }
  return m;
}

Status WriteRunMetadata(const RunPaths& paths, const RunMetadata& m) {
  return WriteFileAtomic(
      paths.run_json(),
      RunMetadataToJson(m).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

Result<RunMetadata> ReadRunMetadata(const RunPaths& paths) {
  const std::string file = paths.run_json();
  Result<std::string> text = ReadEvidenceFile(file);
  if (!text.ok()) {
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(file, ec)))
      return MakeError(paths.root + ": metadata/run.json cannot be read (" + text.error().message +
                       ")");
    return MakeError(paths.root + ": not a ppsearch run directory: metadata/run.json is missing");
  }
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return MakeError(file + ": not a JSON object");
  return RunMetadataFromJson(j, file);
}

}  // namespace ppsearch::evidence
