#pragma once
// What an adaptive run knows before each step, read from its run directory
// (the edge of this folder): the points measured so far (medians of
// completed repeats), a calibration refitted on all of them, every other
// point predicted with its ensemble and model-form term, what has been
// spent in GPU-hours (timed server starts where the engine timed them), and
// which samples have run.

#include <set>
#include <string>
#include <vector>

#include "adaptive/policy.h"
#include "cost/calibration.h"
#include "evidence/evidence.h"
#include "inputs/search_inputs.h"
#include "util/result.h"

namespace ppsearch::adaptive {

struct ObserveOptions {
  int members = 32;  // parameter ensemble behind each prediction
  uint64_t seed = 1;
  // false: what was spent only (no refit, no prediction, no candidates).
  bool predict = true;
};

struct Observation {
  Problem problem;  // candidates in the plan's order, load points the sweep's
  // The calibration the predictions used: refitted on every measured point,
  // or the run's own before any.
  cost::Calibration calibration;
  std::vector<std::string> calibrated_on;  // layout labels of the refit
  std::vector<std::string> notes;          // a refit that failed, and why
  double gpu_hours_spent = 0;
  int samples_spent = 0;  // samples that ran (completed or failed)
  // Their ids (SampleId::str()): a step whose samples are not all here was
  // interrupted, and is finished before anything new is chosen.
  std::set<std::string> ran;
  std::vector<std::string> ran_in_order;  // the same, in the order they ran
};

// `inputs` is the run's spec (its sweep: the candidates), model, hardware
// and plan; `start` the calibration the run was given (defaults when none).
// Errors: a layout the simulator cannot predict, evidence that cannot be read.
Result<Observation> Observe(const inputs::SearchInputs& inputs, const cost::Calibration& start,
                            const std::string& run_dir, const ObserveOptions& options = {});

}  // namespace ppsearch::adaptive
