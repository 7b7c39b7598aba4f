#pragma once
// `ppsearch search`: every candidate of a space through the planner's checks
// (aggregated layouts and, for a decode workload, disaggregated deployments:
// search/space.h EnumerateDisaggregated, each planned as `plan` plans a
// disaggregated spec and predicted as `simulate` predicts it)
// (rejections counted by reason), the rest predicted at every load point; a
// prediction in which no request completes, or without a figure an SLA
// limit or the objective needs, is refused as `no_prediction`. Each
// remaining candidate is judged at its best load point: the highest load at
// which every [decision] SLA limit holds on the predicted p99s (bisected
// between the listed points where that could change the ranking,
// search/best_load.h), filtered by the decision's headroom rule (a PP > 1
// candidate it leaves out is searched again with the layer split that would
// keep it, plan::RoomierPartition) and ranked
// by the decision's objective there, with intervals where they could
// change the ranking; and the Pareto front of every load point meeting the
// SLA: throughput per GPU against TTFT (a decode workload's: output
// throughput per GPU against throughput per user). Pure: the result depends
// only on the inputs, the calibration and the options.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "decide/objective.h"
#include "decide/sla.h"
#include "inputs/search_inputs.h"
#include "plan/plan.h"
#include "search/space.h"
#include "stats/point_figures.h"
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
  // "predicting with layer splits", "intervals"), how many of its candidates
  // are done and of how many; empty: nobody listens.
  std::function<void(const SpaceEstimate&)> on_estimate;
  std::function<void(const char* phase, size_t done, size_t total)> progress;
};

// A disaggregated candidate's point: where its TTFT went and how loaded
// each pool ran (predict::DisaggregatedPrediction).
struct PdShares {
  double transfer_share_of_ttft = 0;
  double prefill_busy = 0;  // the prefill pool's GPU time at work
  double decode_fill = 0;   // the decode pool's requests held / admitted at once
  std::string bottleneck;   // "prefill", "decode" or "neither"
};

// A load point's figures (stats::Figures: the client's, from the simulated
// sample) with what the search adds about it.
struct PointFigures : stats::Figures {
  LoadPoint load;
  bool probed = false;  // found by bisection between two listed load points
  int requests = 0;     // in the simulated sample (every instance's)
  int requests_completed = 0;
  double peak_gpu_mib = 0;
  double bubble_share = 0;
  double exposed_comm_share = 0;
  decide::SlaValues sla;  // the SLA figures predicted: p99s of the simulated sample
  // Every [decision] limit holds on them and, in an open loop, the layout
  // kept up with the offered rate (MeetsSlaAt).
  bool meets_sla = true;
  // Why the sample is short of its steady state (decide::NotSteady, or
  // NotSteadyOpen in an open loop); empty when it is steady.
  std::string not_steady;
  std::optional<uncertainty::Interval> input_tps_interval, ttft_p50_interval;
  std::optional<uncertainty::Interval> output_tps_interval, tpot_p50_interval;
  // What the score compares candidates by (uncertainty::PointUncertainty's
  // compared intervals): the model form's shared terms left out.
  std::optional<uncertainty::Interval> compared_input_tps, compared_ttft_p50;
  std::optional<uncertainty::Interval> compared_output_tps;
  std::optional<PdShares> pd;  // a disaggregated candidate's
};

// The SLA limit that binds next at a candidate's best load point: the one
// missed at the lowest load above it that misses one (`missed_at`), else
// the one closest to its limit there.
struct Binding {
  decide::SlaMetric metric = decide::SlaMetric::kTtft;
  double use = 0;  // the figure over the limit at the best load point: 0.96
  std::optional<LoadPoint> missed_at;
  // In an open loop: the lowest heavier load misses no limit but falls
  // behind its offered rate (`metric` and `use` then say nothing).
  bool keeping_up = false;
};

// The key an open loop's falling behind its offered rate is counted under
// beside the SLA limits' keys (SearchResult::sla_failed_by_key).
inline constexpr const char* kKeepingUpKey = "keeping_up";

