#include "uncertainty/model_error_file.h"

#include <nlohmann/json.hpp>

#include "util/files.h"
#include "util/json_file.h"

namespace ppsearch::uncertainty {
namespace {

constexpr const char* kSchema = "ppsearch.model_error/1";

}  // namespace

std::string ShippedModelFormPath() { return DataDir() + "/model_error.json"; }

Result<cost::ModelFormScales> LoadModelForm(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(nlohmann::json j, ReadJsonFile(path));
  if (!j.is_object() || !j.contains("schema") || j["schema"] != kSchema)
    return MakeError(path + ": expected schema \"" + std::string(kSchema) +
                     "\" (written by 'ppsearch backtest DIR --fit-model-error FILE')");
  if (!j.contains("form") || j["form"] != cost::kModelForm)
    return MakeError(path + ": key 'form': expected \"" + std::string(cost::kModelForm) + "\"");
  cost::ModelFormScales s;
  const std::string range = " (" + std::string(cost::kModelFormSigmaWhy) + ")";
  if (!j.contains("s0") || !j["s0"].is_number() || !(j["s0"].get<double>() > 0) ||
      !cost::ModelFormSigmaInRange(j["s0"].get<double>()))
    return MakeError(path + ": key 's0': expected a number in (0, 2]" + range);
  s.s0 = j["s0"].get<double>();
  std::array<double, cost::kModelFormDistances> scales{};
  for (int k = 0; k < cost::kModelFormDistances; ++k) {
    const char* key = cost::kModelFormDistanceNames[k];
    if (!j.contains("scales") || !j["scales"].contains(key) || !j["scales"][key].is_number() ||
        !cost::ModelFormSigmaInRange(j["scales"][key].get<double>()))
      return MakeError(path + ": key 'scales." + std::string(key) +
                       "': expected a number in [0, 2]" + range);
    scales[k] = j["scales"][key].get<double>();
  }
  s.SetPerUnit(scales);
  s.source = path;
  return s;
}

Status SaveModelForm(const ModelFormFit& fit, const std::string& path, const std::string& command) {
  const cost::ModelFormScales& s = fit.scales;
  const auto values = s.PerUnit();
  nlohmann::ordered_json j;
  j["schema"] = kSchema;
  j["form"] = cost::kModelForm;
  j["s0"] = s.s0;
  for (int k = 0; k < cost::kModelFormDistances; ++k) {
    j["scales"][cost::kModelFormDistanceNames[k]] = values[k];
    j["identified"][cost::kModelFormDistanceNames[k]] = fit.identified[k];
  }
  j["misses"] = fit.misses;
  j["log_likelihood"] = fit.log_likelihood;
  j["generated_by"] = command;
  return WriteFileAtomic(path, j.dump(2) + "\n");
}

Result<cost::ModelFormScales> ModelFormFor(const cost::Calibration& calibration) {
  if (calibration.model_form) return *calibration.model_form;
  return LoadModelForm(ShippedModelFormPath());
}

}  // namespace ppsearch::uncertainty
