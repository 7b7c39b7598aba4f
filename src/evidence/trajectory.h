#pragma once
// metadata/adaptive.jsonl: the trajectory of an adaptive run (run
// --adaptive), one JSON object per line, appended as the run goes:
//   - a "step" line before each point is measured: which point, why (the
//     value of information and the probabilities behind it), what it is
//     expected to cost, what was spent before it, and the calibration that
//     chose it;
//   - one "stop" line when the run ends: why it ended (settled, a budget,
//     every point measured), what was spent against the full sweep, what
//     remains uncertain, and the calibration refitted on every measured
//     point (so each step's calibration after it is on the next line).
// The one writer and reader of the file; the keys are in docs/formats.md.

#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "evidence/evidence.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::evidence {

struct TrajectoryStep {
  int step = 0;        // 1, 2, ...
  std::string layout;  // layout id ("pp8-tp4-ep4")
  std::string label;   // "PP8/TP4/EP4"
  int concurrency = 0;
  std::vector<std::string> samples;  // the point's repeats
  std::string reason;                // one sentence
  // The expected drop of the probability of a wrong choice per GPU-hour
  // ranked the points; these are its parts.
  double value_of_information = 0;  // p_wrong_before - expected p_wrong after
  double p_wrong_before = 0;        // P(the top two are not the estimated ones)
  double p_wrong_expected_after = 0;
  double p_change_before = 0;  // P(a candidate not fully measured enters the top two)
  double cost_gpu_hours = 0;   // expected, server start included when one is needed
  bool server_start = false;
  double gpu_hours_spent = 0;  // before this step
  int samples_spent = 0;       // before this step
  double full_sweep_gpu_hours = 0;
  // The calibration's parameter values after refitting on every point
  // measured before this step (name -> value); empty before any.
  nlohmann::json calibration = nlohmann::json::object();
  std::vector<std::string> calibrated_on;              // layout labels the refit used
  std::vector<std::pair<std::string, double>> p_best;  // label -> P(best), as estimated
};

struct TrajectoryStop {
  std::string reason;   // "settled" | "budget" | "complete"
  std::string message;  // one paragraph for the report
  double p_wrong = 0, p_change = 0;
  double gpu_hours_spent = 0;
  int samples_spent = 0;
  double full_sweep_gpu_hours = 0;
  int full_sweep_samples = 0;
  std::string primary, fallback;       // labels, "" when none
  std::vector<std::string> uncertain;  // candidates that could still enter the top two
  // A budget stop: the step it refused and the budget that step would pass.
  std::string budget_detail;
  // The calibration refitted on every point measured (name -> value); empty
  // when nothing was.
  nlohmann::json calibration = nlohmann::json::object();
  std::vector<std::string> calibrated_on;
};

struct Trajectory {
  std::vector<TrajectoryStep> steps;
  std::optional<TrajectoryStop> stop;
};

Status AppendTrajectoryStep(const RunPaths& paths, const TrajectoryStep& step);
Status AppendTrajectoryStop(const RunPaths& paths, const TrajectoryStop& stop);

// An empty trajectory when the file does not exist yet. A run writes at
// most one step per point of its sweep, then one stop line, and nothing
// after it: a step past `max_steps` (the sweep's points) or any line after
// the stop is refused there, before the rest of the file is read. Errors
// name adaptive.jsonl:LINE and the key.
Result<Trajectory> ReadTrajectory(const RunPaths& paths,
                                  size_t max_steps = std::numeric_limits<size_t>::max());

// The steps against the run they claim to be of: numbered 1, 2, ... in
// order; each a point of `layouts` x `concurrency` with exactly its
// `repeats` samples; no point twice (so no more steps than points); in the
// order their samples ran (`ran`, the manifest's samples in run order, each
// once); and every sample in `ran` measured by one of them, else the file
// lost steps. Errors name adaptive.jsonl and the step.
Status CheckTrajectorySteps(const Trajectory& trajectory,
                            const std::vector<spec::LayoutSpec>& layouts,
                            const std::vector<int>& concurrency, int repeats,
                            const std::vector<std::string>& ran);

}  // namespace ppsearch::evidence
