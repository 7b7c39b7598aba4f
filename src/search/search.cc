#include "search/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>

#include "decide/objective.h"
#include "decide/rules.h"
#include "decide/steady_state.h"
#include "inputs/search_inputs.h"
#include "plan/disaggregation.h"
#include "plan/partition.h"
#include "predict/disaggregated.h"
#include "predict/search_points.h"
#include "search/best_load.h"
#include "uncertainty/ensemble.h"
#include "util/parallel.h"

namespace ppsearch::search {
namespace {

// One knob setting's candidates at some of the load points, planned and
// predicted together: every closed-loop point in one group (the sweep's
// concurrencies), each request rate in a group of its own (a spec has one
// workload.request_rate).
struct Group {
  Knobs knobs;
  std::vector<LoadPoint> loads;
  inputs::SearchInputs inputs;
  // The layer split the search set in the group's spec for its one layout
  // (Candidate::layer_split); empty: the spec's.
  std::vector<int> layer_split;
};

// The spec a group runs: the search's, with its layouts and load points as
// the sweep (and the workload's request rate). The knobs are not in it: the
// group's plan carries them (plan::PlanSearch's knobs).
spec::Spec SpecFor(const spec::Spec& base, const Group& g,
                   const std::vector<spec::LayoutSpec>& layouts) {
  spec::Spec s = base;
  s.sweep.layouts = layouts;
  s.sweep.concurrency.clear();
  for (const LoadPoint& l : g.loads) s.sweep.concurrency.push_back(l.concurrency);
  s.workload.request_rate = g.loads.front().request_rate;
  return s;
}

// The groups of `knobs`: one per request rate, or one for every closed-loop point.
std::vector<Group> GroupsOf(const Knobs& knobs, const std::vector<LoadPoint>& loads) {
  if (loads.empty() || !loads.front().open()) return {{knobs, loads, {}, {}}};
  std::vector<Group> out;
  for (const LoadPoint& l : loads) out.push_back({knobs, {l}, {}, {}});
  return out;
}

// The load point of a group's prediction.
const LoadPoint* LoadOf(const Group& g, int concurrency) {
  for (const LoadPoint& l : g.loads)
    if (l.concurrency == concurrency) return &l;
  return nullptr;
}

// Only an ITL limit reads the inter-token latencies; without one the
// simulator keeps no per-token times (a chat point has hundreds of thousands).
bool NeedsTokenTimes(const spec::Spec& spec) {
  return spec.decision.sla[decide::SlaMetric::kItl].has_value();
}

// The predicted SLA figures of a simulated sample: its p99s, TPOT and ITL
// only when a request generated a second token.
decide::SlaValues PredictedSla(const stats::SampleMetrics& m) {
  decide::SlaValues v;
  if (m.requests_completed == 0) return v;
  v[decide::SlaMetric::kTtft] = m.ttft_s.p99;
  v[decide::SlaMetric::kE2e] = m.e2e_s.p99;
  if (m.tpot_requests > 0) v[decide::SlaMetric::kTpot] = m.tpot_s.p99;
  if (m.itl_values > 0) v[decide::SlaMetric::kItl] = m.itl_s.p99;
  return v;
}

// A load point's figures from a simulated sample's metrics.
PointFigures FiguresOf(const stats::SampleMetrics& m, const LoadPoint& load, int gpus) {
  PointFigures f;
  static_cast<stats::Figures&>(f) = stats::FiguresOf(m, gpus);
  f.load = load;
  f.requests = m.requests_total;
  f.requests_completed = m.requests_completed;
  f.sla = PredictedSla(m);
  f.not_steady = load.open() ? decide::NotSteadyOpen(load.request_rate, load.concurrency,
                                                     f.requests, f.e2e_p50_s)
                             : decide::NotSteady(load.concurrency, f.requests);
  return f;
}

PointFigures FiguresOf(const predict::PointPrediction& p, const LoadPoint& load, int gpus) {
  PointFigures f = FiguresOf(p.metrics, load, gpus);
  f.peak_gpu_mib = p.memory.peak_mib_max;
  f.bubble_share = p.bubble_share;
  f.exposed_comm_share = p.exposed_comm_share;
  return f;
}

// A disaggregated candidate's point: the client's figures, the fuller of
// the two pools' GPUs as the peak.
PointFigures FiguresOf(const predict::DisaggregatedPrediction& p, const LoadPoint& load, int gpus) {
  PointFigures f = FiguresOf(p.metrics, load, gpus);
  f.peak_gpu_mib = std::max(p.prefill.memory.peak_mib_max, p.decode.memory.peak_mib_max);
  f.pd =
      PdShares{p.transfer_share_of_ttft, p.prefill.busy_share, p.decode.batch_fill, p.bottleneck};
  return f;
}

// A disaggregated candidate's deployment on the search's cluster: the
// prefill servers on the first hosts, the decode servers on the others,
// the transfer and the router at SGLang's defaults.
spec::Disaggregation DeploymentOf(const PdPools& pd) {
  spec::Disaggregation d;
  d.prefill.role = "prefill";
  d.prefill.layout = pd.prefill;
  d.prefill.origin.file = "search";
  for (int h = 0; h < pd.prefill_nodes; ++h) d.prefill.hosts.push_back(h);
  d.decode.role = "decode";
  d.decode.layout = pd.decode;
  d.decode.origin.file = "search";
  for (int h = 0; h < pd.decode_nodes; ++h) d.decode.hosts.push_back(pd.prefill_nodes + h);
  return d;
}

// A disaggregated candidate predicted at `load`.
predict::DisaggregatedPrediction PredictPdAt(const plan::DisaggregatedPlan& plan,
                                             const inputs::SearchInputs& in, const LoadPoint& load,
                                             const cost::Calibration& calibration) {
  spec::Spec s = in.spec;
  s.workload.request_rate = load.request_rate;
  predict::PointOptions o;
  o.concurrency = load.concurrency;
  o.seed = s.workload.seed;
  o.token_times = NeedsTokenTimes(s);
  return predict::PredictDisaggregated(plan, s, in.model, in.hardware, calibration, o);
}

// The limits no point of the workload can give a figure for (TPOT and ITL of
// one-token answers), left to the measurement.
std::vector<std::string> UncheckedLimits(const decide::SlaLimits& limits, bool decode) {
  std::vector<std::string> out;
  for (decide::SlaMetric m : decide::kSlaMetrics)
    if (limits[m] && decide::Info(m).decode && !decode) out.push_back(decide::Info(m).key);
  return out;
}

// The interval of a point's objective figure, in the objective's unit.
std::optional<uncertainty::Interval> ObjectiveInterval(const PointFigures& p,
                                                       const decide::Objective& objective,
                                                       int gpus) {
  std::optional<uncertainty::Interval> per_gpu;
  if (p.compared_output_tps && gpus > 0)
    per_gpu = uncertainty::Interval{p.compared_output_tps->low / gpus,
                                    p.compared_output_tps->high / gpus};
  return objective.Of(decide::ObjectiveFields<std::optional<uncertainty::Interval>>{
      p.compared_input_tps, p.compared_ttft_p50, p.compared_output_tps, per_gpu, std::nullopt});
}

// The candidate's score over its best load point's compared interval (the
// model form's terms every candidate shares left out: they cancel against
// the best), against the central best value.
uncertainty::Interval ScoreInterval(const Evaluated& e, double best,
                                    const decide::Objective& objective) {
  const std::optional<uncertainty::Interval> iv =
      e.at ? ObjectiveInterval(*e.at, objective, e.gpus) : std::nullopt;
  if (!iv || !(iv->low > 0) || !(best > 0)) return {e.score, e.score};
  // Lower TTFT is better: the score's low end comes from the high TTFT.
  if (objective.lower_is_better()) return {best / iv->high, best / iv->low};
  return {iv->low / best, iv->high / best};
}

// One candidate's layout alone in `group`'s inputs, at one load point.
inputs::SearchInputs OneLayoutAt(const Group& group, const Candidate& c, const LoadPoint& load) {
  inputs::SearchInputs one;
  one.spec = group.inputs.spec;
  one.model = group.inputs.model;
  one.hardware = group.inputs.hardware;
  // Not the group's other layouts: copying them was most of the cost of
  // an interval's set-up.
  one.plan = group.inputs.plan.Only(c.layout);
  one.spec.sweep.layouts = {c.layout};
  one.spec.sweep.concurrency = {load.concurrency};
  one.spec.workload.request_rate = load.request_rate;
  return one;
}

predict::SearchOptions IntervalOptions(const SearchOptions& options, const spec::Spec& spec) {
  predict::SearchOptions so;
  so.ensemble = options.ensemble;
  so.threads = options.threads;
  so.model_form = options.model_form;
  so.token_times = NeedsTokenTimes(spec);
  return so;
}

// The intervals a point's figures carry, from either predictor.
struct PointIntervals {
  uncertainty::Interval input_tps, ttft_p50, output_tps, tpot_p50;
  uncertainty::Interval compared_input_tps, compared_ttft_p50, compared_output_tps;
};

void SetIntervals(PointFigures& f, const PointIntervals& u) {
  f.input_tps_interval = u.input_tps;
  f.ttft_p50_interval = u.ttft_p50;
  f.compared_input_tps = u.compared_input_tps;
  f.compared_ttft_p50 = u.compared_ttft_p50;
  if (f.output_tps > 0) f.output_tps_interval = u.output_tps;
  if (f.output_tps > 0) f.compared_output_tps = u.compared_output_tps;
  if (f.tpot_p50_s > 0) f.tpot_p50_interval = u.tpot_p50;
}

// Sets the best load point's intervals, and its listed copy's.
void SetIntervalsAt(Evaluated& e, const PointIntervals& u) {
  SetIntervals(*e.at, u);
  for (PointFigures& f : e.points)
    if (f.load == e.at->load) SetIntervals(f, u);
}

// The intervals of a candidate's best load point, drawn through the one
// predictor: the only point its score reads. Nullopt when none is drawn.
// `drawn`: the ensemble, drawn once for every candidate.
std::optional<PointIntervals> IntervalsAt(const Group& group, const Evaluated& e,
                                          const cost::Calibration& calibration,
                                          const SearchOptions& options,
                                          const uncertainty::Ensemble& drawn) {
  predict::SearchOptions so = IntervalOptions(options, group.inputs.spec);
  so.drawn = &drawn;
  const predict::SearchPrediction p =
      predict::PredictSearch(OneLayoutAt(group, e.candidate, e.at->load), calibration, so);
  if (p.intervals.empty()) return std::nullopt;
  const uncertainty::PointUncertainty& u = p.intervals.front();
  return PointIntervals{u.input_tps,          u.ttft_p50_s,         u.output_tps,
                        u.tpot_p50_s,         u.compared_input_tps, u.compared_ttft_p50_s,
                        u.compared_output_tps};
}

// A disaggregated candidate's intervals at its best load point: the model
// form's alone (predict::ModelFormIntervals; no parameter ensemble is drawn
// through two pools), none without a model-form term.
std::optional<PointIntervals> PdIntervalsAt(const plan::DisaggregatedPlan& plan,
                                            const inputs::SearchInputs& in, const Evaluated& e,
                                            const cost::Calibration& calibration,
                                            const SearchOptions& options) {
  if (!options.model_form) return std::nullopt;
  const predict::DisaggregatedPrediction p = PredictPdAt(plan, in, e.at->load, calibration);
  const predict::DisaggregatedIntervals v =
      predict::ModelFormIntervals(p, plan, in.spec, in.hardware, calibration, *options.model_form);
  return PointIntervals{v.input_tps,          v.ttft_p50_s,         v.output_tps,
                        v.tpot_p50_s,         v.compared_input_tps, v.compared_ttft_p50_s,
                        v.compared_output_tps};
}

// The layout's plan in a group's inputs.
const plan::LayoutPlan* PlanOf(const Group& group, const Candidate& c) {
  for (const plan::LayoutPlan& lp : group.inputs.plan.layouts)
    if (lp.layout == c.layout) return &lp;
  return nullptr;
}

// Predicts a candidate at a load no group lists (a bisection's probe).
PointFigures ProbeAt(const Group& group, const Evaluated& e, const LoadPoint& load,
                     const cost::Calibration& calibration) {
  predict::PointRequest request;
  request.concurrency = load.concurrency;
  request.token_times = NeedsTokenTimes(group.inputs.spec);
  if (!load.open())
    return FiguresOf(predict::PredictSearchPoint(group.inputs, *PlanOf(group, e.candidate),
                                                 calibration, request),
                     load, e.gpus);
  const inputs::SearchInputs one = OneLayoutAt(group, e.candidate, load);
  return FiguresOf(predict::PredictSearchPoint(one, one.plan.layouts.front(), calibration, request),
                   load, e.gpus);
}

// How much of a candidate's input TPS (TTFT p50 in an open loop) at its
// best load point the tensor burst gives, predicted as ProbeAt predicts a
// point.
double BurstShareAt(const Group& group, const Evaluated& e, const cost::Calibration& calibration) {
  const LoadPoint& load = e.at->load;
  predict::PointRequest request;
  request.concurrency = load.concurrency;
  request.token_times = NeedsTokenTimes(group.inputs.spec);
  if (!load.open())
    return predict::TensorBurstShare(group.inputs, *PlanOf(group, e.candidate), calibration,
                                     request, *e.at);
  const inputs::SearchInputs one = OneLayoutAt(group, e.candidate, load);
  return predict::TensorBurstShare(one, one.plan.layouts.front(), calibration, request, *e.at);
}

// The front of every point meeting the SLA of every qualifying candidate,
// listed or probed: throughput per GPU against TTFT, or for decode output
// throughput per GPU against throughput per user (both more is better: the
// rule's (more, less) pairs with per user negated).
std::vector<ParetoPoint> Front(const SearchResult& out) {
  std::vector<std::pair<double, double>> xy;
  std::vector<std::pair<size_t, const PointFigures*>> which;
  for (size_t k = 0; k < static_cast<size_t>(out.qualifying); ++k)
    for (const std::vector<PointFigures>* list :
         {&out.evaluated[k].points, &out.evaluated[k].probed})
      for (const PointFigures& f : *list) {
        if (!MeetsSlaAt(out.sla, f)) continue;
        if (out.decode) {
          if (!(f.output_tps > 0) || !(f.output_tps_per_user > 0)) continue;
          xy.push_back({f.output_tps_per_gpu, -f.output_tps_per_user});
        } else {
          if (!(f.input_tps > 0) || !(f.ttft_p50_s > 0)) continue;
          xy.push_back({f.input_tps_per_gpu, f.ttft_p50_s});
        }
        which.push_back({k, &f});
      }
  const std::vector<bool> optimal = decide::ParetoOptimal(xy);
  std::vector<ParetoPoint> front;
  for (size_t i = 0; i < xy.size(); ++i) {
    if (!optimal[i]) continue;
    const PointFigures& f = *which[i].second;
    front.push_back({which[i].first, f.load, f.input_tps_per_gpu, f.ttft_p50_s,
                     f.output_tps_per_gpu, f.output_tps_per_user});
  }
  const bool decode = out.decode;
  std::stable_sort(front.begin(), front.end(),
                   [decode](const ParetoPoint& a, const ParetoPoint& b) {
                     return decode ? a.output_tps_per_gpu > b.output_tps_per_gpu
                                   : a.input_tps_per_gpu > b.input_tps_per_gpu;
                   });
  return front;
}

// What the stages of a search share besides its result. Candidate i of
// `predicted` (predicted, not yet moved to the result's `evaluated`) was
// predicted in the groups predicted_groups[i] (none for a disaggregated
// one) and, disaggregated, has the plan pd_plans[predicted_pd[i]] (-1
// otherwise); groups_of and pd_of say the same of `evaluated`.
struct Work {
  std::vector<Group> groups;
  std::vector<size_t> setting_of;             // each group's knob setting
  std::vector<size_t> candidates_of_setting;  // for progress
  std::vector<Evaluated> predicted;
  std::vector<std::vector<size_t>> predicted_groups;
  std::vector<int> predicted_pd;
  std::vector<std::vector<size_t>> groups_of;
  std::vector<int> pd_of;
  std::vector<plan::DisaggregatedPlan> pd_plans;
};

using Progress = std::function<void(const char*, size_t, size_t)>;

// Stage 1: the aggregated candidates by knob setting, in enumeration order,
// each setting's groups planned with its knobs, and the planner's refusals
// (once per candidate, not per request rate).
void PlanGroups(const inputs::SearchInputs& in, const std::vector<Candidate>& candidates,
                SearchResult& out, Work& w) {
  std::vector<Knobs> settings;
  std::vector<std::vector<spec::LayoutSpec>> layouts_of;
  for (const Candidate& c : candidates) {
    auto it = std::find(settings.begin(), settings.end(), c.knobs);
    if (it == settings.end()) {
      settings.push_back(c.knobs);
      layouts_of.emplace_back();
      it = settings.end() - 1;
    }
    layouts_of[static_cast<size_t>(it - settings.begin())].push_back(c.layout);
  }
  for (size_t si = 0; si < settings.size(); ++si) {
    w.candidates_of_setting.push_back(layouts_of[si].size());
    bool first_of_setting = true;
    for (Group g : GroupsOf(settings[si], out.load_points)) {
      g.inputs.spec = SpecFor(in.spec, g, layouts_of[si]);
      g.inputs.model = in.model;
      g.inputs.hardware = in.hardware;
      g.inputs.plan = plan::PlanSearch(g.inputs.spec, g.inputs.model, g.inputs.hardware, g.knobs);
      if (first_of_setting) {
        for (const plan::LayoutPlan& lp : g.inputs.plan.layouts) {
          const Candidate c{lp.layout, g.knobs, std::nullopt, {}};
          if (!lp.valid) {
            const plan::Diagnostic& first = lp.errors.front();
            out.rejected.push_back({c, first.reason, first.message});
          } else if (auto why = predict::NotModelled(lp)) {
            out.rejected.push_back({c, "not_modelled", *why});
          }
        }
      }
      first_of_setting = false;
      w.groups.push_back(std::move(g));
      w.setting_of.push_back(si);
    }
  }
}

// Stage 2: the central predictions of every group from `first_group` on,
// spread over the threads a point each (a group holds every layout of a
// knob setting: a thread per group left one thread alone with the last),
// each written to its own slot, in the order PredictSearch lists them: the
// same result on any number of threads. Each aggregated candidate's load
// points are gathered from its groups. Only a point's figures are kept, not
// its per-request record. `candidates`: how many the groups hold, for
// progress, under `phase`.
void PredictAggregated(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                       const SearchOptions& options, size_t first_group, size_t candidates,
                       const char* phase, const Progress& progress, Work& w) {
  struct CentralPoint {
    size_t group = 0;
    const plan::LayoutPlan* plan = nullptr;
    const LoadPoint* load = nullptr;
    PointFigures figures;
  };
  std::vector<CentralPoint> central;
  std::vector<size_t> points_left(w.candidates_of_setting.size(), 0);
  for (size_t gi = first_group; gi < w.groups.size(); ++gi)
    for (const predict::PlannedPoint& pp : predict::SearchPointsOf(w.groups[gi].inputs)) {
      central.push_back({gi, pp.plan, LoadOf(w.groups[gi], pp.concurrency), {}});
      ++points_left[w.setting_of[gi]];
    }
  size_t settings_predicted = 0;  // candidates, for progress; a setting with no point at once
  const size_t first_setting =
      first_group < w.groups.size() ? w.setting_of[first_group] : points_left.size();
  for (size_t si = first_setting; si < points_left.size(); ++si)
    if (points_left[si] == 0) settings_predicted += w.candidates_of_setting[si];
  ParallelFor(
      central.size(), options.threads,
      [&](size_t k) {
        CentralPoint& cp = central[k];
        const Group& group = w.groups[cp.group];
        predict::PointRequest request;
        request.concurrency = cp.load->concurrency;
        request.token_times = NeedsTokenTimes(group.inputs.spec);
        cp.figures =
            FiguresOf(predict::PredictSearchPoint(group.inputs, *cp.plan, calibration, request),
                      *cp.load, static_cast<int>(cp.plan->layout.gpus()));
      },
      [&](size_t k, size_t) {
        const size_t si = w.setting_of[central[k].group];
        if (--points_left[si] > 0) return;
        settings_predicted += w.candidates_of_setting[si];
        progress(phase, settings_predicted, candidates);
      });
  if (central.empty()) progress(phase, settings_predicted, candidates);

  std::map<std::string, size_t> predicted_of;  // candidate label -> index
  for (CentralPoint& cp : central) {
    const size_t gi = cp.group;
    const Candidate c{cp.plan->layout, w.groups[gi].knobs, std::nullopt, w.groups[gi].layer_split};
    auto [it, added] = predicted_of.emplace(c.Label(), w.predicted.size());
    if (added) {
      Evaluated e;
      e.candidate = c;
      e.gpus = static_cast<int>(cp.plan->layout.gpus());
      e.allreduce_per_forward = cp.plan->allreduce_per_forward;
      e.cross_node_allreduce_per_forward = cp.plan->cross_node_allreduce_per_forward;
      e.alltoall_per_forward = cp.plan->alltoall_per_forward;
      e.cross_node_alltoall_per_forward = cp.plan->cross_node_alltoall_per_forward;
      e.cross_node_stage_hops = cp.plan->cross_node_stage_boundaries;
      e.headroom_mib = INFINITY;
      w.predicted.push_back(std::move(e));
      w.predicted_groups.emplace_back();
      w.predicted_pd.push_back(-1);
    }
    std::vector<size_t>& mine = w.predicted_groups[it->second];
    if (mine.empty() || mine.back() != gi) mine.push_back(gi);
    Evaluated& e = w.predicted[it->second];
    e.points.push_back(std::move(cp.figures));
    e.headroom_mib = std::min(
        e.headroom_mib, decide::HeadroomMib(in.hardware.memory_mib, e.points.back().peak_gpu_mib));
  }
}

// Stage 3: the disaggregated candidates, each planned as `plan` plans a
// disaggregated spec (refused as it refuses one) and predicted at every load
// point as `simulate` predicts it.
void PredictDisaggregatedCandidates(const inputs::SearchInputs& in,
                                    const cost::Calibration& calibration,
                                    const SearchOptions& options, SearchResult& out, Work& w) {
  std::vector<Candidate> kept;
  const size_t first_plan = w.pd_plans.size();
  for (const Candidate& c : EnumerateDisaggregated(options.bounds, in.spec, in.model)) {
    ++out.candidates;
    plan::DisaggregatedPlan dp =
        plan::PlanDisaggregated(in.spec, DeploymentOf(*c.pd), in.model, in.hardware);
    const std::vector<plan::Diagnostic> errors = dp.AllErrors();
    if (!errors.empty()) {
      out.rejected.push_back({c, errors.front().reason, errors.front().message});
      continue;
    }
    if (auto why = predict::DisaggregatedNotModelled(dp)) {
      out.rejected.push_back({c, "not_modelled", c.Label() + ": " + *why});
      continue;
    }
    kept.push_back(c);
    w.pd_plans.push_back(std::move(dp));
  }
  const size_t loads = out.load_points.size();
  std::vector<PointFigures> figures(kept.size() * loads);
  ParallelFor(figures.size(), options.threads, [&](size_t k) {
    const size_t ci = k / loads;
    const LoadPoint& load = out.load_points[k % loads];
    figures[k] = FiguresOf(PredictPdAt(w.pd_plans[first_plan + ci], in, load, calibration), load,
                           static_cast<int>(kept[ci].gpus()));
  });
  for (size_t ci = 0; ci < kept.size(); ++ci) {
    Evaluated e;
    e.candidate = kept[ci];
    e.gpus = static_cast<int>(kept[ci].gpus());
    e.headroom_mib = INFINITY;
    for (size_t l = 0; l < loads; ++l) {
      e.points.push_back(std::move(figures[ci * loads + l]));
      e.headroom_mib = std::min(e.headroom_mib, decide::HeadroomMib(in.hardware.memory_mib,
                                                                    e.points.back().peak_gpu_mib));
    }
    w.predicted.push_back(std::move(e));
    w.predicted_groups.emplace_back();
    w.predicted_pd.push_back(static_cast<int>(first_plan + ci));
  }
}

// Stage 4: a prediction that is no result refuses its candidate, which is
// never ranked; the others join the result's evaluated candidates.
void RefuseNoPredictions(SearchResult& out, Work& w) {
  for (size_t i = 0; i < w.predicted.size(); ++i) {
    std::string why;
    for (const PointFigures& f : w.predicted[i].points)
      if (why.empty()) why = NoPredictionReason(f, out.sla, out.objective, out.decode);
    if (!why.empty()) {
      out.rejected.push_back({w.predicted[i].candidate, "no_prediction",
                              w.predicted[i].candidate.Label() + ": " + why});
      continue;
    }
    out.evaluated.push_back(std::move(w.predicted[i]));
    w.groups_of.push_back(std::move(w.predicted_groups[i]));
    w.pd_of.push_back(w.predicted_pd[i]);
  }
  w.predicted.clear();
  w.predicted_groups.clear();
  w.predicted_pd.clear();
}

// Whether each evaluated candidate keeps the decision's headroom at every
// load point. Without the GPU's size there is no headroom to judge.
void JudgeHeadroom(const inputs::SearchInputs& in, SearchResult& out) {
  for (Evaluated& e : out.evaluated)
    e.meets_headroom =
        in.hardware.memory_mib <= 0 || decide::MeetsHeadroom(e.headroom_mib, out.min_headroom_mib);
}

// Predicts evaluated candidate i at `load`, through the predictor that
// predicted its listed points.
PointFigures PredictAt(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                       const SearchResult& out, const Work& w, size_t i, const LoadPoint& load) {
  if (w.pd_of[i] >= 0)
    return FiguresOf(
        PredictPdAt(w.pd_plans[static_cast<size_t>(w.pd_of[i])], in, load, calibration), load,
        out.evaluated[i].gpus);
  return ProbeAt(w.groups[w.groups_of[i].front()], out.evaluated[i], load, calibration);
}

// The layer split that would let a PP > 1 candidate the headroom rule
// leaves out keep it, with the headroom it would keep; nullopt when none
// would. The split moves memory between stages as planned; the prediction's
// peaks differ from the plan's by what every stage holds alike (the
// calibration's workspace), so the gain carries over to the predicted headroom.
std::optional<std::pair<std::vector<int>, double>> LiftingPartition(const Group& group,
                                                                    double min_headroom_mib,
                                                                    const Evaluated& e) {
  const spec::LayoutSpec& layout = e.candidate.layout;
  if (layout.pp <= 1) return std::nullopt;
  const std::optional<plan::RoomierSplit> split = plan::RoomierPartition(
      layout, group.inputs.spec, group.inputs.model, group.inputs.hardware, group.knobs);
  if (!split) return std::nullopt;
  const double lifted =
      e.headroom_mib + (split->worst_headroom_mib - split->even_worst_headroom_mib);
  if (!decide::MeetsHeadroom(lifted, min_headroom_mib)) return std::nullopt;
  return std::pair{split->partition, lifted};
}

// Stage 5: each PP > 1 candidate the headroom rule leaves out, where a
// layer split would keep the rule, again with that split: planned with it
// as the spec's [engine.pp_layer_partition] entry, predicted at every load
// point in groups of its own (a spec holds one split per pipeline size, and
// candidates of one size with other TP or EP want other splits), and from
// then on judged and ranked as every other candidate. A split that does not
// plan (the even one did) is not added.
void AddSplitCandidates(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                        const SearchOptions& options, const Progress& progress, SearchResult& out,
                        Work& w) {
  const size_t first_group = w.groups.size();
  const size_t evaluated = out.evaluated.size();
  std::vector<std::pair<size_t, std::string>> twins;  // the even candidate, the split's label
  for (size_t i = 0; i < evaluated; ++i) {
    Evaluated& e = out.evaluated[i];
    if (e.meets_headroom || e.candidate.pd) continue;
    const auto lifting =
        LiftingPartition(w.groups[w.groups_of[i].front()], out.min_headroom_mib, e);
    if (!lifting) continue;
    const std::vector<int>& split = lifting->first;
    std::vector<Group> mine;
    for (size_t gi : w.groups_of[i]) {
      Group g{w.groups[gi].knobs, w.groups[gi].loads, {}, split};
      g.inputs.spec = plan::WithPartition(SpecFor(in.spec, g, {e.candidate.layout}), split);
      g.inputs.model = in.model;
      g.inputs.hardware = in.hardware;
      g.inputs.plan = plan::PlanSearch(g.inputs.spec, g.inputs.model, g.inputs.hardware, g.knobs);
      const plan::LayoutPlan& lp = g.inputs.plan.layouts.front();
      if (!lp.valid || predict::NotModelled(lp)) break;
      mine.push_back(std::move(g));
    }
    if (mine.size() != w.groups_of[i].size()) continue;
    // Named even if the prediction refuses it; the predicted headroom
    // replaces the planned one below.
    e.lifting_partition = split;
    e.lifted_headroom_mib = lifting->second;
    w.candidates_of_setting.push_back(1);
    for (Group& g : mine) {
      w.groups.push_back(std::move(g));
      w.setting_of.push_back(w.candidates_of_setting.size() - 1);
    }
    Candidate twin = e.candidate;
    twin.layer_split = split;
    twins.emplace_back(i, twin.Label());
  }
  if (twins.empty()) return;
  out.split_candidates = static_cast<int>(twins.size());
  PredictAggregated(in, calibration, options, first_group, twins.size(),
                    "predicting with layer splits", progress, w);
  RefuseNoPredictions(out, w);
  JudgeHeadroom(in, out);
  for (const auto& [i, label] : twins)
    for (size_t k = evaluated; k < out.evaluated.size(); ++k)
      if (out.evaluated[k].candidate.Label() == label)
        out.evaluated[i].lifted_headroom_mib = out.evaluated[k].headroom_mib;
}

// Stage 6: each candidate's best load point under the SLA, and the ranking
// of those that qualify by the objective there; the indices of
// out.evaluated, best first.
std::vector<size_t> RankAtBestLoads(const inputs::SearchInputs& in,
                                    const cost::Calibration& calibration,
                                    const SearchOptions& options, SearchResult& out,
                                    const Work& w) {
  out.probes = FindBestLoads(
      out.evaluated, out.sla, out.objective, options.screen,
      [&](size_t i, const LoadPoint& load) { return PredictAt(in, calibration, out, w, i, load); });
  std::vector<size_t> qualifying;
  for (size_t i = 0; i < out.evaluated.size(); ++i) {
    const Evaluated& e = out.evaluated[i];
    if (e.meets_headroom && !e.sla_missed_key.empty()) ++out.sla_failed_by_key[e.sla_missed_key];
    if (e.meets_headroom && e.meets_sla) qualifying.push_back(i);
  }
  std::vector<std::vector<double>> values;
  for (size_t i : qualifying) values.push_back({ObjectiveAt(*out.evaluated[i].at, out.objective)});
  const std::vector<double> scores =
      decide::RelativeScores(values, out.objective.lower_is_better());
  for (size_t k = 0; k < qualifying.size(); ++k) out.evaluated[qualifying[k]].score = scores[k];
  std::vector<size_t> ranked = qualifying;
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return out.evaluated[a].score > out.evaluated[b].score;
  });
  out.qualifying = static_cast<int>(ranked.size());
  return ranked;
}

