#pragma once
// Points of two sides side by side: matched by layout and concurrency, each
// metric of both with the absolute and relative difference, and whether the
// difference is within the repeats' noise. When one side is simulated and
// the other measured, the prediction check: per-point error and whether the
// ranking of layouts agrees. Pure.
//
// Noise: a difference is within noise when |b / a - 1| is at most the larger
// repeat spread ((max - min) / median, stats::Spread, as summary.csv holds
// it) of the two sides' points. A point's spread counts only when it has at
// least two repeats and the side records spreads (a CSV may not).

#include <optional>
#include <string>
#include <vector>

#include "analysis/points.h"

namespace ppsearch::compare {

struct SidePoints {
  std::vector<analysis::PointSummary> points;
  bool spreads_recorded = true;  // false: a CSV without the *_spread columns
};

// One figure of a matched point on both sides. A side whose file does not
// hold the figure (a CSV without the column) has none, and nothing is
// derived from it: no difference, and whether it is within noise unknown.
struct MetricDiff {
  std::string name;  // "input_tps", "ttft_p50_s", "ttft_p95_s", "peak_gpu_mib"
  std::optional<double> a;
  std::optional<double> b;
  std::optional<double> abs;    // b - a, both known
  std::optional<double> rel;    // b / a - 1; nullopt when either is unknown or a is 0
  std::optional<double> noise;  // the larger known spread; nullopt: no spread known
  // |rel| <= noise; nullopt when either is unknown.
  std::optional<bool> within_noise;
};

struct MatchedPoint {
  spec::LayoutSpec layout;    // A's
  spec::LayoutSpec b_layout;  // B's: the same, or another EP size (see MatchPoints)
  int concurrency = 0;
  std::vector<MetricDiff> metrics;
};

struct PointMatch {
  std::vector<MatchedPoint> matched;  // in A's order
  std::vector<std::string> only_a;    // "PP2/TP16/EP4 C=8"
  std::vector<std::string> only_b;
};

// Points with the same layout and concurrency first; then each point left on
// A with one left on B of the same PP, TP and concurrency but another EP size
// (an older EP8 run against a new EP4 one): EP is then a confounder of the
// comparison (ExpertParallelDifference), not a reason to compare nothing.
PointMatch MatchPoints(const SidePoints& a, const SidePoints& b);

// "EP8" vs "EP4" when matched points differ in EP size: each side's EP sizes
// among them, e.g. {"8", "4"}; nullopt when every matched point has one EP.
std::optional<std::pair<std::string, std::string>> ExpertParallelDifference(const PointMatch& m);

struct PredictionPoint {
  spec::LayoutSpec layout;
  int concurrency = 0;
  // predicted / measured - 1 per metric; nullopt where measured is 0.
  std::optional<double> input_tps_error;
  std::optional<double> ttft_p50_error;
  std::optional<double> ttft_p95_error;
};

// Layouts at one concurrency, best input throughput first.
struct RankingCheck {
  int concurrency = 0;
  std::vector<std::string> measured;  // layout labels
  std::vector<std::string> predicted;
  bool agrees = false;
};

struct PredictionCheck {
  char predicted_side = 'A';  // 'A' or 'B'
  std::vector<PredictionPoint> points;
  std::vector<RankingCheck> rankings;  // concurrency levels with two or more matched layouts
  bool ranking_agrees = true;
  std::optional<double> median_abs_input_tps_error;
};

// The check when exactly one side is simulated (`a_simulated` != `b_simulated`).
PredictionCheck CheckPrediction(const PointMatch& match, bool a_simulated);

}  // namespace ppsearch::compare
