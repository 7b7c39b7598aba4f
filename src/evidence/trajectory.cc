#include "evidence/trajectory.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "evidence/json_fields.h"
#include "util/files.h"
#include "util/json_text.h"

namespace ppsearch::evidence {
namespace {

std::string TrajectoryPath(const RunPaths& paths) { return paths.trajectory_jsonl(); }

nlohmann::json PBestJson(const std::vector<std::pair<std::string, double>>& p_best) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [label, p] : p_best) out.push_back({{"layout", label}, {"p_best", p}});
  return out;
}

// An array of {layout, p_best}.
Status ReadPBest(const JsonFields& r, std::vector<std::pair<std::string, double>>* out) {
  const nlohmann::json* v = r.Find("p_best");
  if (v == nullptr) return Status::Ok();
  if (!v->is_array()) return r.Wrong("p_best", "an array of {layout, p_best}", v);
  for (const auto& e : *v) {
    if (!e.is_object() || !e.contains("layout") || !e["layout"].is_string() ||
        !e.contains("p_best") || !e["p_best"].is_number())
      return r.Wrong("p_best", "an array of {layout, p_best}", &e);
    out->emplace_back(e["layout"].get<std::string>(), e["p_best"].get<double>());
  }
  return Status::Ok();
}

constexpr const char* kCalibrationExpected = "an object (parameter name -> value)";

Result<TrajectoryStep> StepFrom(const JsonFields& r) {
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
  PPS_RETURN_IF_ERROR(ReadPBest(r, &s.p_best));
  PPS_RETURN_IF_ERROR(r.Object("calibration", kCalibrationExpected, &s.calibration));
  return s;
}

Result<TrajectoryStop> StopFrom(const JsonFields& r) {
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
  PPS_RETURN_IF_ERROR(r.Object("calibration", kCalibrationExpected, &s.calibration));
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

Result<Trajectory> ReadTrajectory(const RunPaths& paths, size_t max_steps) {
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
    if (out.stop)
      return MakeError(where + ": a line after the stop line; a run writes nothing after it stops");
    const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
    if (!j.is_object()) return MakeError(where + ": not a JSON object");
    const JsonFields r(j, where);
    std::string event;
    PPS_RETURN_IF_ERROR(r.String("event", &event));
    if (event == "step") {
      if (out.steps.size() == max_steps)
        return MakeError(fmt::format(
            "{}: step {} is one more than the sweep has points ({}); a run measures each point "
            "once",
            where, max_steps + 1, max_steps));
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

Status CheckTrajectorySteps(const Trajectory& trajectory,
                            const std::vector<spec::LayoutSpec>& layouts,
                            const std::vector<int>& concurrency, int repeats,
                            const std::vector<std::string>& ran) {
  std::map<std::pair<std::string, int>, int> measured_by;  // point -> step
  std::set<std::string> stepped;
  std::map<std::string, size_t> ran_at;  // sample -> its place in the run order
  for (size_t k = 0; k < ran.size(); ++k) ran_at.emplace(ran[k], k);
  size_t previous_first = 0;  // where the previous step's first sample ran
  int previous_ran = 0;       // that step's number, 0 before any step that ran
  for (size_t i = 0; i < trajectory.steps.size(); ++i) {
    const TrajectoryStep& s = trajectory.steps[i];
    const std::string where = fmt::format("{} step {}", kTrajectoryFile, i + 1);
    if (s.step != static_cast<int>(i) + 1)
      return MakeError(fmt::format(
          "{} is numbered {}: the steps must be numbered 1, 2, ... in the order they ran", where,
          s.step));
    const auto layout =
        std::find_if(layouts.begin(), layouts.end(),
                     [&](const spec::LayoutSpec& l) { return l.Slug() == s.layout; });
    if (layout == layouts.end() ||
        std::find(concurrency.begin(), concurrency.end(), s.concurrency) == concurrency.end())
      return MakeError(fmt::format("{} measures '{}' at C={}, not a point of this run's sweep",
                                   where, s.layout, s.concurrency));
    std::vector<std::string> expected;
    for (int r = 1; r <= repeats; ++r)
      expected.push_back(SampleId{*layout, s.concurrency, r}.str());
    if (s.samples != expected)
      return MakeError(fmt::format("{} lists the samples [{}], not the point's {} repeats [{}]",
                                   where, fmt::join(s.samples, ", "), repeats,
                                   fmt::join(expected, ", ")));
    const auto [first, fresh] =
        measured_by.emplace(std::make_pair(s.layout, s.concurrency), static_cast<int>(i) + 1);
    if (!fresh)
      return MakeError(fmt::format("{} measures {} at C={} again (step {} did)", where,
                                   layout->Label(), s.concurrency, first->second));
    stepped.insert(expected.begin(), expected.end());
    std::optional<size_t> first_ran;
    for (const std::string& sample : expected)
      if (auto at = ran_at.find(sample);
          at != ran_at.end() && (!first_ran || at->second < *first_ran))
        first_ran = at->second;
    if (!first_ran) continue;
    if (previous_ran > 0 && *first_ran < previous_first)
      return MakeError(fmt::format(
          "{} measures {} at C={}, whose samples ran before those of step {} (manifest.jsonl): "
          "the steps are not in the order they ran",
          where, layout->Label(), s.concurrency, previous_ran));
    previous_first = *first_ran;
    previous_ran = static_cast<int>(i) + 1;
  }
  for (const std::string& sample : ran)
    if (!stepped.count(sample))
      return MakeError(fmt::format(
          "sample {} ran (manifest.jsonl), but no step of {} measured it: the trajectory has lost "
          "steps (a deleted or cut {}), and what chose them cannot be rebuilt",
          sample, kTrajectoryFile, kTrajectoryFile));
  return Status::Ok();
}

}  // namespace ppsearch::evidence
