#include "evidence/calibration_file.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "util/did_you_mean.h"
#include "util/excerpt.h"
#include "util/files.h"
#include "util/json_file.h"

namespace ppsearch::evidence {

using cost::AllParams;
using cost::Calibration;
using cost::FindParam;
using cost::Index;
using cost::kModelForm;
using cost::kParamCount;
using cost::ModelFormScales;
using cost::Param;
using cost::ParamInfo;
using cost::ParamStatus;
using cost::ParamStatusName;

namespace {

std::string KnownNames() {
  std::string s;
  for (const auto& p : AllParams()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

std::vector<std::string> ParamNames() {
  std::vector<std::string> names;
  for (const auto& p : AllParams()) names.emplace_back(p.name);
  return names;
}

Error UnknownKey(const std::string& path, const std::string& key) {
  if (key == "compute_scale")
    return MakeError(path +
                     ": key 'parameters.compute_scale' is from an older calibration "
                     "format (one factor for every kernel); run 'ppsearch calibrate' "
                     "again to fit the per-operator efficiencies");
  return MakeError(path + ": unknown key 'parameters." + Excerpt(key) + "'" +
                   DidYouMean(key, ParamNames()) + "; known: " + KnownNames());
}

Result<ParamStatus> ParseStatus(const std::string& path, const std::string& key,
                                const nlohmann::json& v) {
  const std::string s = v.is_string() ? v.get<std::string>() : "";
  for (ParamStatus st : {ParamStatus::kPrior, ParamStatus::kDetermined, ParamStatus::kAtBound})
    if (s == ParamStatusName(st)) return st;
  return MakeError(path + ": key 'status." + key +
                   "': expected \"prior\", \"determined\" or \"at bound\", got " +
                   Excerpt(v.dump()));
}

// A file of another schema (an older calibration, another tool's JSON) would
// be read key by key into wrong meanings, or silently into defaults.
Status CheckSchema(const std::string& path, const nlohmann::json& j) {
  if (!j.is_object())
    return MakeError(path +
                     ": expected a JSON object (a calibration written by 'ppsearch "
                     "calibrate'), got " +
                     std::string(j.type_name()));
  const auto it = j.find("schema");
  if (it != j.end() && it->is_string() && it->get<std::string>() == kCalibrationSchema)
    return Status::Ok();
  const std::string found = it == j.end()     ? "no 'schema' key"
                            : it->is_string() ? "schema \"" + Excerpt(it->get<std::string>()) + "\""
                                              : "schema " + Excerpt(it->dump());
  const bool older = it != j.end() && it->is_string() &&
                     it->get<std::string>().rfind("ppsearch.calibration/", 0) == 0;
  return MakeError(path + ": " + found + ", expected schema \"" + kCalibrationSchema +
                   "\" (a calibration written by 'ppsearch calibrate'" +
                   (older ? "; run it again to write this version" : "") + ")");
}

// The "model_error" object: the form it states must be the one the code
// computes, and every scale a non-negative number.
Result<ModelFormScales> ParseModelForm(const std::string& path, const nlohmann::json& j) {
  const auto& m = j["model_error"];
  if (!m.is_object()) return MakeError(path + ": key 'model_error': expected an object");
  if (!m.contains("form") || !m["form"].is_string() || m["form"].get<std::string>() != kModelForm)
    return MakeError(
        path + ": key 'model_error.form': expected \"" + std::string(kModelForm) + "\"" +
        (m.contains("form") ? ", got " + Excerpt(m["form"].dump()) +
                                  " (a form another version of ppsearch wrote: run 'ppsearch "
                                  "calibrate' again to write this one)"
                            : ", found none"));
  ModelFormScales out;
  const auto read = [&](const char* key, double* dst) -> Status {
    if (!m.contains(key) || !m[key].is_number() ||
        !cost::ModelFormSigmaInRange(m[key].get<double>()))
      return MakeError(path + ": key 'model_error." + key + "': expected a number in [0, " +
                       nlohmann::json(cost::kMaxModelFormSigma).dump() + "] (" +
                       cost::kModelFormSigmaWhy + ")" +
                       (m.contains(key) ? ", got " + Excerpt(m[key].dump()) : ", found none"));
    *dst = m[key].get<double>();
    return Status::Ok();
  };
  PPS_RETURN_IF_ERROR(read("s0", &out.s0));
  std::array<double, cost::kModelFormDistances> scales{};
  for (int k = 0; k < cost::kModelFormDistances; ++k)
    PPS_RETURN_IF_ERROR(read(cost::kModelFormDistanceNames[k], &scales[k]));
  out.SetPerUnit(scales);
  if (m.contains("source") && m["source"].is_string()) out.source = m["source"].get<std::string>();
  return out;
}

// The covariance of log(parameter) means something only as a covariance:
// finite, symmetric, variances in [0, kMaxLogVariance], every correlation in
// [-1, 1]. A 1e300 variance would make every draw overflow; a negative one
// has no square root.
Status CheckLogCovariance(const std::string& path, const std::vector<double>& m) {
  const auto at = [&](int r, int k) { return m[static_cast<size_t>(r) * kParamCount + k]; };
  const auto key = [&](int r, int k) {
    return path + ": key 'log_covariance[" + std::to_string(r) + "][" + std::to_string(k) + "]' (" +
           std::string(AllParams()[r].name) + ", " + std::string(AllParams()[k].name) + "): ";
  };
  for (int r = 0; r < kParamCount; ++r) {
    const double v = at(r, r);
    if (!(v >= 0 && v <= cost::kMaxLogVariance))
      return MakeError(key(r, r) + "expected a variance in [0, " +
                       nlohmann::json(cost::kMaxLogVariance).dump() + "] (" +
                       cost::kMaxLogVarianceWhy + "), got " + nlohmann::json(v).dump());
  }
  for (int r = 0; r < kParamCount; ++r)
    for (int k = r + 1; k < kParamCount; ++k) {
      const double c = at(r, k);
      const double limit = std::sqrt(at(r, r) * at(k, k)) * (1 + 1e-9) + 1e-300;
      if (!std::isfinite(c) || std::abs(c - at(k, r)) > 1e-9 * limit + 1e-12)
        return MakeError(key(r, k) + "expected a finite number equal to [" + std::to_string(k) +
                         "][" + std::to_string(r) + "] (a covariance is symmetric), got " +
                         nlohmann::json(c).dump() + " and " + nlohmann::json(at(k, r)).dump());
      if (std::abs(c) > limit)
        return MakeError(key(r, k) +
                         "expected |covariance| <= sqrt(variance x variance), a correlation "
                         "within [-1, 1], got " +
                         nlohmann::json(c).dump());
    }
  return Status::Ok();
}

}  // namespace

Result<Calibration> LoadCalibration(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(path));
  return ParseCalibration(j, path);
}

Result<Calibration> ParseCalibration(const nlohmann::json& j, const std::string& path) {
  PPS_RETURN_IF_ERROR(CheckSchema(path, j));
  if (!j.contains("parameters") || !j["parameters"].is_object())
    return MakeError(path +
                     ": expected a calibration file with a 'parameters' object (written by "
                     "'ppsearch calibrate')");
  Calibration c = Calibration::Defaults();
  for (const auto& [key, v] : j["parameters"].items()) {
    const ParamInfo* info = FindParam(key);
    if (info == nullptr) return UnknownKey(path, key);
    if (!v.is_number())
      return MakeError(path + ": key 'parameters." + key + "': expected a number, got " +
                       std::string(v.type_name()));
    const double x = v.get<double>();
    // Profile-dependent bounds are checked where the profile is known (the
    // cost model caps links at line rate); these are the fixed ones.
    const double hi = info->param == Param::kIntraLink ? 1e6 : info->bound_hi;
    if (!(x >= info->bound_lo && x <= hi))
      return MakeError(path + ": key 'parameters." + key + "': expected a value in [" +
                       nlohmann::json(info->bound_lo).dump() + ", " + nlohmann::json(hi).dump() +
                       "] (" + std::string(info->unit) +
                       "; bound: " + std::string(info->bound_why) + "), got " + v.dump());
    c.Set(info->param, x);
    c.status[Index(info->param)] = ParamStatus::kDetermined;
  }
  // A parameter left out would silently take its prior's centre while the
  // file claims to be a fit.
  for (const auto& p : AllParams())
    if (!j["parameters"].contains(p.name))
      return MakeError(path + ": key 'parameters." + std::string(p.name) +
                       "' is missing; a calibration states every parameter (" +
                       std::string(p.unit) + "; its prior's centre is " +
                       nlohmann::json(p.nominal).dump() + ")");
  if (j.contains("status") && j["status"].is_object())
    for (const auto& [key, v] : j["status"].items()) {
      const ParamInfo* info = FindParam(key);
      if (info == nullptr) return UnknownKey(path, key);
      PPS_ASSIGN_OR_RETURN(c.status[Index(info->param)], ParseStatus(path, key, v));
    }
  if (j.contains("notes") && j["notes"].is_object())
    for (const auto& [key, v] : j["notes"].items())
      if (const ParamInfo* info = FindParam(key); info != nullptr && v.is_string())
        c.note[Index(info->param)] = v.get<std::string>();
  if (j.contains("log_covariance")) {
    const auto& m = j["log_covariance"];
    const std::string what = path + ": key 'log_covariance': expected a " +
                             std::to_string(kParamCount) + " x " + std::to_string(kParamCount) +
                             " array of numbers in parameter order";
    if (!m.is_array() || m.size() != kParamCount) return MakeError(what);
    for (const auto& row : m) {
      if (!row.is_array() || row.size() != kParamCount) return MakeError(what);
      for (const auto& x : row) {
        if (!x.is_number()) return MakeError(what);
        c.log_covariance.push_back(x.get<double>());
      }
    }
    PPS_RETURN_IF_ERROR(CheckLogCovariance(path, c.log_covariance));
  }
  if (j.contains("infeasible") && j["infeasible"].is_array())
    for (const auto& s : j["infeasible"])
      if (s.is_string()) c.infeasible.push_back(s.get<std::string>());
  if (j.contains("off_prior") && j["off_prior"].is_array())
    for (const auto& s : j["off_prior"])
      if (s.is_string()) c.off_prior.push_back(s.get<std::string>());
  // What `ppsearch calibrate` fitted to; other writers may leave it out.
  if (j.contains("fit") && j["fit"].is_object() && j["fit"].contains("layouts") &&
      j["fit"]["layouts"].is_array())
    for (const auto& label : j["fit"]["layouts"])
      if (label.is_string()) c.fitted_layouts.push_back(label.get<std::string>());
  if (j.contains("fit") && j["fit"].is_object()) {
    const auto& fit = j["fit"];
    if (fit.contains("hardware") && fit["hardware"].is_string())
      c.fitted_hardware = fit["hardware"].get<std::string>();
    if (fit.contains("gpus_per_node") && fit["gpus_per_node"].is_number_integer())
      c.fitted_gpus_per_node = fit["gpus_per_node"].get<int>();
    if (fit.contains("input_tokens") && fit["input_tokens"].is_number_integer())
      c.fitted_input_tokens = fit["input_tokens"].get<int64_t>();
    if (fit.contains("concurrency") && fit["concurrency"].is_array())
      for (const auto& level : fit["concurrency"])
        if (level.is_number_integer() && level.get<int>() > 0)
          c.fitted_concurrency.push_back(level.get<int>());
    if (fit.contains("output_tokens") && fit["output_tokens"].is_number_integer())
      c.fitted_output_tokens = fit["output_tokens"].get<int64_t>();
  }
  if (j.contains("model_error")) {
    PPS_ASSIGN_OR_RETURN(c.model_form, ParseModelForm(path, j));
  }
  c.source = path;
  return c;
}

namespace {

nlohmann::ordered_json PointsJson(const std::vector<CalibrationFitPoint>& points) {
  auto a = nlohmann::ordered_json::array();
  for (const CalibrationFitPoint& r : points)
    a.push_back({{"pp", r.layout.pp},
                 {"tp", r.layout.tp},
                 {"ep", r.layout.ep},
                 {"concurrency", r.concurrency},
                 {"input_tps_measured", r.measured_tps},
                 {"input_tps_predicted", r.predicted_tps},
                 {"ttft_p50_s_measured", r.measured_ttft_p50_s},
                 {"ttft_p50_s_predicted", r.predicted_ttft_p50_s},
                 {"peak_gpu_mib_measured", r.measured_peak_mib},
                 {"peak_gpu_mib_predicted", r.predicted_peak_mib}});
  return a;
}

// The `fit` section: where the fit sits (the model-form term's extrapolation
// distances start there), what it was fitted to and how it met each point.
nlohmann::ordered_json FitJson(const Calibration& c, const CalibrationFitRecord& fit) {
  nlohmann::ordered_json j;
  j["hardware"] = c.fitted_hardware;
  j["gpus_per_node"] = c.fitted_gpus_per_node;
  j["input_tokens"] = c.fitted_input_tokens;
  j["concurrency"] = c.fitted_concurrency;
  j["output_tokens"] = c.fitted_output_tokens;
  if (!c.fitted_layouts.empty()) j["layouts"] = c.fitted_layouts;
  if (!fit.measured.empty()) j["measured"] = fit.measured;
  j["points"] = PointsJson(fit.points);
  for (const CalibrationFitShare& s : fit.exposed_comm_share)
    j["exposed_comm_share"].push_back(
        {{"layout", s.layout.Label()}, {"measured", s.measured}, {"predicted", s.predicted}});
  if (!fit.leave_one_layout_out.empty())
    j["leave_one_layout_out"] = PointsJson(fit.leave_one_layout_out);
  return j;
}

}  // namespace

Status SaveCalibration(const Calibration& c, const std::string& path,
                       const CalibrationFitRecord* fit) {
  nlohmann::ordered_json j;
  j["schema"] = kCalibrationSchema;
  for (const auto& p : AllParams()) {
    j["parameters"][std::string(p.name)] = c.Get(p.param);
    j["status"][std::string(p.name)] = ParamStatusName(c.Status(p.param));
    if (!c.note[Index(p.param)].empty()) j["notes"][std::string(p.name)] = c.note[Index(p.param)];
  }
  if (c.log_covariance.size() == static_cast<size_t>(kParamCount * kParamCount)) {
    j["log_covariance"] = nlohmann::ordered_json::array();
    for (int r = 0; r < kParamCount; ++r) {
      auto row = nlohmann::ordered_json::array();
      for (int k = 0; k < kParamCount; ++k) row.push_back(c.log_covariance[r * kParamCount + k]);
      j["log_covariance"].push_back(row);
    }
  }
  j["infeasible"] = c.infeasible;
  j["off_prior"] = c.off_prior;
  if (c.model_form) {
    const ModelFormScales& m = *c.model_form;
    auto& e = j["model_error"];
    e["form"] = kModelForm;
    e["s0"] = m.s0;
    const auto scales = m.PerUnit();
    for (int k = 0; k < cost::kModelFormDistances; ++k)
      e[cost::kModelFormDistanceNames[k]] = scales[k];
    e["source"] = m.source;
  }
  if (fit != nullptr) j["fit"] = FitJson(c, *fit);
  return WriteFileAtomic(path, j.dump(2) + "\n");
}

}  // namespace ppsearch::evidence
