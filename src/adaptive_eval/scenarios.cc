#include "adaptive_eval/scenarios.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "adaptive/observe.h"
#include "adaptive/session.h"
#include "evidence/medians_csv.h"
#include "evidence/trajectory.h"
#include "inputs/search_inputs.h"
#include "predict/search_points.h"
#include "report/build_report.h"
#include "run/replay_sample.h"
#include "run/runner.h"
#include "stats/stats.h"
#include "util/files.h"
#include "workload/workload.h"

namespace ppsearch::adaptive_eval {
namespace {

// The medians of one scenario's truth: the calibration's central
// prediction of every point with its layout's hidden factor.
std::vector<evidence::MedianRow> TruthRows(const inputs::SearchInputs& in,
                                           const predict::SearchPrediction& model,
                                           const std::vector<double>& factor, double spread) {
  std::vector<evidence::MedianRow> rows;
  const int repeats = in.spec.sweep.repeats;
  for (const predict::SearchPoint& sp : model.points) {
    const predict::PointPrediction& p = sp.prediction;
    size_t layout = 0;
    while (layout < in.plan.layouts.size() && !(in.plan.layouts[layout].layout == p.layout))
      ++layout;
    const double f = factor[layout];
    evidence::PointSummary truth;
    truth.layout = p.layout;
    truth.concurrency = p.concurrency;
    truth.repeats = repeats;
    truth.valid_repeats = repeats;
    truth.requests_completed = in.spec.workload.requests;
    truth.requests_total = in.spec.workload.requests;
    truth.median.input_tps = p.metrics.input_tps * f;
    truth.input_tps_spread = spread;
    truth.median.ttft_p50_s = p.metrics.ttft_s.p50 / f;
    truth.ttft_p50_s_spread = spread;
    truth.median.ttft_p95_s = p.metrics.ttft_s.p95 / f;
    truth.peak_gpu_mib = p.memory.peak_mib_max;
    truth.gpu_total_mib = in.hardware.memory_mib;
    // The truth has schema 1's first columns only: the decode and SLA
    // figures after them are not modelled, so the file leaves them empty.
    for (const evidence::PointColumn& c : evidence::PointColumns())
      truth.held.push_back(c.csv != evidence::CsvPlace::kLater);
    rows.push_back(evidence::MedianRowOf(truth, /*simulated=*/false));
  }
  return rows;
}

struct Outcome {
  std::string primary, fallback;
  double gpu_hours = 0;
  int samples = 0;
  std::string stop_reason;
};

Result<Outcome> Replay(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                       const ScenarioOptions& o, const std::string& csv, const std::string& dir,
                       bool adaptive) {
  run::RunOptions ro;
  ro.spec_path = o.spec_path;
  ro.overrides = o.overrides;
  ro.run_id = adaptive ? "adaptive" : "full";
  spec::Spec spec = in.spec;
  spec.experiment.results_dir = dir;
  std::optional<adaptive::Session> session;
  if (adaptive) {
    session.emplace(in, calibration);
    ro.next_samples = [&session](const evidence::RunPaths& p) { return session->Next(p); };
  }
  PPS_ASSIGN_OR_RETURN(std::unique_ptr<run::SampleEngine> engine,
                       run::MakeReplayEngine(spec, in.plan, csv));
  PPS_ASSIGN_OR_RETURN(run::RunOutcome out,
                       run::RunSamples(ro, spec, in.plan, *engine, [](const run::RunProgress&) {}));
  // The run's report, as `ppsearch run` would leave it: a kept scenario is
  // a whole run directory to read.
  PPS_ASSIGN_OR_RETURN(report::ReportOutcome a, report::BuildReport(out.run_dir));
  Outcome r;
  if (a.decision.primary) r.primary = a.decision.primary->Label();
  if (a.decision.fallback) r.fallback = a.decision.fallback->Label();
  // The same accounting for both: what the run directory shows was spent.
  adaptive::ObserveOptions accounting;
  accounting.predict = false;
  PPS_ASSIGN_OR_RETURN(adaptive::Observation spent,
                       adaptive::Observe(in, calibration, out.run_dir, accounting));
  r.gpu_hours = spent.gpu_hours_spent;
  r.samples = spent.samples_spent;
  PPS_ASSIGN_OR_RETURN(evidence::Trajectory t,
                       evidence::ReadTrajectory(evidence::RunPaths{out.run_dir}));
  if (t.stop) r.stop_reason = t.stop->reason;
  return r;
}

}  // namespace

Result<Evaluation> Evaluate(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                            const ScenarioOptions& o) {
  const predict::SearchPrediction model =
      predict::PredictSearch(in, calibration, predict::SearchOptions::CentralOnly());
  Evaluation ev;
  workload::SplitMix64 rng(o.seed);
  for (int k = 1; k <= o.scenarios; ++k) {
    ScenarioResult s;
    s.index = k;
    std::vector<double> factor;
    for (const plan::LayoutPlan& lp : in.plan.layouts) {
      factor.push_back(1 + o.hidden * (2 * rng.NextUnit() - 1));
      s.hidden.emplace_back(lp.layout.Label(), factor.back());
    }
    const std::string dir = fmt::format("{}/scenario-{:02d}", o.work_dir, k);
    const std::string csv = dir + "/truth.csv";
    PPS_RETURN_IF_ERROR(
        WriteFileAtomic(csv, evidence::SummaryCsvText(TruthRows(in, model, factor, o.spread))));
    PPS_ASSIGN_OR_RETURN(Outcome full, Replay(in, calibration, o, csv, dir, false));
    PPS_ASSIGN_OR_RETURN(Outcome adaptive, Replay(in, calibration, o, csv, dir, true));
    s.full_primary = full.primary;
    s.full_fallback = full.fallback;
    s.adaptive_primary = adaptive.primary;
    s.adaptive_fallback = adaptive.fallback;
    s.agrees = full.primary == adaptive.primary && full.fallback == adaptive.fallback;
    s.full_gpu_hours = full.gpu_hours;
    s.adaptive_gpu_hours = adaptive.gpu_hours;
    s.full_samples = full.samples;
    s.adaptive_samples = adaptive.samples;
    s.stop_reason = adaptive.stop_reason;
    ev.agree += s.agrees ? 1 : 0;
    ev.results.push_back(std::move(s));
  }
  std::vector<double> fractions;
  for (const ScenarioResult& s : ev.results) fractions.push_back(s.fraction());
  if (!fractions.empty()) {
    ev.median_fraction = stats::Median(fractions);
    ev.worst_fraction = *std::max_element(fractions.begin(), fractions.end());
  }
  return ev;
}

}  // namespace ppsearch::adaptive_eval
