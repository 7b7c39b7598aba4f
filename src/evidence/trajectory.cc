#include "evidence/trajectory.h"

#include <filesystem>

#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::evidence {
namespace {

std::string TrajectoryPath(const RunPaths& paths) { return paths.metadata(kTrajectoryFile); }

nlohmann::json PBestJson(const std::vector<std::pair<std::string, double>>& p_best) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [label, p] : p_best) out.push_back({{"layout", label}, {"p_best", p}});
  return out;
}

// One line's fields, each checked for its type; the error names the line and key.
class LineReader {
 public:
  LineReader(const nlohmann::json& j, std::string where) : j_(j), where_(std::move(where)) {}

  Status Number(const char* key, double* out) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_number()) return Wrong(key, "a number");
    *out = it->get<double>();
    return Status::Ok();
  }
  Status Int(const char* key, int* out) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_number_integer()) return Wrong(key, "an integer");
    *out = it->get<int>();
    return Status::Ok();
  }
  Status String(const char* key, std::string* out) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) return Wrong(key, "a string");
    *out = it->get<std::string>();
    return Status::Ok();
  }
  Status Bool(const char* key, bool* out) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_boolean()) return Wrong(key, "true or false");
    *out = it->get<bool>();
    return Status::Ok();
  }
  Status Strings(const char* key, std::vector<std::string>* out) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_array()) return Wrong(key, "an array of strings");
    for (const auto& v : *it) {
      if (!v.is_string()) return Wrong(key, "an array of strings");
      out->push_back(v.get<std::string>());
    }
    return Status::Ok();
  }
  Status Object(const char* key, nlohmann::json* out) const {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_object()) return Wrong(key, "an object (parameter name -> value)");
    *out = *it;
    return Status::Ok();
  }
  Status PBest(std::vector<std::pair<std::string, double>>* out) const {
    const auto it = j_.find("p_best");
    if (it == j_.end() || it->is_null()) return Status::Ok();
    if (!it->is_array()) return Wrong("p_best", "an array of {layout, p_best}");
    for (const auto& v : *it) {
      if (!v.is_object() || !v.contains("layout") || !v["layout"].is_string() ||
          !v.contains("p_best") || !v["p_best"].is_number())
        return Wrong("p_best", "an array of {layout, p_best}");
      out->emplace_back(v["layout"].get<std::string>(), v["p_best"].get<double>());
    }
    return Status::Ok();
  }

 private:
  Status Wrong(const char* key, const char* expected) const {
    return MakeError(where_ + ": key '" + key + "' must be " + expected);
  }
  const nlohmann::json& j_;
  std::string where_;
};

Result<TrajectoryStep> StepFrom(const LineReader& r) {
  TrajectoryStep s;
  PPS_RETURN_IF_ERROR(r.Int("step", &s.step));
  PPS_RETURN_IF_ERROR(r.String("layout", &s.layout));
  PPS_RETURN_IF_ERROR(r.String("label", &s.label));
  PPS_RETURN_IF_ERROR(r.Int("concurrency", &s.concurrency));
  PPS_RETURN_IF_ERROR(r.Strings("samples", &s.samples));
  PPS_RETURN_IF_ERROR(r.String("reason", &s.reason));
  PPS_RETURN_IF_ERROR(r.Number("value_of_information", &s.value_of_information));
  PPS_RETURN_IF_ERROR(r.Number("p_wrong_before", &s.p_wrong_before));
  PPS_RETURN_IF_ERROR(r.Number("p_wrong_expected_after", &s.p_wrong_expected_after));
  PPS_RETURN_IF_ERROR(r.Number("p_change_before", &s.p_change_before));
  PPS_RETURN_IF_ERROR(r.Number("cost_gpu_hours", &s.cost_gpu_hours));
  PPS_RETURN_IF_ERROR(r.Bool("server_start", &s.server_start));
  PPS_RETURN_IF_ERROR(r.Number("gpu_hours_spent", &s.gpu_hours_spent));
  PPS_RETURN_IF_ERROR(r.Int("samples_spent", &s.samples_spent));
  PPS_RETURN_IF_ERROR(r.Number("full_sweep_gpu_hours", &s.full_sweep_gpu_hours));
  PPS_RETURN_IF_ERROR(r.Strings("calibrated_on", &s.calibrated_on));
  PPS_RETURN_IF_ERROR(r.PBest(&s.p_best));
  PPS_RETURN_IF_ERROR(r.Object("calibration", &s.calibration));
  return s;
}

