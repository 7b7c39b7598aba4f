#include "search/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "decide/objective.h"
#include "decide/rules.h"
#include "predict/search.h"

namespace ppsearch::search {
namespace {

spec::ArgValue IntValue(int64_t v) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kInt;
  a.text = std::to_string(v);
  a.int_value = v;
  a.origin.file = "search";
  return a;
}

spec::ArgValue StringValue(const std::string& v) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kString;
  a.text = v;
  a.origin.file = "search";
  return a;
}

void SetArg(spec::Spec& s, const std::string& flag, spec::ArgValue value) {
  for (auto& [name, existing] : s.engine.args)
    if (name == flag) {
      existing = std::move(value);
      return;
    }
  s.engine.args.push_back({flag, std::move(value)});
}

// One knob setting's candidates at some of the load points, planned and
// predicted together: every closed-loop point in one group (the sweep's
// concurrencies), each request rate in a group of its own (a spec has one
// workload.request_rate).
struct Group {
  Knobs knobs;
  std::vector<LoadPoint> loads;
  plan::SearchInputs inputs;
};

// The spec a group runs: the search's engine with the knobs set, its layouts
// and load points as the sweep (and the workload's request rate).
spec::Spec SpecFor(const spec::Spec& base, const Group& g,
                   const std::vector<spec::LayoutSpec>& layouts) {
  spec::Spec s = base;
  if (g.knobs.chunked_prefill_size != 0)
    SetArg(s, "chunked-prefill-size", IntValue(g.knobs.chunked_prefill_size));
  if (g.knobs.max_running_requests != 0)
    SetArg(s, "max-running-requests", IntValue(g.knobs.max_running_requests));
  if (!g.knobs.moe_a2a_backend.empty())
    SetArg(s, "moe-a2a-backend", StringValue(g.knobs.moe_a2a_backend));
  s.sweep.layouts = layouts;
  s.sweep.concurrency.clear();
  for (const LoadPoint& l : g.loads) s.sweep.concurrency.push_back(l.concurrency);
  s.workload.request_rate = g.loads.front().request_rate;
  return s;
}

// The groups of `knobs`: one per request rate, or one for every closed-loop point.
std::vector<Group> GroupsOf(const Knobs& knobs, const std::vector<LoadPoint>& loads) {
  if (loads.empty() || !loads.front().open()) return {{knobs, loads, {}}};
  std::vector<Group> out;
  for (const LoadPoint& l : loads) out.push_back({knobs, {l}, {}});
  return out;
}

// The load point of a group's prediction.
const LoadPoint* LoadOf(const Group& g, int concurrency) {
  for (const LoadPoint& l : g.loads)
    if (l.concurrency == concurrency) return &l;
  return nullptr;
}