// Stage 7: which ranked candidates could be the best. With intervals: drawn
// best first, until no interval as wide as the widest seen (times the
// screen factor) could reach the best's lower end. Without: ties at the
// best score. The intervals are drawn on the threads a candidate each, in
// rank order, and judged in rank order as they arrive: the same candidates
// get them on any number of threads, and past the one the rule stops at
// only those already begun are drawn.
void MarkCouldBeBest(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                     const SearchOptions& options, const std::vector<size_t>& ranked,
                     const Progress& progress, SearchResult& out, const Work& w) {
  if (ranked.empty()) return;
  // The central best value, what every score is relative to.
  const double best = ObjectiveAt(*out.evaluated[ranked.front()].at, out.objective);
  if (options.ensemble.members > 0 && out.objective.has_interval()) {
    SearchOptions one_thread = options;
    one_thread.threads = 1;
    const uncertainty::Ensemble ensemble =
        uncertainty::DrawEnsemble(calibration, in.hardware, options.ensemble);
    std::vector<std::optional<PointIntervals>> drawn(ranked.size());
    std::vector<char> arrived(ranked.size(), 0);
    std::atomic<bool> stopped{false};
    size_t judged = 0;  // ranked candidates judged so far, in order
    double best_low = 0, widest = 0;
    // Whether the rule draws the next candidate's interval at all.
    auto drawn_next = [&](const Evaluated& e) {
      return !options.screen || out.with_intervals == 0 ||
             !(e.score * (1 + options.screen_factor * widest) < best_low);
    };
    ParallelFor(
        ranked.size(), options.threads,
        [&](size_t k) {
          if (stopped.load()) return;
          const size_t i = ranked[k];
          const Evaluated& e = out.evaluated[i];
          drawn[k] = w.pd_of[i] >= 0 ? PdIntervalsAt(w.pd_plans[static_cast<size_t>(w.pd_of[i])],
                                                     in, e, calibration, one_thread)
                                     : IntervalsAt(w.groups[w.groups_of[i].front()], e, calibration,
                                                   one_thread, ensemble);
        },
        [&](size_t k, size_t) {
          arrived[k] = 1;
          for (; !stopped.load() && judged < ranked.size() && arrived[judged]; ++judged) {
            Evaluated& e = out.evaluated[ranked[judged]];
            if (!drawn_next(e)) {
              stopped.store(true);
              break;
            }
            if (drawn[judged]) SetIntervalsAt(e, *drawn[judged]);
            e.score_interval = ScoreInterval(e, best, out.objective);
            ++out.with_intervals;
            progress("intervals", static_cast<size_t>(out.with_intervals), ranked.size());
            if (out.with_intervals == 1) best_low = e.score_interval->low;
            if (e.score > 0) widest = std::max(widest, e.score_interval->high / e.score - 1);
          }
        });
    for (size_t i : ranked) {
      Evaluated& e = out.evaluated[i];
      e.could_be_best = e.score_interval && e.score_interval->high >= best_low;
    }
  } else {
    const double top = out.evaluated[ranked.front()].score;
    for (size_t i : ranked) out.evaluated[i].could_be_best = out.evaluated[i].score == top;
  }
}

