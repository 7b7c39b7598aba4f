#include "evidence/calibration_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "spec/layout_text.h"
#include "spec/limits.h"
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

// The `fit` section is where the fit sat: the model-form term measures
// each prediction's extrapolation distances from it, so a value off its
// meaning moves every interval (an input length of -16000 or "abc" dropped
// the length distance, 1e12 widened tenfold, a layout no point was measured
// at narrowed its neighbours'). Each value is bounded as the spec bounds the
// value calibrate copied; a key may be missing (a file written before it
// existed, or a calibration no fit produced): not recorded.
class FitReader {
 public:
  FitReader(const std::string& path, const nlohmann::json& fit) : path_(path), fit_(fit) {}

  Error KeyError(const std::string& key, const std::string& expected,
                 const nlohmann::json& got) const {
    return MakeError(path_ + ": key 'fit." + key + "': expected " + expected + ", got " +
                     Excerpt(got.dump()));
  }

  // An integer in [1, hi], as the spec's key `what` is.
  Status Count(const char* key, int64_t hi, const char* what, int64_t* out) const {
    if (!fit_.contains(key)) return Status::Ok();
    const nlohmann::json& v = fit_[key];
    if (!IsCount(v, hi))
      return KeyError(key, fmt::format("an integer in [1, {}] (the fitted spec's {})", hi, what),
                      v);
    *out = v.get<int64_t>();
    return Status::Ok();
  }

  // A profile's name, as `cluster.hardware` names it (or a profile file's
  // stem): any name is one, a typo reading as other hardware.
  Status Hardware(std::string* out) const {
    if (!fit_.contains("hardware")) return Status::Ok();
    const nlohmann::json& v = fit_["hardware"];
    const std::string name = v.is_string() ? v.get<std::string>() : "";
    const bool plain = !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
                       std::none_of(name.begin(), name.end(), [](char ch) {
                         return ch == '/' || static_cast<unsigned char>(ch) < 0x20;
                       });
    if (!plain)
      return KeyError("hardware",
                      "a hardware profile's name (the fitted spec's cluster.hardware, e.g. "
                      "\"rtx-6000d\")",
                      v);
    *out = name;
    return Status::Ok();
  }

  // The measured concurrency levels: ascending, each once.
  Status Concurrency(std::vector<int>* out) const {
    if (!fit_.contains("concurrency")) return Status::Ok();
    const nlohmann::json& v = fit_["concurrency"];
    const std::string expected = fmt::format(
        "the measured concurrency levels: a non-empty array of integers in [1, {}], ascending, "
        "each once",
        spec::kMaxConcurrency);
    if (!v.is_array() || v.empty()) return KeyError("concurrency", expected, v);
    for (const auto& level : v) {
      if (!IsCount(level, spec::kMaxConcurrency) ||
          (!out->empty() && level.get<int>() <= out->back()))
        return KeyError("concurrency", expected, v);
      out->push_back(level.get<int>());
    }
    return Status::Ok();
  }

  // Labels as LayoutSpec::Label writes them, each once.
  Status Layouts(std::vector<std::string>* out) const {
    if (!fit_.contains("layouts")) return Status::Ok();
    const nlohmann::json& v = fit_["layouts"];
    if (!v.is_array() || v.empty())
      return KeyError("layouts", "a non-empty array of the fitted layouts' labels", v);
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string label = v[i].is_string() ? v[i].get<std::string>() : "";
      const Result<spec::LayoutSpec> layout = spec::ParseLayoutText(label);
      if (!layout.ok() || layout->Label() != label ||
          std::find(out->begin(), out->end(), label) != out->end())
        return KeyError(Index("layouts", i),
                        "a fitted layout's label, each once (e.g. \"PP1/TP32/EP4\")", v[i]);
      out->push_back(label);
    }
    return Status::Ok();
  }

  // The (pp, tp, ep) and concurrency of each point of `key` (fit.points,
  // fit.leave_one_layout_out), which the layouts and levels must be those of.
  Status Points(const char* key, std::vector<std::tuple<int, int, int, int>>* out) const {
    if (!fit_.contains(key)) return Status::Ok();
    const nlohmann::json& v = fit_[key];
    if (!v.is_array()) return KeyError(key, "an array of the fitted points", v);
    for (size_t i = 0; i < v.size(); ++i) {
      const nlohmann::json& point = v[i];
      int sizes[4] = {};
      const char* names[4] = {"pp", "tp", "ep", "concurrency"};
      for (int k = 0; k < 4; ++k) {
        const int64_t hi = k == 3 ? spec::kMaxConcurrency : spec::kMaxParallelSize;
        const nlohmann::json got = point.is_object() && point.contains(names[k])
                                       ? point[names[k]]
                                       : nlohmann::json(nullptr);
        if (!IsCount(got, hi))
          return KeyError(Index(key, i) + "." + names[k], fmt::format("an integer in [1, {}]", hi),
                          got);
        sizes[k] = got.get<int>();
      }
      out->emplace_back(sizes[0], sizes[1], sizes[2], sizes[3]);
    }
    return Status::Ok();
  }

 private:
  static bool IsCount(const nlohmann::json& v, int64_t hi) {
    return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= hi;
  }
  static std::string Index(const std::string& key, size_t i) {
    return key + "[" + std::to_string(i) + "]";
  }

  const std::string& path_;
  const nlohmann::json& fit_;
};