double ObjectiveOf(const PointFigures& p, const std::string& objective) {
  return decide::ObjectiveValue(
      objective, {p.input_tps, p.ttft_p50_s, p.output_tps, p.output_tps_per_gpu, p.goodput_rps});
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

// Every limit at every load point: the first miss (returned, and said in
// e.sla_miss), and the limits some point had no figure for.
std::optional<decide::SlaMetric> CheckSlaLimits(const decide::SlaLimits& limits, Evaluated& e,
                                                std::vector<std::string>& unchecked) {
  std::optional<decide::SlaMetric> first;
  for (const PointFigures& f : e.points) {
    const decide::SlaCheck check = decide::CheckSla(limits, f.sla);
    for (decide::SlaMetric m : check.unchecked)
      if (std::find(unchecked.begin(), unchecked.end(), decide::Info(m).key) == unchecked.end())
        unchecked.push_back(decide::Info(m).key);
    if (!first && !check.meets()) {
      first = check.misses.front().metric;
      e.meets_sla = false;
      e.sla_miss = fmt::format("{}: {}", f.load.Label(), decide::MissText(check.misses.front()));
    }
  }
  return first;
}

// Whether intervals are drawn for the objective's figure: throughput (in
// or out, whole or per GPU) and TTFT p50. Goodput counts requests against
// the limits in one simulated sample; it has no ensemble band.
bool ObjectiveHasInterval(const std::string& objective) {
  return objective == "input_tps" || objective == "ttft_p50" || objective == "output_tps" ||
         objective == "output_tps_per_gpu";
}

// The interval of a point's objective figure, in the objective's unit.
std::optional<uncertainty::Interval> ObjectiveInterval(const PointFigures& p,
                                                       const std::string& objective, int gpus) {
  if (objective == "ttft_p50") return p.ttft_p50_interval;
  if (objective == "input_tps") return p.input_tps_interval;
  if (objective == "output_tps") return p.output_tps_interval;
  if (objective == "output_tps_per_gpu" && p.output_tps_interval && gpus > 0)
    return uncertainty::Interval{p.output_tps_interval->low / gpus,
                                 p.output_tps_interval->high / gpus};
  return std::nullopt;
}

// The candidate's score over the interval's ends, against the central best
// at each level (both ends of every level together: a conservative range).
uncertainty::Interval ScoreInterval(const Evaluated& e, const std::vector<double>& best,
                                    const std::string& objective) {
  const bool ttft = decide::ObjectiveLowerIsBetter(objective);
  double log_low = 0, log_high = 0;
  int levels = 0;
  for (size_t l = 0; l < e.points.size(); ++l) {
    const std::optional<uncertainty::Interval> iv =
        ObjectiveInterval(e.points[l], objective, e.gpus);
    if (!iv || !(iv->low > 0) || !(best[l] > 0)) continue;
    // Lower TTFT is better: the score's low end comes from the high TTFT.
    log_low += std::log(ttft ? best[l] / iv->high : iv->low / best[l]);
    log_high += std::log(ttft ? best[l] / iv->low : iv->high / best[l]);
    ++levels;
  }
  if (levels == 0) return {e.score, e.score};
  return {std::exp(log_low / levels), std::exp(log_high / levels)};
}

// Draws the intervals of one candidate's points in one group through the
// one predictor.
void AddIntervals(const Group& group, Evaluated& e, const cost::Calibration& calibration,
                  const SearchOptions& options) {
  plan::SearchInputs one;
  one.spec = group.inputs.spec;
  one.model = group.inputs.model;
  one.hardware = group.inputs.hardware;
  one.plan = group.inputs.plan;
  one.plan.layouts.clear();
  for (const plan::LayoutPlan& lp : group.inputs.plan.layouts)
    if (lp.layout == e.candidate.layout) one.plan.layouts.push_back(lp);
  one.spec.sweep.layouts = {e.candidate.layout};
  predict::SearchOptions so;
  so.ensemble = options.ensemble;
  so.threads = options.threads;
  so.model_form = options.model_form;
  const predict::SearchPrediction p = predict::PredictSearch(one, calibration, so);
  for (size_t i = 0; i < p.points.size() && i < p.intervals.size(); ++i)
    for (PointFigures& f : e.points)
      if (const LoadPoint* load = LoadOf(group, p.points[i].prediction.concurrency);
          load != nullptr && f.load == *load) {
        f.input_tps_interval = p.intervals[i].input_tps;
        f.ttft_p50_interval = p.intervals[i].ttft_p50_s;
        if (f.output_tps > 0) f.output_tps_interval = p.intervals[i].output_tps;
        if (f.tpot_p50_s > 0) f.tpot_p50_interval = p.intervals[i].tpot_p50_s;
      }
}

}  // namespace

