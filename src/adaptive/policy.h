#pragma once
// The adaptive run's policy on plain numbers: what is known of each
// candidate layout at each load point (a measured median, or a prediction
// with its ensemble and model-form term), the joint belief that follows,
// how likely the current choice of primary and fallback is to be wrong,
// which point's measurement would lower that most per GPU-hour, and when
// to stop. Pure and deterministic: the same problem and seed give the same
// answer. docs/adaptive.md states every rule and why.
//
// The belief is a set of joint draws of every candidate's objective at
// every load point:
//   - a measured point draws around its median with the median's noise;
//   - an unmeasured point of a layout measured elsewhere follows that
//     layout's measured miss: member x exp(miss + within_sigma z_layout);
//   - an unmeasured point of an unmeasured layout draws
//     member x exp(sigma z_layout), the parameter ensemble's member times
//     the model-form discrepancy, one z per layout and draw, so a layout's
//     load points move together as a layout-level error would move them.
// Each draw ranks the candidates by decide::RelativeScores, as the decision
// on measurements does.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ppsearch::adaptive {

struct PointState {
  double central = 0;              // the refit calibration's prediction (objective)
  std::vector<double> members;     // one per ensemble member; empty: central only
  double sigma = 0;                // model-form log sigma of an unmeasured prediction
  std::optional<double> measured;  // median objective over the point's repeats
  double measured_sigma = 0.01;    // log standard deviation of that median
  double sample_s = 0;             // one sample's benchmark wall time (measured or predicted)
};

struct CandidateState {
  std::string id;     // layout id ("pp8-tp4-ep4")
  std::string label;  // "PP8/TP4/EP4"
  int gpus = 0;
  bool excluded = false;           // cannot qualify (a failed measurement, too little memory)
  std::string why;                 // one sentence when excluded
  std::vector<PointState> points;  // one per load point

  bool FullyMeasured() const;
  bool AnyMeasured() const;
};

struct Problem {
  std::vector<int> load_points;  // concurrency levels, the decision's
  std::vector<CandidateState> candidates;
  bool lower_is_better = false;  // the objective (ttft_p50) is better low
  int repeats = 1;               // samples per point
  bool reuse_server = false;     // one server start per layout and visit
  double server_start_s = 600;   // wall seconds of one server start
  std::string running;           // the layout whose server is up ("" none)
  // The miss between two load points of one layout once one of them is
  // measured (the model form's s0: the miss at a calibrated point).
  double within_sigma = 0.03;
  double stop_probability = 0.05;
  int draws = 512;
  int outcomes = 8;  // hypothetical measurements per point in the value of information
  uint64_t seed = 1;
};

struct Assessment {
  std::vector<double> p_best;          // per candidate: P(it is the best)
  std::vector<double> p_top_two;       // per candidate: P(it is in the top two)
  std::vector<double> expected_score;  // per candidate; 0 when excluded
  int primary = -1, fallback = -1;     // by expected score; -1: none
  // P(the top two, in order, are not primary and fallback).
  double p_wrong = 0;
  // P(a candidate not fully measured is in the top two).
  double p_change = 0;
  // primary and fallback fully measured, p_change below stop_probability,
  // and no draw degenerate.
  bool settled = false;
  // Draws whose values overflowed, underflowed to 0 or are not numbers (a
  // model-form sigma far beyond what it can mean): while any remain, the
  // run measures on rather than stop on them.
  int degenerate_draws = 0;
  int eligible = 0;  // candidates not excluded
};

struct Choice {
  int candidate = -1;
  int point = -1;  // index into load_points
  double value_of_information = 0;
  double p_wrong_expected_after = 0;
  double cost_gpu_hours = 0;
  bool server_start = false;
  std::string reason;  // one sentence
};

Assessment Assess(const Problem& problem);

// The unmeasured point whose measurement is expected to lower p_wrong most
// per GPU-hour; nullopt when every point of every eligible candidate is
// measured.
std::optional<Choice> ChooseNext(const Problem& problem, const Assessment& now);

// GPU-hours of measuring one point (its repeats), with the server start it
// needs: none when reuse_server keeps this layout's server up, one with
// reuse_server, one per repeat without.
double PointCost(const Problem& problem, int candidate, int point, bool* server_start = nullptr);

// GPU-hours of the full sweep of every candidate at every load point, run
// in sweep order (one start per layout with reuse_server, else per sample).
double FullSweepGpuHours(const Problem& problem);

}  // namespace ppsearch::adaptive
