#pragma once
// One adaptive run, step by step: before each step it observes the run
// directory (observe.h), assesses the choice (policy.h), and either writes
// the stop line (settled, a budget spent, every point measured) or the next
// step's line and hands back that point's samples. Everything it decides
// from is in the run directory, so a killed run resumes where it stopped;
// the one thing it keeps is whether this process has run a step yet (a
// server the killed process kept up was stopped when the run resumed).

#include <string>
#include <vector>

#include "adaptive/observe.h"
#include "evidence/evidence.h"
#include "evidence/trajectory.h"
#include "inputs/search_inputs.h"

namespace ppsearch::adaptive {

class Session {
 public:
  Session(const inputs::SearchInputs& inputs, cost::Calibration start, ObserveOptions options = {})
      : inputs_(inputs), start_(std::move(start)), options_(options) {}

  // The samples to run next; empty once the run should end (its stop line
  // is then in the trajectory).
  Result<std::vector<evidence::SampleId>> Next(const evidence::RunPaths& paths);

 private:
  const inputs::SearchInputs& inputs_;
  cost::Calibration start_;
  ObserveOptions options_;
  bool ran_a_step_ = false;  // in this process
};

// The stop line's paragraph: why the run ended and what it leaves open.
std::string StopMessage(const evidence::TrajectoryStop& stop);

}  // namespace ppsearch::adaptive