std::string Joined(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The layouts and levels the file says the fit sat at are those of the
// points it records the fit meeting (calibrate writes both from the same
// measurements).
Status CheckFitAgainstPoints(const FitReader& reader, const std::vector<std::string>& layouts,
                             const std::vector<int>& levels,
                             const std::vector<std::tuple<int, int, int, int>>& points) {
  std::set<std::string> measured_layouts;
  std::set<int> measured_levels;
  for (const auto& [pp, tp, ep, concurrency] : points) {
    measured_layouts.insert(fmt::format("PP{}/TP{}/EP{}", pp, tp, ep));
    measured_levels.insert(concurrency);
  }
  std::set<std::string> listed;
  for (const std::string& label : layouts) {
    const spec::LayoutSpec l = *spec::ParseLayoutText(label);
    listed.insert(fmt::format("PP{}/TP{}/EP{}", l.pp, l.tp, l.ep));
  }
  if (!layouts.empty() && listed != measured_layouts)
    return reader.KeyError("layouts",
                           "the layouts of the points in fit.points and "
                           "fit.leave_one_layout_out (" +
                               Joined(measured_layouts) + ")",
                           nlohmann::json(layouts));
  if (!levels.empty() && std::set<int>(levels.begin(), levels.end()) != measured_levels)
    return reader.KeyError("concurrency",
                           "the levels of the points in fit.points and "
                           "fit.leave_one_layout_out (" +
                               nlohmann::json(measured_levels).dump() + ")",
                           nlohmann::json(levels));
  return Status::Ok();
}

Status ReadFit(const std::string& path, const nlohmann::json& fit, Calibration& c) {
  if (!fit.is_object())
    return MakeError(path +
                     ": key 'fit': expected an object (what 'ppsearch calibrate' fitted "
                     "to), got " +
                     std::string(fit.type_name()));
  const FitReader reader(path, fit);
  PPS_RETURN_IF_ERROR(reader.Hardware(&c.fitted_hardware));
  int64_t gpus_per_node = 0;
  PPS_RETURN_IF_ERROR(reader.Count("gpus_per_node", spec::kMaxGpusPerNode, "cluster.gpus_per_node",
                                   &gpus_per_node));
  c.fitted_gpus_per_node = static_cast<int>(gpus_per_node);
  PPS_RETURN_IF_ERROR(reader.Count("input_tokens", spec::kMaxTokens, "workload.input_tokens",
                                   &c.fitted_input_tokens));
  PPS_RETURN_IF_ERROR(reader.Count("output_tokens", spec::kMaxTokens, "workload.output_tokens",
                                   &c.fitted_output_tokens));
  PPS_RETURN_IF_ERROR(reader.Concurrency(&c.fitted_concurrency));
  PPS_RETURN_IF_ERROR(reader.Layouts(&c.fitted_layouts));
  std::vector<std::tuple<int, int, int, int>> points;
  PPS_RETURN_IF_ERROR(reader.Points("points", &points));
  PPS_RETURN_IF_ERROR(reader.Points("leave_one_layout_out", &points));
  if (points.empty()) return Status::Ok();  // a file that records none: nothing to hold them to
  return CheckFitAgainstPoints(reader, c.fitted_layouts, c.fitted_concurrency, points);
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
  if (j.contains("fit")) PPS_RETURN_IF_ERROR(ReadFit(path, j["fit"], c));
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
  // A value the calibration does not record (empty or 0) is left out, as a
  // file written before its key existed leaves it: the reader takes each
  // one present as what the fit saw.
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!c.fitted_hardware.empty()) j["hardware"] = c.fitted_hardware;
  if (c.fitted_gpus_per_node > 0) j["gpus_per_node"] = c.fitted_gpus_per_node;
  if (c.fitted_input_tokens > 0) j["input_tokens"] = c.fitted_input_tokens;
  if (!c.fitted_concurrency.empty()) j["concurrency"] = c.fitted_concurrency;
  if (c.fitted_output_tokens > 0) j["output_tokens"] = c.fitted_output_tokens;
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
