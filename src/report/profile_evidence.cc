#include "report/profile_evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "evidence/evidence.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

namespace fs = std::filesystem;

Result<nlohmann::json> ReadJson(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, evidence::ReadEvidenceFile(path));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return MakeError(path + ": not a JSON object");
  return j;
}

double Number(const nlohmann::json& j, const char* key, const char* field = nullptr) {
  const nlohmann::json* v = j.contains(key) ? &j[key] : nullptr;
  if (v != nullptr && field != nullptr) v = v->contains(field) ? &(*v)[field] : nullptr;
  return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
}

std::string MeasuredText(const nlohmann::json& a) {
  return fmt::format(
      "exposed communication {} of the window (median over {} windows on {} GPUs, spread {}), "
      "overlapped {}, compute only {}, idle {}; {} AllReduce calls per window; compute/"
      "communication overlap {}",
      FormatPercent(Number(a, "exposed_nccl_share_of_prefill_window_median")), Number(a, "windows"),
      Number(a, "gpus"), FormatPercent(Number(a, "exposed_share", "spread")),
      FormatPercent(Number(a, "overlapped_share", "median")),
      FormatPercent(Number(a, "compute_only_share", "median")),
      FormatPercent(Number(a, "idle_share", "median")), Number(a, "allreduce_calls_in_window"),
      a.value("compute_communication_overlap", std::string("unknown")));
}

std::string PredictedText(const nlohmann::json& p) {
  return fmt::format(
      "the simulator predicts for {} at C={}: exposed communication {}, pipeline bubble {}, {} "
      "all-reduces per forward",
      p.value("layout", std::string("?")), Number(p, "concurrency"),
      FormatPercent(Number(p, "exposed_comm_share")), FormatPercent(Number(p, "bubble_share")),
      Number(p, "allreduce_per_forward"));
}

}  // namespace

Result<std::vector<std::string>> ProfileEvidenceLines(const std::string& run_dir) {
  const evidence::RunPaths paths{run_dir};
  std::vector<std::string> lines;
  std::error_code ec;
  if (!fs::is_directory(paths.profile_dir(), ec)) return lines;
  std::vector<std::string> samples;
  for (const auto& d : fs::directory_iterator(paths.profile_dir(), ec))
    if (d.is_directory()) samples.push_back(d.path().filename().string());
  std::sort(samples.begin(), samples.end());
  for (const std::string& sample : samples) {
    const std::string dir = paths.profile_dir() + "/" + sample;
    std::vector<std::string> names;
    for (const auto& f : fs::directory_iterator(dir, ec))
      if (f.path().extension() == ".json" && f.path().stem() != "predicted")
        names.push_back(f.path().stem().string());
    std::sort(names.begin(), names.end());
    std::string predicted;
    if (fs::exists(dir + "/predicted.json", ec)) {
      PPS_ASSIGN_OR_RETURN(nlohmann::json p, ReadJson(dir + "/predicted.json"));
      predicted = "; " + PredictedText(p);
    }
    for (const std::string& name : names) {
      PPS_ASSIGN_OR_RETURN(nlohmann::json a, ReadJson(dir + "/" + name + ".json"));
      const std::string where = name == "file" ? "the export the spec names" : "node " + name;
      if (a.contains("error")) {
        lines.push_back(fmt::format("`{}` ({}): no analysis: {}", sample, where,
                                    a["error"].is_string() ? a["error"].get<std::string>() : "?"));
        continue;
      }
      if (!a.contains("exposed_nccl_share_of_prefill_window_median"))
        return MakeError(dir + "/" + name +
                         ".json: no 'exposed_nccl_share_of_prefill_window_median' (expected the "
                         "JSON `ppsearch nsys` writes)");
      lines.push_back(fmt::format("`{}` ({}): {}{}", sample, where, MeasuredText(a), predicted));
    }
  }
  return lines;
}

}  // namespace ppsearch::report