Result<SearchResult> Search(const plan::SearchInputs& in, const cost::Calibration& calibration,
                            const SearchOptions& options) {
  PPS_RETURN_IF_ERROR(CheckBounds(options.bounds));
  const SpaceEstimate estimate = EstimateSpace(options.bounds, in.spec, in.model, options.threads);
  PPS_RETURN_IF_ERROR(CheckSpaceEstimate(estimate, options.max_search_s));
  if (options.on_estimate) options.on_estimate(estimate);
  const auto progress = [&](const char* phase, size_t done, size_t total) {
    if (options.progress) options.progress(phase, done, total);
  };
  SearchResult out;
  out.load_points = LoadPoints(options.bounds);
  out.objective = in.spec.decision.objective;
  out.min_headroom_mib = in.spec.decision.min_headroom_mib;
  out.sla = in.spec.decision.sla;
  out.decode = in.spec.workload.output_tokens > 1;
  const bool ttft = decide::ObjectiveLowerIsBetter(out.objective);
  const bool has_intervals = ObjectiveHasInterval(out.objective);
  const std::vector<Candidate> candidates = Enumerate(options.bounds, in.spec, in.model);
  out.candidates = static_cast<int>(candidates.size());

  // Candidates by knob setting, in enumeration order, each setting's groups
  // together.
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
  std::vector<Group> groups;
  std::vector<std::vector<size_t>> groups_of;  // each evaluated candidate's groups
  std::map<std::string, size_t> evaluated_of;  // candidate label -> index
  size_t predicted = 0;                        // candidates, for progress
  for (size_t si = 0; si < settings.size(); ++si) {
    bool first_of_setting = true;
    for (Group g : GroupsOf(settings[si], out.load_points)) {
      g.inputs.spec = SpecFor(in.spec, g, layouts_of[si]);
      g.inputs.model = in.model;
      g.inputs.hardware = in.hardware;
      g.inputs.plan = plan::PlanSearch(g.inputs.spec, g.inputs.model, g.inputs.hardware);
      groups.push_back(std::move(g));
      const size_t gi = groups.size() - 1;
      const Group& group = groups[gi];
      if (first_of_setting) {  // refusals once per candidate, not per request rate
        for (const plan::LayoutPlan& lp : group.inputs.plan.layouts) {
          const Candidate c{lp.layout, group.knobs};
          if (!lp.valid) {
            const plan::Diagnostic& first = lp.errors.front();
            out.rejected.push_back({c, first.reason, first.message});
          } else if (auto why = predict::NotModelled(lp)) {
            out.rejected.push_back({c, "not_modelled", *why});
          }
        }
      }
      first_of_setting = false;
      const predict::SearchPrediction central =
          predict::PredictSearch(group.inputs, calibration, predict::SearchOptions::CentralOnly());
      for (const predict::SearchPoint& sp : central.points) {
        const Candidate c{sp.plan->layout, group.knobs};
        auto [it, added] = evaluated_of.emplace(c.Label(), out.evaluated.size());
        if (added) {
          Evaluated e;
          e.candidate = c;
          e.gpus = static_cast<int>(sp.plan->layout.gpus());
          e.allreduce_per_forward = sp.plan->allreduce_per_forward;
          e.cross_node_allreduce_per_forward = sp.plan->cross_node_allreduce_per_forward;
          e.alltoall_per_forward = sp.plan->alltoall_per_forward;
          e.cross_node_alltoall_per_forward = sp.plan->cross_node_alltoall_per_forward;
          e.cross_node_stage_hops = sp.plan->cross_node_stage_boundaries;
          e.headroom_mib = INFINITY;
          out.evaluated.push_back(std::move(e));
          groups_of.emplace_back();
        }
        std::vector<size_t>& mine = groups_of[it->second];
        if (mine.empty() || mine.back() != gi) mine.push_back(gi);
        Evaluated& e = out.evaluated[it->second];
        const predict::PointPrediction& p = sp.prediction;
        PointFigures f;
        f.load = *LoadOf(group, p.concurrency);
        f.input_tps = p.metrics.input_tps;
        f.input_tps_per_gpu = e.gpus > 0 ? p.metrics.input_tps / e.gpus : 0;
        f.ttft_p50_s = p.metrics.ttft_s.p50;
        f.ttft_p95_s = p.metrics.ttft_s.p95;
        f.peak_gpu_mib = p.memory.peak_mib_max;
        f.bubble_share = p.bubble_share;
        f.exposed_comm_share = p.exposed_comm_share;
        f.output_tps = p.metrics.output_tps;
        f.output_tps_per_gpu = e.gpus > 0 ? p.metrics.output_tps / e.gpus : 0;
        f.goodput_rps = p.metrics.goodput_rps;
        if (p.metrics.tpot_requests > 0 && p.metrics.tpot_s.p50 > 0) {
          f.tpot_p50_s = p.metrics.tpot_s.p50;
          f.output_tps_per_user = 1 / f.tpot_p50_s;
        }
        f.sla = PredictedSla(p.metrics);
        e.headroom_mib =
            std::min(e.headroom_mib, decide::HeadroomMib(in.hardware.memory_mib, f.peak_gpu_mib));
        e.points.push_back(f);
      }
    }
    predicted += layouts_of[si].size();
    progress("predicting", predicted, candidates.size());
  }
  for (const Rejection& r : out.rejected) ++out.rejected_by_reason[r.reason];

  // Qualify, score, rank.
  std::vector<size_t> qualifying;
  for (size_t i = 0; i < out.evaluated.size(); ++i) {
    Evaluated& e = out.evaluated[i];
    // Without the GPU's size there is no headroom to judge.
    e.meets_headroom =
        in.hardware.memory_mib <= 0 || decide::MeetsHeadroom(e.headroom_mib, out.min_headroom_mib);
    const std::optional<decide::SlaMetric> missed = CheckSlaLimits(out.sla, e, out.sla_unchecked);
    if (e.meets_headroom && missed) ++out.sla_failed_by_key[decide::Info(*missed).key];
    if (e.meets_headroom && e.meets_sla) qualifying.push_back(i);
  }
  std::vector<std::vector<double>> values;
  for (size_t i : qualifying) {
    std::vector<double> v;
    for (const PointFigures& f : out.evaluated[i].points)
      v.push_back(ObjectiveOf(f, out.objective));
    values.push_back(v);
  }
  const std::vector<double> scores = decide::RelativeScores(values, ttft);
  for (size_t k = 0; k < qualifying.size(); ++k) out.evaluated[qualifying[k]].score = scores[k];
  std::vector<size_t> ranked = qualifying;
  std::stable_sort(ranked.begin(), ranked.end(), [&](size_t a, size_t b) {
    return out.evaluated[a].score > out.evaluated[b].score;
  });
  out.qualifying = static_cast<int>(ranked.size());
  // The central best value at each level, what every score is relative to.
  std::vector<double> best(out.load_points.size(), 0);
  for (size_t i : qualifying)
    for (size_t l = 0; l < best.size() && l < out.evaluated[i].points.size(); ++l) {
      const double v = ObjectiveOf(out.evaluated[i].points[l], out.objective);
      if (v > 0 && (best[l] == 0 || (ttft ? v < best[l] : v > best[l]))) best[l] = v;
    }

  // Intervals, best first, until no interval as wide as the widest seen
  // (times the screen factor) could reach the best's lower end.
  if (options.ensemble.members > 0 && has_intervals && !ranked.empty()) {
    double best_low = 0, widest = 0;
    for (size_t i : ranked) {
      Evaluated& e = out.evaluated[i];
      if (options.screen && out.with_intervals > 0 &&
          e.score * (1 + options.screen_factor * widest) < best_low)
        break;
      for (size_t gi : groups_of[i]) AddIntervals(groups[gi], e, calibration, options);
      e.score_interval = ScoreInterval(e, best, out.objective);
      ++out.with_intervals;
      progress("intervals", static_cast<size_t>(out.with_intervals), ranked.size());
      if (out.with_intervals == 1) best_low = e.score_interval->low;
      if (e.score > 0) widest = std::max(widest, e.score_interval->high / e.score - 1);
    }
    for (size_t i : ranked) {
      Evaluated& e = out.evaluated[i];
      e.could_be_best = e.score_interval && e.score_interval->high >= best_low;
    }
  } else if (!ranked.empty()) {
    // Central values only: ties at the best score.
    const double top = out.evaluated[ranked.front()].score;
    for (size_t i : ranked) out.evaluated[i].could_be_best = out.evaluated[i].score == top;
  }
  for (size_t i : ranked) out.could_be_best += out.evaluated[i].could_be_best ? 1 : 0;

  // Order: ranked, then the candidates the headroom rule or an SLA leaves out.
  std::vector<Evaluated> ordered;
  for (size_t i : ranked) ordered.push_back(out.evaluated[i]);
  for (const Evaluated& e : out.evaluated)
    if (!e.meets_headroom || !e.meets_sla) ordered.push_back(e);
  out.evaluated = std::move(ordered);

  // The front of every qualifying point: throughput per GPU against TTFT,
  // or for decode output throughput per GPU against throughput per user
  // (both more is better: the rule's (more, less) pairs with per user negated).
  std::vector<std::pair<double, double>> xy;
  std::vector<std::pair<size_t, size_t>> which;
  for (size_t k = 0; k < static_cast<size_t>(out.qualifying); ++k)
    for (size_t l = 0; l < out.evaluated[k].points.size(); ++l) {
      const PointFigures& f = out.evaluated[k].points[l];
      if (out.decode) {
        if (!(f.output_tps > 0) || !(f.output_tps_per_user > 0)) continue;
        xy.push_back({f.output_tps_per_gpu, -f.output_tps_per_user});
      } else {
        if (!(f.input_tps > 0) || !(f.ttft_p50_s > 0)) continue;
        xy.push_back({f.input_tps_per_gpu, f.ttft_p50_s});
      }
      which.push_back({k, l});
    }
  const std::vector<bool> optimal = decide::ParetoOptimal(xy);
  for (size_t i = 0; i < xy.size(); ++i) {
    if (!optimal[i]) continue;
    const PointFigures& f = out.evaluated[which[i].first].points[which[i].second];
    out.pareto.push_back({which[i].first, f.load, f.input_tps_per_gpu, f.ttft_p50_s,
                          f.output_tps_per_gpu, f.output_tps_per_user});
  }
  const bool decode = out.decode;
  std::stable_sort(out.pareto.begin(), out.pareto.end(),
                   [decode](const ParetoPoint& a, const ParetoPoint& b) {
                     return decode ? a.output_tps_per_gpu > b.output_tps_per_gpu
                                   : a.input_tps_per_gpu > b.input_tps_per_gpu;
                   });
  return out;
}

}  // namespace ppsearch::search