struct Evaluated {
  Candidate candidate;
  int gpus = 0;
  std::vector<PointFigures> points;  // one per listed load point, in order
  std::vector<PointFigures> probed;  // the loads bisection predicted, in the order probed
  // The best load point: of the loads (listed and probed) at which every
  // SLA limit holds, the one with the best objective; for a throughput or
  // goodput objective the highest such load, refined by bisection. None
  // when no load meets the SLA.
  std::optional<PointFigures> at;
  std::optional<Binding> binds_next;  // with SLA limits set
  double headroom_mib = 0;            // worst over the load points
  bool meets_headroom = true;
  // A PP > 1 candidate the headroom rule leaves out whose layer split
  // (plan::RoomierPartition, with its knobs) would keep the rule: the split,
  // which the search predicts and ranks as a candidate of its own
  // (Candidate::layer_split), and that candidate's predicted headroom (the
  // planned estimate when its prediction was refused). Empty when no split
  // would keep the rule, or the split does not plan.
  std::vector<int> lifting_partition;
  double lifted_headroom_mib = 0;
  bool meets_sla = true;  // at some load point
  // The first miss at the lowest load point: "C=1: TPOT p99 41.20 ms >
  // tpot_p99_ms 40 ms (+3.00%)"; empty when a load meets the SLA.
  std::string sla_miss;
  // That first miss's limit's key (decide::Info), or kKeepingUpKey.
  std::string sla_missed_key;
  double sla_shortfall = 0;  // the fewest percent over a limit at any load point (0.03)
  // What the plan says of it: all-reduces per forward and how many cross nodes.
  int allreduce_per_forward = 0;
  int cross_node_allreduce_per_forward = 0;
  int alltoall_per_forward = 0;  // DeepEP dispatch + combine
  int cross_node_alltoall_per_forward = 0;
  int cross_node_stage_hops = 0;
  double score = 0;  // decide::RelativeScores over the qualifying candidates; 0: not ranked
  std::optional<uncertainty::Interval> score_interval;
  bool could_be_best = false;  // its interval reaches the best's
  // The share of its input TPS at its best load point that the hardware
  // profile's tensor burst gives (predict::TensorBurstShare); set for the
  // candidates that could be the best, on a profile with a burst.
  std::optional<double> tensor_burst_share;
};

struct Rejection {
  Candidate candidate;
  // plan::Diagnostic::reason, "not_modelled", or "no_prediction" (a
  // simulation in which no request completed, or without a figure an SLA
  // limit or the objective needs)
  std::string reason;
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
  int requests = 0;    // in each simulated sample
  int candidates = 0;  // in the space the bounds describe
  // Beside those, the candidates the search added with a layer split: a PP >
  // 1 candidate the headroom rule leaves out, again with the split that
  // would keep it (Evaluated::lifting_partition). `rejected` and `evaluated`
  // hold both kinds.
  int split_candidates = 0;
  std::vector<Rejection> rejected;
  std::map<std::string, int> rejected_by_reason;
  // Why no aggregated layout was searched when the bounds describe none
  // (a PP or instance count that does not divide the GPUs, an EP or DP
  // that does not divide TP) but disaggregated deployments were; empty
  // otherwise.
  std::string no_aggregated;
  // Ranked: qualifying candidates best first (by the objective at each one's
  // best load point), then those that miss the headroom rule or meet the
  // SLA at no load point (score 0).
  std::vector<Evaluated> evaluated;
  int qualifying = 0;
  int with_intervals = 0;  // candidates whose intervals were drawn
  int probes = 0;          // predictions bisection added, over every candidate
  int could_be_best = 0;
  // Requests generate more than one token: the decode figures are shown and
  // the front is output throughput per GPU against throughput per user.
  bool decode = false;
  std::vector<ParetoPoint> pareto;  // by throughput per GPU, highest first
  decide::Objective objective;      // the decision's
  double min_headroom_mib = 0;
  decide::SlaLimits sla;  // the decision's limits
  // Candidates that keep the headroom but meet the SLA at no load point, by
  // the first limit missed at the lowest ("tpot_p99_ms"); and the limits
  // the workload gives no figure for (TPOT of one-token answers), left to
  // the measurement.
  std::map<std::string, int> sla_failed_by_key;
  std::vector<std::string> sla_unchecked;
  std::string tensor_burst;  // hardware::HardwareProfile::TensorBurstText
};

// Searches the space of `bounds` around `inputs` (its spec's cluster,
// engine, workload and decision; its sweep is not used).
Result<SearchResult> Search(const inputs::SearchInputs& inputs,
                            const cost::Calibration& calibration, const SearchOptions& options);

}  // namespace ppsearch::search
