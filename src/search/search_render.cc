#include "search/search_render.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "decide/objective.h"
#include "decide/steady_state.h"
#include "predict/search_points.h"
#include "search/best_load.h"
#include "search/capacity.h"
#include "table/table.h"
#include "util/format.h"

namespace ppsearch::search {
namespace {

using nlohmann::json;

std::string Seconds(double s) { return FormatNumber(s, s < 10 ? 2 : 1) + " s"; }

// Throughput per GPU of a point: output tokens for a decode workload, input
// tokens otherwise.
double PerGpu(const PointFigures& p, bool decode) {
  return decode ? p.output_tps_per_gpu : p.input_tps_per_gpu;
}

std::string Milliseconds(double s) { return FormatNumber(s * 1e3, 1) + " ms"; }

// Why a candidate ranks where it does, from its plan and prediction.
std::string Why(const Evaluated& e) {
  if (const std::optional<PdPools>& pd = e.candidate.pd) {
    std::string at;
    if (e.at && e.at->pd)
      at = fmt::format(
          "; at {}: transfer {} of TTFT, prefill busy {}, decode held {}, bottleneck {}",
          e.at->load.Label(), FormatPercent(e.at->pd->transfer_share_of_ttft, 1),
          FormatPercent(e.at->pd->prefill_busy, 0), FormatPercent(e.at->pd->decode_fill, 0),
          e.at->pd->bottleneck);
    return fmt::format("disaggregated: {} prefill GPUs on {} node(s), {} decode GPUs on {}{}",
                       pd->prefill.gpus(), pd->prefill_nodes, pd->decode.gpus(), pd->decode_nodes,
                       at);
  }
  double bubble = 0, exposed = 0;
  for (const PointFigures& p : e.points) {
    bubble = std::max(bubble, p.bubble_share);
    exposed = std::max(exposed, p.exposed_comm_share);
  }
  const int n = e.candidate.layout.instances;
  const std::string instances =
      n > 1 ? fmt::format("{} instances of {} GPUs, each serving C/{}; ", n, e.gpus / n, n) : "";
  const std::string a2a =
      e.alltoall_per_forward > 0
          ? fmt::format("; {} of {} DeepEP all-to-alls cross nodes",
                        e.cross_node_alltoall_per_forward, e.alltoall_per_forward)
          : "";
  return instances +
         fmt::format(
             "{} of {} all-reduces cross nodes{}; {} stage hops cross nodes; bubble up to "
             "{}, exposed communication up to {}",
             e.cross_node_allreduce_per_forward, e.allreduce_per_forward, a2a,
             e.cross_node_stage_hops, FormatPercent(bubble, 0), FormatPercent(exposed, 0));
}

// Whether the load points are request rates (all are, or none).
bool OpenLoop(const SearchResult& r) {
  return !r.load_points.empty() && r.load_points.front().open();
}

// "tpot_p99_ms 96%, missed at C=24": the limit that binds next, how much of
// it the best load point uses, and where it breaks.
std::string BindingText(const Binding& b) {
  std::string out = b.keeping_up
                        ? std::string("keeping up")
                        : fmt::format("{} {}", decide::Info(b.metric).key, FormatPercent(b.use, 0));
  if (b.missed_at) out += ", missed at " + b.missed_at->Label();
  return out;
}

std::string ScoreText(const Evaluated& e) {
  std::string s = FormatNumber(e.score, 3);
  if (e.score_interval)
    s += fmt::format(" [{}–{}]", FormatNumber(e.score_interval->low, 3),
                     FormatNumber(e.score_interval->high, 3));
  return s;
}

json PdPoolJson(const spec::LayoutSpec& l, int nodes) {
  return {{"pp", l.pp},    {"tp", l.tp}, {"ep", l.ep}, {"dp", l.dp}, {"servers", l.instances},
          {"nodes", nodes}};
}

// MiB as plan and simulate print them: to the nearest, with separators.
std::string Mib(double mib) { return FormatThousands(std::llround(mib)); }

// "1 candidate", "2 candidates": a narrow search (--pp 8 --ep 4 --concurrency
// 8) counts ones.
std::string Counted(size_t n, const char* noun) {
  return fmt::format("{} {}{}", FormatThousands(static_cast<int64_t>(n)), noun, n == 1 ? "" : "s");
}

// The label of candidate `e` searched again with its layer split
// (Evaluated::lifting_partition).
std::string SplitTwinLabel(const Evaluated& e) {
  Candidate twin = e.candidate;
  twin.layer_split = e.lifting_partition;
  return twin.Label();
}

// An aggregated candidate's layout, or a disaggregated one's pools under
// "disaggregated" (its pp, tp, ep, dp and instances null).
json LayoutJson(const Candidate& c) {
  if (c.pd)
    return {{"label", c.Label()},
            {"pp", json()},
            {"tp", json()},
            {"ep", json()},
            {"dp", json()},
            {"instances", json()},
            {"disaggregated",
             {{"ratio", c.pd->Ratio()},
              {"prefill", PdPoolJson(c.pd->prefill, c.pd->prefill_nodes)},
              {"decode", PdPoolJson(c.pd->decode, c.pd->decode_nodes)}}},
            {"chunked_prefill_size", json()},
            {"max_running_requests", json()},
            {"moe_a2a_backend", json()},
            {"pp_layer_partition", json()}};
  return {{"label", c.Label()},
          {"pp", c.layout.pp},
          {"tp", c.layout.tp},
          {"ep", c.layout.ep},
          {"dp", c.layout.dp},
          {"instances", c.layout.instances},
          {"chunked_prefill_size",
           c.knobs.chunked_prefill_size != 0 ? json(c.knobs.chunked_prefill_size) : json()},
          {"max_running_requests",
           c.knobs.max_running_requests != 0 ? json(c.knobs.max_running_requests) : json()},
          {"moe_a2a_backend",
           !c.knobs.moe_a2a_backend.empty() ? json(c.knobs.moe_a2a_backend) : json()},
          {"pp_layer_partition", c.layer_split.empty() ? json() : json(c.layer_split)},
          {"disaggregated", json()}};
}

// Closed-loop load points as their concurrencies; open-loop ones as
// {request_rate, concurrency (the cap, 0 for none)}.
json LoadPointsJson(const std::vector<LoadPoint>& loads) {
  json out = json::array();
  for (const LoadPoint& l : loads)
    out.push_back(l.open() ? json{{"request_rate", l.request_rate}, {"concurrency", l.concurrency}}
                           : json(l.concurrency));
  return out;
}

// Set values by [decision] key, in the key's unit (ms for tpot_p99_ms).
json SlaJson(const decide::SlaValues& v) {
  json out = json::object();
  for (decide::SlaMetric m : decide::kSlaMetrics)
    if (v[m]) out[decide::Info(m).key] = *v[m] * decide::Info(m).per_second;
  return out;
}

// How the best load points were found.
std::string BestLoadLine(const SearchResult& r) {
  if (r.objective.lower_is_better())
    return fmt::format("each candidate at the load point meeting the SLA where its {} is best",
                       r.objective.label());
  return fmt::format(
      "each candidate at the highest load meeting the SLA, bisected between the listed load "
      "points where it could rank higher ({} more predictions)",
      r.probes);
}

// One load point's figures, named by stats::FigureKey; interval ends are
// null where none was drawn, the decode figures null without a TPOT.
json PointJson(const PointFigures& p) {
  using F = stats::Figures;
  using stats::TimeUnit;
  json j = {{"concurrency", p.load.concurrency},
            {"request_rate", p.load.open() ? json(p.load.request_rate) : json()},
            {"probed", p.probed},
            {"requests", p.requests},
            {"requests_completed", p.requests_completed},
            {"peak_gpu_mib", p.peak_gpu_mib},
            {"meets_sla", p.meets_sla},
            {"steady_state", p.not_steady.empty()},
            {"not_steady", p.not_steady.empty() ? json() : json(p.not_steady)},
            {"sla_figures", SlaJson(p.sla)},
            {"bubble_share", p.bubble_share},
            {"exposed_comm_share", p.exposed_comm_share},
            {"disaggregated", p.pd ? json{{"transfer_share_of_ttft", p.pd->transfer_share_of_ttft},
                                          {"prefill_busy_share", p.pd->prefill_busy},
                                          {"decode_held_share", p.pd->decode_fill},
                                          {"bottleneck", p.pd->bottleneck}}
                                   : json()}};
  for (double F::*m :
       {&F::input_tps, &F::input_tps_per_gpu, &F::ttft_p50_s, &F::ttft_p95_s, &F::output_tps,
        &F::output_tps_per_gpu, &F::request_rps, &F::goodput_rps, &F::first_token_pace})
    j[stats::FigureKey(m)] = p.*m;
  const bool decoded = p.tpot_p50_s > 0;
  j[stats::FigureKey(&F::output_tps_per_user)] = decoded ? json(p.output_tps_per_user) : json();
  const std::string tpot = stats::FigureKey(&F::tpot_p50_s, TimeUnit::kMilliseconds);
  j[tpot] = decoded ? json(stats::FigureIn(p.tpot_p50_s, TimeUnit::kMilliseconds)) : json();
  const auto ends = [&](const std::string& key, const std::optional<uncertainty::Interval>& i,
                        TimeUnit unit) {
    j[key + "_low"] = i ? json(stats::FigureIn(i->low, unit)) : json();
    j[key + "_high"] = i ? json(stats::FigureIn(i->high, unit)) : json();
  };
  ends(stats::FigureKey(&F::input_tps), p.input_tps_interval, TimeUnit::kSeconds);
  ends(stats::FigureKey(&F::ttft_p50_s), p.ttft_p50_interval, TimeUnit::kSeconds);
  ends(stats::FigureKey(&F::output_tps), p.output_tps_interval, TimeUnit::kSeconds);
  ends(tpot, p.tpot_p50_interval, TimeUnit::kMilliseconds);
  return j;
}

json BindingJson(const Binding& b) {
  return {{"limit", b.keeping_up ? kKeepingUpKey : decide::Info(b.metric).key},
          {"use", b.keeping_up ? json() : json(b.use)},
          {"missed_at", b.missed_at
                            ? json{{"concurrency", b.missed_at->concurrency},
                                   {"request_rate",
                                    b.missed_at->open() ? json(b.missed_at->request_rate) : json()}}
                            : json()}};
}

// How far a figure is over its limit: "+3.00% over", or past twice the
// limit "4,553.2 times the limit".
std::string OverText(double over) {
  if (over < 1) return FormatSignedPercent(over) + " over";
  return FormatNumber(over + 1, 1) + " times the limit";
}

// Which load points are short of their steady state: listed closed-loop
// ones (every candidate's sample has the same requests) and ranked
// candidates' best load points, marked "~" in the table (an open loop's
// waves depend on each candidate's end-to-end time). Empty when all are
// steady.
std::string SteadyLine(const SearchResult& r) {
  std::vector<decide::LoopSample> samples;
  for (const LoadPoint& l : r.load_points)
    samples.push_back({l.Label(), l.open() ? 0 : l.concurrency, r.requests});
  const std::string listed = decide::ShortOfSteadyState(samples);
  int best = 0;
  for (int k = 0; k < r.qualifying; ++k)
    best += r.evaluated[static_cast<size_t>(k)].at->not_steady.empty() ? 0 : 1;
  if (listed.empty() && best == 0) return "";
  const std::string rule = OpenLoop(r) ? decide::SteadyRuleOpen() : decide::SteadyRule();
  std::string out = "steady state: " + rule + "; short of it";
  if (!listed.empty()) out += " at " + listed;
  if (best > 0)
    out += fmt::format("{}the best load point of {} ranked candidate(s), marked ~",
                       listed.empty() ? ": " : "; and ", best);
  return out;
}

}  // namespace

std::vector<std::string> SummaryLines(const SearchResult& r) {
  std::string levels;
  const bool open = OpenLoop(r);
  for (const LoadPoint& l : r.load_points)
    levels += (levels.empty() ? "" : ", ") + (open ? l.RateText() : std::to_string(l.concurrency));
  const std::string load_text =
      !open ? "C = " + levels
            : "Poisson arrivals at " + levels + " requests/s" +
                  (r.load_points.front().concurrency > 0
                       ? fmt::format(", at most {} in flight", r.load_points.front().concurrency)
                       : "");
  std::string reasons;
  for (const auto& [reason, count] : r.rejected_by_reason)
    reasons += (reasons.empty() ? "" : ", ") + fmt::format("{} {}", reason, count);
  int below = 0;
  size_t split = 0;  // predicted again with a layer split
  for (const Evaluated& e : r.evaluated) {
    below += e.meets_headroom ? 0 : 1;
    split += e.candidate.layer_split.empty() ? 0 : 1;
  }
  std::vector<std::string> lines = {
      fmt::format("search: {} x {} ({}); objective {}, headroom at least {} MiB",
                  Counted(r.candidates, "candidate"), Counted(r.load_points.size(), "load point"),
                  load_text, r.objective.name(), Mib(r.min_headroom_mib)),
      fmt::format("rejected: {}{}{}", r.rejected.size(),
                  reasons.empty() ? "" : " (" + reasons + ")",
                  r.no_aggregated.empty() ? "" : "; " + r.no_aggregated),
      fmt::format("predicted: {}{} ({}); {} below the headroom rule; intervals drawn for {}",
                  Counted(r.evaluated.size() - split, "candidate"),
                  split > 0 ? fmt::format(" and {} again with a layer split", split) : "",
                  Counted(r.evaluated.size() * r.load_points.size(), "prediction"), below,
                  r.with_intervals)};
  if (!r.sla.any() && open && !r.objective.lower_is_better()) {
    const auto behind = r.sla_failed_by_key.find(kKeepingUpKey);
    lines.push_back(fmt::format(
        "each candidate at the highest offered rate it keeps up with, bisected between the listed "
        "rates where it could rank higher ({} more predictions); {} of those within the headroom "
        "fall behind at every rate",
        r.probes, behind == r.sla_failed_by_key.end() ? 0 : behind->second));
  } else if (!r.sla.any()) {
    lines.push_back(fmt::format("each candidate at the load point {}where its {} is best",
                                open ? "it keeps up with " : "", r.objective.label()));
  } else {
    std::string missed;
    int total = 0;
    for (const auto& [key, count] : r.sla_failed_by_key) {
      missed += (missed.empty() ? "" : ", ") + fmt::format("{} {}", key, count);
      total += count;
    }
    lines.push_back(fmt::format(
        "SLA {}{} on the predicted p99s: {} of those within the headroom "
        "miss it at every load point{}",
        decide::LimitsText(r.sla), open ? ", and keeping up with the offered rate," : "", total,
        missed.empty() ? "" : " (first missed: " + missed + ")"));
    lines.push_back(BestLoadLine(r));
    if (!r.sla_unchecked.empty()) {
      std::string keys;
      for (const std::string& k : r.sla_unchecked) keys += (keys.empty() ? "" : ", ") + k;
      lines.push_back(fmt::format(
          "not checked here: {} (no predicted figure); checked only on measurement", keys));
    }
  }
  if (const std::string steady = SteadyLine(r); !steady.empty()) lines.push_back(steady);
  return lines;
}

table::Table RankingTable(const SearchResult& r, int top) {
  // The figures at each candidate's best load point: its throughput per GPU,
  // TTFT p50 (and TPOT p50 for decode), each set SLA limit's figure and the
  // limit that binds next.
  table::Table t{{"rank", "candidate", "score [10-90%]", "at",
                  r.decode ? "output TPS/GPU" : "input TPS/GPU", "TTFT p50"},
                 {},
                 {false, true, false, false, false, false},
                 {"", "", "", "", "tokens/s", ""}};
  auto add = [&t](const std::string& name, bool left) {
    t.header.push_back(name);
    t.left.push_back(left);
    t.units.push_back("");
  };
  if (r.decode) add("TPOT p50", false);
  std::vector<decide::SlaMetric> limits;
  for (decide::SlaMetric m : decide::kSlaMetrics)
    if (r.sla[m]) {
      limits.push_back(m);
      add(decide::Info(m).label, false);
    }
  if (r.sla.any()) add("binds next", true);
  t.header.insert(t.header.end(), {"headroom", "why"});
  t.left.insert(t.left.end(), {false, true});
  t.units.insert(t.units.end(), {"MiB", ""});
  for (int k = 0; k < r.qualifying; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    if (k >= top && !e.could_be_best) continue;
    const PointFigures& at = *e.at;
    std::vector<std::string> row = {std::to_string(k + 1) + (e.could_be_best ? "*" : ""),
                                    e.candidate.Label(),
                                    ScoreText(e),
                                    at.load.Label() + (at.not_steady.empty() ? "" : "~"),
                                    FormatNumber(PerGpu(at, r.decode), 1),
                                    Seconds(at.ttft_p50_s)};
    if (r.decode) row.push_back(at.tpot_p50_s > 0 ? Milliseconds(at.tpot_p50_s) : "-");
    for (decide::SlaMetric m : limits)
      row.push_back(at.sla[m] ? decide::InKeyUnit(m, *at.sla[m]) : "-");
    if (r.sla.any()) row.push_back(e.binds_next ? BindingText(*e.binds_next) : "-");
    row.insert(row.end(), {Mib(e.headroom_mib), Why(e)});
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string TiedLine(const SearchResult& r) {
  std::string tied;
  for (const Evaluated& e : r.evaluated)
    if (e.could_be_best) tied += (tied.empty() ? "" : ", ") + e.candidate.Label();
  return fmt::format(
      "{} could still be the best given the intervals (marked *): {}",
      r.could_be_best == 1 ? "1 candidate" : std::to_string(r.could_be_best) + " candidates", tied);
}

// The range of the tensor burst's share over the candidates that could be
// the best; "" on a profile without a burst.
std::string BurstLine(const SearchResult& r) {
  double low = 1, high = 0;
  for (const Evaluated& e : r.evaluated)
    if (e.tensor_burst_share) {
      low = std::min(low, *e.tensor_burst_share);
      high = std::max(high, *e.tensor_burst_share);
    }
  if (r.tensor_burst.empty() || low > high) return "";
  if (!r.load_points.empty() && r.load_points.front().open())
    return fmt::format(
        "the tensor burst ({}; one public run's window, docs/model.md) takes {} off their "
        "TTFT p50 at their best load points (Poisson arrivals: the input TPS is the arrival "
        "rate's while the server keeps up; tensor_burst_share in --json)",
        r.tensor_burst, FormatPercentRange(low, high));
  return fmt::format(
      "the tensor burst ({}; one public run's window, docs/model.md) gives {} of their "
      "input TPS at their best load points (tensor_burst_share in --json)",
      r.tensor_burst, FormatPercentRange(low, high));
}

std::string FrontTitle(const SearchResult& r) {
  return r.decode ? "output TPS per GPU against throughput per user (1 / TPOT p50)"
                  : "input TPS per GPU against TTFT p50";
}

std::vector<std::string> FrontLines(const SearchResult& r) {
  std::vector<std::string> out;
  for (const ParetoPoint& p : r.pareto) {
    // Which kind each member is: the ratio names a disaggregated one too.
    const Candidate& c = r.evaluated[p.evaluated].candidate;
    const std::string label = c.Label() + (c.pd ? " (disaggregated)" : "");
    if (r.decode)
      out.push_back(fmt::format("{} at {}: {} output tokens/s per GPU, {} tokens/s per user", label,
                                p.load.Label(), FormatNumber(p.output_tps_per_gpu, 1),
                                FormatNumber(p.output_tps_per_user, 1)));
    else
      out.push_back(fmt::format("{} at {}: {} tokens/s per GPU, TTFT p50 {}", label, p.load.Label(),
                                FormatNumber(p.input_tps_per_gpu, 1), Seconds(p.ttft_p50_s)));
  }
  return out;
}

std::vector<std::string> NoneQualifiesLines(const SearchResult& r) {
  std::vector<const Evaluated*> within;
  for (const Evaluated& e : r.evaluated)
    if (e.meets_headroom) within.push_back(&e);
  if (!within.empty()) {
    // The closest: the least over a limit at any load point.
    std::stable_sort(within.begin(), within.end(), [](const Evaluated* a, const Evaluated* b) {
      return a->sla_shortfall < b->sla_shortfall;
    });
    std::vector<std::string> out = {
        r.sla.any() ? fmt::format("no candidate within the headroom meets the SLA ({}{}) at any "
                                  "load point; the closest:",
                                  decide::LimitsText(r.sla),
                                  OpenLoop(r) ? ", and keeping up with the offered rate" : "")
                    : "no candidate within the headroom keeps up with any offered rate; the "
                      "closest:"};
    for (size_t i = 0; i < within.size() && i < 3; ++i)
      out.push_back(fmt::format("{}: {} at its nearest load point; first miss {}",
                                within[i]->candidate.Label(), OverText(within[i]->sla_shortfall),
                                within[i]->sla_miss));
    return out;
  }
  if (r.evaluated.empty())
    return {fmt::format("no candidate could be predicted: all {} were refused", r.rejected.size())};
  std::vector<const Evaluated*> closest;
  for (const Evaluated& e : r.evaluated) closest.push_back(&e);
  // The closest: the least headroom missing.
  std::stable_sort(closest.begin(), closest.end(), [](const Evaluated* a, const Evaluated* b) {
    return a->headroom_mib > b->headroom_mib;
  });
  std::vector<std::string> out = {
      fmt::format("no candidate keeps {} MiB of headroom; the closest:", Mib(r.min_headroom_mib))};
  for (size_t i = 0; i < closest.size() && i < 3; ++i)
    out.push_back(fmt::format("{}: {} MiB, {} MiB short", closest[i]->candidate.Label(),
                              Mib(closest[i]->headroom_mib),
                              Mib(r.min_headroom_mib - closest[i]->headroom_mib)));
  return out;
}

// Where candidate `e` searched again with its layer split ranks: "rank 3",
// or why it does not.
std::string SplitTwinRank(const SearchResult& r, const Evaluated& e) {
  const std::string label = SplitTwinLabel(e);
  for (size_t k = 0; k < r.evaluated.size(); ++k) {
    const Evaluated& t = r.evaluated[k];
    if (t.candidate.Label() != label) continue;
    if (static_cast<int>(k) < r.qualifying) return fmt::format("rank {}", k + 1);
    return t.meets_headroom ? "not ranked: it meets the SLA at no load point"
                            : "not ranked: below the headroom rule as predicted";
  }
  for (const Rejection& x : r.rejected)
    if (x.candidate.Label() == label) return "refused: " + x.message;
  return "not predicted";
}

// The candidates the headroom rule leaves out with SGLang's even layer
// split that the search ranked again with a split (Evaluated::lifting_partition),
// best objective at a listed load point first; at most `shown`, then how many more.
std::vector<std::string> LayerSplitLines(const SearchResult& r, size_t shown) {
  std::vector<std::pair<double, const Evaluated*>> lifted;
  for (const Evaluated& e : r.evaluated) {
    if (e.lifting_partition.empty() || e.points.empty()) continue;
    double best = ObjectiveAt(e.points.front(), r.objective);
    for (const PointFigures& f : e.points)
      if (r.objective.Beats(ObjectiveAt(f, r.objective), best)) best = ObjectiveAt(f, r.objective);
    lifted.emplace_back(best, &e);
  }
  if (lifted.empty()) return {};
  std::stable_sort(lifted.begin(), lifted.end(), [&r](const auto& a, const auto& b) {
    return r.objective.Beats(a.first, b.first);
  });
  std::vector<std::string> out = {
      "left out by the headroom rule with SGLang's even layer split, searched again with the split "
      "(SGLANG_PP_LAYER_PARTITION) that keeps it; --emit-spec writes a measured one's into "
      "[engine.pp_layer_partition]:"};
  for (size_t i = 0; i < lifted.size() && i < shown; ++i) {
    const Evaluated& e = *lifted[i].second;
    out.push_back(fmt::format("{}: {} MiB; with {} = [{}]: {} MiB, {}", e.candidate.Label(),
                              Mib(e.headroom_mib), e.candidate.layout.pp,
                              fmt::join(e.lifting_partition, ", "), Mib(e.lifted_headroom_mib),
                              SplitTwinRank(r, e)));
  }
  if (lifted.size() > shown)
    out.push_back(fmt::format("and {} more (layer_split in --json)", lifted.size() - shown));
  return out;
}

std::string RenderSearchText(const SearchResult& r, int top) {
  // Appended piece by piece: GCC 12 at -O3 misreads "literal" + string&&.
  const std::vector<std::string> summary = SummaryLines(r);
  std::string out;
  for (size_t i = 0; i < summary.size(); ++i) {
    out.append(i == 0 ? "" : "  ").append(summary[i]).append("\n");
  }
  out.append("\n").append(table::RenderTextTable(RankingTable(r, top)));
  if (r.qualifying == 0) {
    const std::vector<std::string> lines = NoneQualifiesLines(r);
    for (size_t i = 0; i < lines.size(); ++i)
      out.append(i == 0 ? "\n" : "  ").append(lines[i]).append("\n");
    const std::vector<std::string> lift = LayerSplitLines(r, 5);
    for (size_t i = 0; i < lift.size(); ++i)
      out.append(i == 0 ? "\n" : "  ").append(lift[i]).append("\n");
    return out;
  }
  out.append("\n  ").append(TiedLine(r)).append("\n");
  if (const std::string burst = BurstLine(r); !burst.empty())
    out.append("  ").append(burst).append("\n");
  const std::vector<std::string> lift = LayerSplitLines(r, 5);
  for (size_t i = 0; i < lift.size(); ++i)
    out.append(i == 0 ? "\n" : "  ").append(lift[i]).append("\n");
  out.append("\nPareto front (").append(FrontTitle(r)).append("):\n");
  for (const std::string& line : FrontLines(r)) out.append("  ").append(line).append("\n");
  return out;
}

nlohmann::json SearchToJson(const SearchResult& r) {
  json candidates = json::array();
  for (size_t i = 0; i < r.evaluated.size(); ++i) {
    const Evaluated& e = r.evaluated[i];
    json points = json::array(), probed = json::array();
    for (const PointFigures& p : e.points) points.push_back(PointJson(p));
    for (const PointFigures& p : e.probed) probed.push_back(PointJson(p));
    candidates.push_back(
        {{"rank", static_cast<int>(i) < r.qualifying ? json(i + 1) : json()},
         {"candidate", LayoutJson(e.candidate)},
         {"gpus", e.gpus},
         {"qualifies", e.meets_headroom && e.meets_sla},
         {"headroom_mib", e.headroom_mib},
         {"layer_split", e.lifting_partition.empty()
                             ? json()
                             : json({{"sglang_pp_layer_partition", e.lifting_partition},
                                     {"headroom_mib", e.lifted_headroom_mib},
                                     {"candidate", SplitTwinLabel(e)}})},
         {"meets_sla", e.meets_sla},
         {"sla_miss", e.sla_miss.empty() ? json() : json(e.sla_miss)},
         {"score", static_cast<int>(i) < r.qualifying ? json(e.score) : json()},
         {"score_low", e.score_interval ? json(e.score_interval->low) : json()},
         {"score_high", e.score_interval ? json(e.score_interval->high) : json()},
         {"could_be_best", e.could_be_best},
         {"tensor_burst_share", e.tensor_burst_share ? json(*e.tensor_burst_share) : json()},
         {"tensor_burst_share_of",
          e.tensor_burst_share ? json(predict::TensorBurstFigure(e.at->load.open())) : json()},
         {"allreduce_per_forward", e.allreduce_per_forward},
         {"cross_node_allreduce_per_forward", e.cross_node_allreduce_per_forward},
         {"alltoall_per_forward", e.alltoall_per_forward},
         {"cross_node_alltoall_per_forward", e.cross_node_alltoall_per_forward},
         {"cross_node_stage_hops", e.cross_node_stage_hops},
         {"points", points},
         {"probed", probed},
         {"at", e.at ? PointJson(*e.at) : json()},
         {"binds_next", e.binds_next ? BindingJson(*e.binds_next) : json()},
         {"sla_shortfall", e.at ? json() : json(e.sla_shortfall)}});
  }
  json rejected = json::array();
  for (const Rejection& x : r.rejected)
    rejected.push_back(
        {{"candidate", LayoutJson(x.candidate)}, {"reason", x.reason}, {"message", x.message}});
  json pareto = json::array();
  for (const ParetoPoint& p : r.pareto) {
    json member = {{"candidate", r.evaluated[p.evaluated].candidate.Label()},
                   {"disaggregated", r.evaluated[p.evaluated].candidate.pd.has_value()},
                   {"rank", p.evaluated + 1},
                   {"concurrency", p.load.concurrency},
                   {"request_rate", p.load.open() ? json(p.load.request_rate) : json()},
                   {"input_tps_per_gpu", p.input_tps_per_gpu},
                   {"ttft_p50_s", p.ttft_p50_s}};
    if (r.decode) {
      member["output_tps_per_gpu"] = p.output_tps_per_gpu;
      member["output_tps_per_user"] = p.output_tps_per_user;
    }
    pareto.push_back(member);
  }
  return {{"schema", "ppsearch.search/1"},
          {"objective", r.objective.name()},
          {"min_headroom_mib", r.min_headroom_mib},
          {"sla", SlaJson(r.sla)},
          {"sla_failed", r.sla_failed_by_key},
          {"sla_unchecked", r.sla_unchecked},
          {"load_points", LoadPointsJson(r.load_points)},
          {"space_size", r.candidates},
          {"split_candidates", r.split_candidates},
          {"qualifying", r.qualifying},
          {"with_intervals", r.with_intervals},
          {"probes", r.probes},
          {"could_be_best", r.could_be_best},
          {"pareto_axes", r.decode ? json::array({"output_tps_per_gpu", "output_tps_per_user"})
                                   : json::array({"input_tps_per_gpu", "ttft_p50_s"})},
          {"candidates", candidates},
          {"rejected", r.rejected_by_reason},
          {"no_aggregated", r.no_aggregated.empty() ? json() : json(r.no_aggregated)},
          {"rejections", rejected},
          {"pareto", pareto}};
}

std::string RenderCapacityText(const SearchResult& r, const CapacityPlan& plan, int top) {
  std::string out = fmt::format(
      "\nCapacity for {} requests/s{}: the fewest GPUs first, then {}\n",
      FormatNumber(plan.target_rps, plan.target_rps < 10 ? 2 : 1),
      r.sla.any() ? " under the SLA (" + decide::LimitsText(r.sla) + ")" : "", r.objective.label());
  if (plan.rows.empty()) return out + "  no qualifying candidate serves a request per second\n";
  table::Table t{{"GPUs", "instances", "of", "rank", "requests/s each", "each at", "fits"},
                 {},
                 {false, false, true, false, false, false, true}};
  for (size_t i = 0; i < plan.rows.size() && static_cast<int>(i) < top; ++i) {
    const CapacityRow& row = plan.rows[i];
    t.rows.push_back({FormatThousands(row.gpus), std::to_string(row.instances),
                      fmt::format("{} ({} GPUs)", row.instance.Label(), row.gpus_per_instance),
                      std::to_string(row.evaluated + 1), FormatNumber(row.instance_rps, 2),
                      row.instance_load.Label(),
                      row.gpus <= plan.cluster_gpus
                          ? "yes"
                          : fmt::format("no: the cluster has {}", plan.cluster_gpus)});
  }
  out += table::RenderTextTable(t);
  const CapacityRow& best = plan.rows.front();
  out += fmt::format("\n  fewest GPUs: {} instance(s) of {}, {} GPUs, each at {}\n", best.instances,
                     best.instance.Label(), best.gpus, best.instance_load.Label());
  if (best.at_heaviest_load)
    out += fmt::format(
        "  its best load is the heaviest listed (C={} for the candidate): an instance that meets "
        "the SLA there may serve more at a heavier load, so fewer instances may do; list a "
        "heavier --concurrency to find out\n",
        r.evaluated[best.evaluated].at->load.concurrency);
  return out;
}

nlohmann::json CapacityToJson(const CapacityPlan& plan) {
  json rows = json::array();
  for (const CapacityRow& row : plan.rows)
    rows.push_back({{"gpus", row.gpus},
                    {"instances", row.instances},
                    {"instance", LayoutJson(row.instance)},
                    {"gpus_per_instance", row.gpus_per_instance},
                    {"rank", row.evaluated + 1},
                    {"instance_rps", row.instance_rps},
                    {"instance_concurrency", row.instance_load.concurrency},
                    {"instance_request_rate",
                     row.instance_load.open() ? json(row.instance_load.request_rate) : json()},
                    {"fits_cluster", row.gpus <= plan.cluster_gpus},
                    {"at_heaviest_load", row.at_heaviest_load}});
  return {{"target_rps", plan.target_rps}, {"cluster_gpus", plan.cluster_gpus}, {"rows", rows}};
}

}  // namespace ppsearch::search