Result<TrajectoryStop> StopFrom(const LineReader& r) {
  TrajectoryStop s;
  PPS_RETURN_IF_ERROR(r.String("reason", &s.reason));
  PPS_RETURN_IF_ERROR(r.String("message", &s.message));
  PPS_RETURN_IF_ERROR(r.Number("p_wrong", &s.p_wrong));
  PPS_RETURN_IF_ERROR(r.Number("p_change", &s.p_change));
  PPS_RETURN_IF_ERROR(r.Number("gpu_hours_spent", &s.gpu_hours_spent));
  PPS_RETURN_IF_ERROR(r.Int("samples_spent", &s.samples_spent));
  PPS_RETURN_IF_ERROR(r.Number("full_sweep_gpu_hours", &s.full_sweep_gpu_hours));
  PPS_RETURN_IF_ERROR(r.Int("full_sweep_samples", &s.full_sweep_samples));
  PPS_RETURN_IF_ERROR(r.String("primary", &s.primary));
  PPS_RETURN_IF_ERROR(r.String("fallback", &s.fallback));
  PPS_RETURN_IF_ERROR(r.Strings("uncertain", &s.uncertain));
  PPS_RETURN_IF_ERROR(r.String("budget_detail", &s.budget_detail));
  PPS_RETURN_IF_ERROR(r.Strings("calibrated_on", &s.calibrated_on));
  PPS_RETURN_IF_ERROR(r.Object("calibration", &s.calibration));
  return s;
}

// A line cut by a kill mid-write is cut off before the next line is
// appended: appended to, it would join that line and make it unreadable.
Status AppendTrajectoryLine(const RunPaths& paths, const nlohmann::json& j) {
  const std::string path = TrajectoryPath(paths);
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    PPS_ASSIGN_OR_RETURN(std::string text, ReadEvidenceFile(path));
    if (!text.empty() && text.back() != '\n') {
      const size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
      std::filesystem::resize_file(path, keep, ec);
      if (ec) return IoError("cannot cut the torn last line of " + path + ": " + ec.message());
    }
  }
  return AppendLine(path, JsonText(j));
}

}  // namespace

Status AppendTrajectoryStep(const RunPaths& paths, const TrajectoryStep& s) {
  const nlohmann::json j = {{"event", "step"},
                            {"ts", UtcNow("%Y-%m-%dT%H:%M:%SZ")},
                            {"step", s.step},
                            {"layout", s.layout},
                            {"label", s.label},
                            {"concurrency", s.concurrency},
                            {"samples", s.samples},
                            {"reason", s.reason},
                            {"value_of_information", s.value_of_information},
                            {"p_wrong_before", s.p_wrong_before},
                            {"p_wrong_expected_after", s.p_wrong_expected_after},
                            {"p_change_before", s.p_change_before},
                            {"cost_gpu_hours", s.cost_gpu_hours},
                            {"server_start", s.server_start},
                            {"gpu_hours_spent", s.gpu_hours_spent},
                            {"samples_spent", s.samples_spent},
                            {"full_sweep_gpu_hours", s.full_sweep_gpu_hours},
                            {"calibration", s.calibration},
                            {"calibrated_on", s.calibrated_on},
                            {"p_best", PBestJson(s.p_best)}};
  return AppendTrajectoryLine(paths, j);
}

Status AppendTrajectoryStop(const RunPaths& paths, const TrajectoryStop& s) {
  const nlohmann::json j = {{"event", "stop"},
                            {"ts", UtcNow("%Y-%m-%dT%H:%M:%SZ")},
                            {"reason", s.reason},
                            {"message", s.message},
                            {"p_wrong", s.p_wrong},
                            {"p_change", s.p_change},
                            {"gpu_hours_spent", s.gpu_hours_spent},
                            {"samples_spent", s.samples_spent},
                            {"full_sweep_gpu_hours", s.full_sweep_gpu_hours},
                            {"full_sweep_samples", s.full_sweep_samples},
                            {"primary", s.primary},
                            {"fallback", s.fallback},
                            {"uncertain", s.uncertain},
                            {"budget_detail", s.budget_detail},
                            {"calibration", s.calibration},
                            {"calibrated_on", s.calibrated_on}};
  return AppendTrajectoryLine(paths, j);
}

Result<Trajectory> ReadTrajectory(const RunPaths& paths) {
  Trajectory out;
  const std::string path = TrajectoryPath(paths);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return out;
  PPS_ASSIGN_OR_RETURN(std::string text, ReadEvidenceFile(path));
  size_t pos = 0;
  for (int line = 1; pos < text.size(); ++line) {
    const size_t end = text.find('\n', pos);
    // A last line without its newline was cut by a kill mid-write: the step
    // it began is chosen again on resume.
    if (end == std::string::npos) break;
    const std::string body = text.substr(pos, end - pos);
    pos = end + 1;
    if (body.empty()) continue;
    const std::string where = path + ":" + std::to_string(line);
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (!j.is_object()) return MakeError(where + ": not a JSON object");
    const LineReader r(j, where);
    std::string event;
    PPS_RETURN_IF_ERROR(r.String("event", &event));
    if (event == "step") {
      PPS_ASSIGN_OR_RETURN(TrajectoryStep s, StepFrom(r));
      out.steps.push_back(std::move(s));
    } else if (event == "stop") {
      PPS_ASSIGN_OR_RETURN(TrajectoryStop s, StopFrom(r));
      out.stop = std::move(s);
    } else {
      return MakeError(where + ": key 'event' must be \"step\" or \"stop\", not \"" + event + "\"");
    }
  }
  return out;
}

}  // namespace ppsearch::evidence
