#pragma once
// Running a backtest case: every configuration's spec is the base spec with
// its overrides; each model family (configurations with the same model
// config) is calibrated on its calibration configurations alone, then every
// configuration is predicted with its family's calibration and checked
// against the case's reference figures (backtest/evaluate.h).

#include <string>
#include <vector>

#include "backtest/case_file.h"
#include "backtest/evaluate.h"
#include "cost/calibration.h"
#include "decide/steady_state.h"
#include "uncertainty/ensemble.h"
#include "util/result.h"

namespace ppsearch::backtest {

struct ConfigurationResult {
  std::string name;
  spec::LayoutSpec layout;  // a deployment's: its prefill pool's
  // A deployment's pools, "1P x PP1/TP8/EP1 + 1D x PP1/TP8/EP1"; empty for a layout.
  std::string deployment;
  std::string hardware;          // profile name
  std::string model;             // model config path
  std::string weights;           // the checkpoint's quantization ("fp8", "none", ...)
  std::string calibration_from;  // the configuration whose fit predicts it, when not its own
  int concurrency = 1;
  // The simulated sample, named for the configuration: its requests and, in
  // a closed loop, its concurrency (0: an open loop), for the steady-state rule.
  decide::LoopSample sample;
  bool calibrated_on = false;
  bool dynamic_chunking = false;  // the simulated engine ran it
  int64_t chunked_prefill_size = 0;
  ConfigurationPrediction prediction;
};

// A configuration the source says SGLang cannot run: right when ppsearch's
// planner refuses its layout too.
struct RefusalResult {
  std::string configuration;
  spec::LayoutSpec layout;
  std::string what;      // the source's words
  std::string because;   // text the planner's reason must contain (empty: any)
  bool refused = false;  // the planner rejects the layout, for `because` when given
  std::string reason;    // the planner's errors (empty when it plans the layout)
};

struct FamilyFit {
  std::string model;                        // model config path
  std::vector<std::string> configurations;  // the calibration configurations
  cost::Calibration calibration;
};

struct CaseResult {
  std::string path, name;
  double tolerance = 0;
  std::vector<FamilyFit> fits;
  std::vector<ConfigurationResult> configurations;
  std::vector<FigureResult> figures;  // fit residuals first, then the references
  // The same references, and each calibration configuration's own measured
  // point, predicted with no calibration (the parameters' priors, as
  // simulate and search predict before anything is measured): every one is
  // held out. Not part of passed(): the tolerance judges calibrated figures.
  std::vector<FigureResult> uncalibrated;
  std::vector<SignResult> signs;
  std::vector<RefusalResult> refusals;

  int figures_within() const;
  int figures_accepted() const;  // within, or outside with a stated reason (FigureResult::accepted)
  int signs_right() const;
  int refusals_right() const;
  bool passed() const {
    return figures_accepted() == static_cast<int>(figures.size()) &&
           signs_right() == static_cast<int>(signs.size()) &&
           refusals_right() == static_cast<int>(refusals.size());
  }
};

struct RunOptions {
  // The parameter ensemble behind each reference figure's interval.
  uncertainty::EnsembleOptions ensemble;
  int threads = 2;  // the result does not depend on it
};

// Loads every configuration's spec, model and hardware, fits, predicts and
// checks. Errors name the case file, the configuration and the key.
Result<CaseResult> RunCase(const Case& c, const RunOptions& options = {});

}  // namespace ppsearch::backtest
