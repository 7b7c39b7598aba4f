#include "cost/calibration.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "util/edit_distance.h"
#include "util/files.h"

namespace ppsearch::cost {
namespace {

Result<double> PositiveNumber(const nlohmann::json& j, const std::string& key,
                              const std::string& path, double fallback, bool allow_zero) {
  if (!j.contains(key)) return fallback;
  const auto& v = j.at(key);
  if (!v.is_number())
    return MakeError(path + ": key '" + key + "': expected a number, got " +
                     std::string(v.type_name()));
  double x = v.get<double>();
  if (x < 0 || (!allow_zero && x == 0))
    return MakeError(path + ": key '" + key + "': expected a positive number, got " + v.dump());
  return x;
}

}  // namespace

Result<Calibration> LoadCalibration(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return MakeError(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("parameters") || !j["parameters"].is_object())
    return MakeError(path +
                     ": expected a calibration file with a 'parameters' object (written by "
                     "'ppsearch calibrate')");
  const auto& p = j["parameters"];
  static const std::vector<std::string> known = {"compute_scale", "inter_gbps_per_gpu",
                                                 "intra_bw_scale", "host_overhead_us"};
  for (const auto& [key, value] : p.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string best;
    size_t best_distance = 3;
    for (const std::string& k : known)
      if (const size_t d = EditDistance(key, k); d < best_distance) {
        best_distance = d;
        best = k;
      }
    return MakeError(path + ": unknown key 'parameters." + key + "'" +
                     (best.empty() ? "" : " (did you mean '" + best + "'?)") +
                     "; known: compute_scale, inter_gbps_per_gpu, intra_bw_scale, "
                     "host_overhead_us");
  }
  Calibration c;
  PPS_ASSIGN_OR_RETURN(c.compute_scale, PositiveNumber(p, "compute_scale", path, 1.0, false));
  PPS_ASSIGN_OR_RETURN(c.inter_gbps_per_gpu,
                       PositiveNumber(p, "inter_gbps_per_gpu", path, 0, true));
  PPS_ASSIGN_OR_RETURN(c.intra_bw_scale, PositiveNumber(p, "intra_bw_scale", path, 1.0, false));
  PPS_ASSIGN_OR_RETURN(c.host_overhead_us, PositiveNumber(p, "host_overhead_us", path, 2000, true));
  c.source = path;
  return c;
}

Status SaveCalibration(const Calibration& c, const std::string& path,
                       const std::string& extra_json_fields) {
  nlohmann::ordered_json j;
  j["schema"] = "ppsearch.calibration/1";
  j["parameters"] = {{"compute_scale", c.compute_scale},
                     {"inter_gbps_per_gpu", c.inter_gbps_per_gpu},
                     {"intra_bw_scale", c.intra_bw_scale},
                     {"host_overhead_us", c.host_overhead_us}};
  if (!extra_json_fields.empty()) {
    auto extra = nlohmann::ordered_json::parse(extra_json_fields);
    for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  }
  return WriteFileAtomic(path, j.dump(2) + "\n");
}

}  // namespace ppsearch::cost