// Stage 8: how far the candidates that could be best lean on the hardware's
// tensor burst (one prediction more each).
void AddBurstShares(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                    const std::vector<size_t>& ranked, SearchResult& out, const Work& w) {
  out.tensor_burst = in.hardware.TensorBurstText();
  if (out.tensor_burst.empty()) return;
  for (size_t i : ranked) {
    Evaluated& e = out.evaluated[i];
    if (e.could_be_best && e.at && w.pd_of[i] < 0)
      e.tensor_burst_share = BurstShareAt(w.groups[w.groups_of[i].front()], e, calibration);
  }
}

}  // namespace

Result<SearchResult> Search(const inputs::SearchInputs& in, const cost::Calibration& calibration,
                            const SearchOptions& options) {
  PPS_RETURN_IF_ERROR(CheckBounds(options.bounds));
  const plan::EngineConfig engine =
      plan::ResolveEngineConfig(in.spec.engine, in.hardware.memory_mib);
  const SpaceEstimate estimate = EstimateSpace(options.bounds, in.spec, in.model, engine,
                                               options.threads, options.ensemble.members);
  PPS_RETURN_IF_ERROR(CheckSpaceEstimate(estimate, options.max_search_s));
  if (options.on_estimate) options.on_estimate(estimate);
  const Progress progress = [&](const char* phase, size_t done, size_t total) {
    if (options.progress) options.progress(phase, done, total);
  };
  SearchResult out;
  out.load_points = LoadPoints(options.bounds);
  out.requests = in.spec.workload.requests;
  out.objective = in.spec.decision.objective;
  out.min_headroom_mib = in.spec.decision.min_headroom_mib;
  out.sla = in.spec.decision.sla;
  out.decode = in.spec.workload.output_tokens > 1;
  out.sla_unchecked = UncheckedLimits(out.sla, out.decode);
  const std::vector<Candidate> candidates = Enumerate(options.bounds, in.spec, in.model, engine);
  out.candidates = static_cast<int>(candidates.size());
  // Bounds that describe no layout are a mistake in them, not a search in
  // which nothing qualifies; bounds that describe no aggregated layout beside
  // disaggregated deployments are said beside the refusals, lest the ranking
  // read as aggregated layouts that lost.
  const std::string shape_rule = fmt::format(
      "on the cluster's {} GPUs ({} hosts x {}): a layout is instances of whole nodes x PP x TP "
      "using every GPU, with EP and DP dividing TP",
      in.spec.cluster.world_size(), in.spec.cluster.hosts.size(), in.spec.cluster.gpus_per_node);
  if (candidates.empty()) {
    if (EnumerateDisaggregated(options.bounds, in.spec, in.model).empty())
      return MakeError("the bounds describe no candidate " + shape_rule +
                       "; widen --instances, --pp, --ep or --dp");
    out.no_aggregated = "the bounds describe no aggregated layout " + shape_rule +
                        "; only disaggregated deployments are searched (widen --instances, --pp, "
                        "--ep or --dp for aggregated ones)";
  }

  Work w;
  PlanGroups(in, candidates, out, w);
  PredictAggregated(in, calibration, options, 0, candidates.size(), "predicting", progress, w);
  PredictDisaggregatedCandidates(in, calibration, options, out, w);
  RefuseNoPredictions(out, w);
  JudgeHeadroom(in, out);
  AddSplitCandidates(in, calibration, options, progress, out, w);
  for (const Rejection& r : out.rejected) ++out.rejected_by_reason[r.reason];
  const std::vector<size_t> ranked = RankAtBestLoads(in, calibration, options, out, w);
  MarkCouldBeBest(in, calibration, options, ranked, progress, out, w);
  for (size_t i : ranked) out.could_be_best += out.evaluated[i].could_be_best ? 1 : 0;
  AddBurstShares(in, calibration, ranked, out, w);

  // Order: ranked, then the candidates the headroom rule or the SLA leaves out.
  std::vector<Evaluated> ordered;
  for (size_t i : ranked) ordered.push_back(out.evaluated[i]);
  for (const Evaluated& e : out.evaluated)
    if (!e.meets_headroom || !e.meets_sla) ordered.push_back(e);
  out.evaluated = std::move(ordered);
  out.pareto = Front(out);
  return out;
}
}  // namespace ppsearch::search
