#pragma once
// The adaptive run's part of report.md and report.html: why it stopped and
// what it spent against the full sweep, each step's point and reason as a
// table, and the probability of a wrong choice against GPU-hours spent as
// a chart. Numbers come from the trajectory the run wrote
// (evidence/trajectory.h); nothing is recomputed here.

#include <optional>
#include <string>

#include "analysis/run.h"
#include "evidence/trajectory.h"
#include "report/document.h"

namespace ppsearch::report {

inline constexpr const char* kFigureTrajectory = "trajectory";

// nullopt for a run that measured every sample of its sweep.
std::optional<Section> AdaptiveSection(const analysis::RunAnalysis& a);

// The chart: one point per step (what had been spent, and the probability
// of a wrong choice then), and the stop.
std::string TrajectoryChart(const evidence::Trajectory& t);

}  // namespace ppsearch::report
