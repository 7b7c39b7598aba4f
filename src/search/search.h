#pragma once
// `ppsearch search`: every candidate of a space through the planner's checks
// (rejections counted by reason), the rest predicted at every load point,
// filtered by the decision's headroom rule, ranked by the decision's
// objective with intervals where they could change the ranking, and the
// Pareto front of throughput per GPU against TTFT (a decode workload's:
// output throughput per GPU against throughput per user). The decision's SLA
// limits filter on the predicted figures (decide::CheckSla on the simulated
// samples' p99s); a limit without a predicted figure is reported as checked
// only on measurement. Pure: the result depends only on the inputs, the
// calibration and the options.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "decide/sla.h"
#include "plan/plan.h"
#include "plan/search_inputs.h"
#include "search/space.h"
#include "uncertainty/ensemble.h"
#include "uncertainty/propagate.h"

namespace ppsearch::search {

struct SearchOptions {
  Bounds bounds;
  uncertainty::EnsembleOptions ensemble;  // members 0: central values only
  // The model-form term the intervals carry beside the parameters' band
  // (uncertainty::ModelFormFor); nullopt: the parameters' band alone.
  std::optional<cost::ModelFormScales> model_form;
  // Screening: a candidate gets its interval unless even an interval this
  // many times the widest one seen could not reach the best's lower bound.
  double screen_factor = 2.0;
  bool screen = true;  // false: an interval for every qualifying candidate
  int threads = 2;
  // A search estimated (EstimateSpace) past this many seconds is refused
  // before it starts; 0: no bound.
  double max_search_s = kDefaultMaxSearchSeconds;
  // Told the estimate once, then, as the work goes, the phase ("predicting",
  // "intervals"), how many of its candidates are done and of how many; empty:
  // nobody listens.
  std::function<void(const SpaceEstimate&)> on_estimate;
  std::function<void(const char* phase, size_t done, size_t total)> progress;
};

struct PointFigures {
  LoadPoint load;
  double input_tps = 0;
  double input_tps_per_gpu = 0;
  double ttft_p50_s = 0;
  double ttft_p95_s = 0;
  double peak_gpu_mib = 0;
  double bubble_share = 0;
  double exposed_comm_share = 0;
  double output_tps = 0;
  double output_tps_per_gpu = 0;
  double goodput_rps = 0;  // requests/s meeting every SLA limit, of the simulated sample
  // Decode: TPOT p50 and the throughput one user sees, 1 / TPOT p50 (the
  // report's definition); 0 when no request generated a second token.
  double tpot_p50_s = 0;
  double output_tps_per_user = 0;
  decide::SlaValues sla;  // the SLA figures predicted: p99s of the simulated sample
  std::optional<uncertainty::Interval> input_tps_interval, ttft_p50_interval;
  std::optional<uncertainty::Interval> output_tps_interval, tpot_p50_interval;
};

struct Evaluated {
  Candidate candidate;
  int gpus = 0;
  std::vector<PointFigures> points;  // one per load point, in order
  double headroom_mib = 0;           // worst over the load points
  bool meets_headroom = true;
  bool meets_sla = true;
  std::string sla_miss;  // the first miss: "C=16: TPOT p99 41.20 ms > tpot_p99_ms 40 ms (+3.00%)"
  // What the plan says of it: all-reduces per forward and how many cross nodes.
  int allreduce_per_forward = 0;
  int cross_node_allreduce_per_forward = 0;
  int alltoall_per_forward = 0;  // DeepEP dispatch + combine
  int cross_node_alltoall_per_forward = 0;
  int cross_node_stage_hops = 0;
  double score = 0;  // decide::RelativeScores over the qualifying candidates; 0: not ranked
  std::optional<uncertainty::Interval> score_interval;
  bool could_be_best = false;  // its interval reaches the best's
};

struct Rejection {
  Candidate candidate;
  std::string reason;   // plan::Diagnostic::reason, or "not_modelled"
  std::string message;  // the first error, as plan prints it
};

// A member of the front: throughput per GPU against TTFT p50 for a prefill
// workload, output throughput per GPU against throughput per user for a
// decode one (SearchResult::decode).
struct ParetoPoint {
  size_t evaluated = 0;  // index into SearchResult::evaluated
  LoadPoint load;
  double input_tps_per_gpu = 0;
  double ttft_p50_s = 0;
  double output_tps_per_gpu = 0;
  double output_tps_per_user = 0;
};

struct SearchResult {
  std::vector<LoadPoint> load_points;
  int candidates = 0;
  std::vector<Rejection> rejected;
  std::map<std::string, int> rejected_by_reason;
  // Ranked: qualifying candidates best first, then those that miss the
  // headroom rule or an SLA limit (score 0).
  std::vector<Evaluated> evaluated;
  int qualifying = 0;
  int with_intervals = 0;  // candidates whose intervals were drawn
  int could_be_best = 0;
  // Requests generate more than one token: the decode figures are shown and
  // the front is output throughput per GPU against throughput per user.
  bool decode = false;
  std::vector<ParetoPoint> pareto;  // by throughput per GPU, highest first
  std::string objective;            // the decision's
  double min_headroom_mib = 0;
  decide::SlaLimits sla;  // the decision's limits
  // Candidates that keep the headroom but miss an SLA limit, by the first
  // limit missed ("tpot_p99_ms"); and the limits no prediction had a figure
  // for, left to the measurement.
  std::map<std::string, int> sla_failed_by_key;
  std::vector<std::string> sla_unchecked;
};

// Searches the space of `bounds` around `inputs` (its spec's cluster,
// engine, workload and decision; its sweep is not used).
Result<SearchResult> Search(const plan::SearchInputs& inputs, const cost::Calibration& calibration,
                            const SearchOptions& options);

}  // namespace ppsearch::search
