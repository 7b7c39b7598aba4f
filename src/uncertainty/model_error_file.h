#pragma once
// data/model_error.json: the fitted model-form scales (model_error.h) that
// every interval carries, written by `ppsearch backtest DIR
// --fit-model-error FILE` from the backtest corpus and read wherever a
// calibration states none of its own. This file is its only reader and
// writer; the format is in docs/formats.md.

#include <string>

#include "cost/calibration.h"
#include "uncertainty/model_error.h"
#include "util/result.h"

namespace ppsearch::uncertainty {

// DataDir()/model_error.json.
std::string ShippedModelFormPath();

Result<cost::ModelFormScales> LoadModelForm(const std::string& path);

// `command` is recorded as how the file was made.
Status SaveModelForm(const ModelFormFit& fit, const std::string& path, const std::string& command);

// The scales `calibration` uses: those it states, else the shipped file's.
Result<cost::ModelFormScales> ModelFormFor(const cost::Calibration& calibration);

}  // namespace ppsearch::uncertainty
