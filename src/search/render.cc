#include "search/render.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "text/table.h"
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

// The highest throughput per GPU over the load points, and where.
const PointFigures* PeakThroughput(const Evaluated& e, bool decode) {
  const PointFigures* best = nullptr;
  for (const PointFigures& p : e.points)
    if (best == nullptr || PerGpu(p, decode) > PerGpu(*best, decode)) best = &p;
  return best;
}

std::string Milliseconds(double s) { return FormatNumber(s * 1e3, 1) + " ms"; }

// Why a candidate ranks where it does, from its plan and prediction.
std::string Why(const Evaluated& e) {
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

std::string ScoreText(const Evaluated& e) {
  std::string s = FormatNumber(e.score, 3);
  if (e.score_interval)
    s += fmt::format(" [{}–{}]", FormatNumber(e.score_interval->low, 3),
                     FormatNumber(e.score_interval->high, 3));
  return s;
}

// One end of an interval; null when none was drawn.
json End(const std::optional<uncertainty::Interval>& iv, bool high) {
  return iv ? json(high ? iv->high : iv->low) : json();
}

json LayoutJson(const Candidate& c) {
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
           !c.knobs.moe_a2a_backend.empty() ? json(c.knobs.moe_a2a_backend) : json()}};
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

}  // namespace

std::vector<std::string> SummaryLines(const SearchResult& r) {
  std::string levels;
  const bool open = !r.load_points.empty() && r.load_points.front().open();
  for (const LoadPoint& l : r.load_points)
    levels += (levels.empty() ? "" : ", ") +
              (open ? FormatNumber(l.request_rate, l.request_rate < 10 ? 2 : 1)
                    : std::to_string(l.concurrency));
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
  for (const Evaluated& e : r.evaluated) below += e.meets_headroom ? 0 : 1;
  std::vector<std::string> lines = {
      fmt::format("search: {} candidates x {} load points ({}); objective {}, headroom "
                  "at least {} MiB",
                  r.candidates, r.load_points.size(), load_text, r.objective,
                  FormatThousands(static_cast<int64_t>(r.min_headroom_mib))),
      fmt::format("rejected: {}{}", r.rejected.size(), reasons.empty() ? "" : " (" + reasons + ")"),
      fmt::format("predicted: {} candidates ({} predictions); {} below the headroom rule; "
                  "intervals drawn for {}",
                  r.evaluated.size(), r.evaluated.size() * r.load_points.size(), below,
                  r.with_intervals)};
  if (r.sla.any()) {
    std::string missed;
    int total = 0;
    for (const auto& [key, count] : r.sla_failed_by_key) {
      missed += (missed.empty() ? "" : ", ") + fmt::format("{} {}", key, count);
      total += count;
    }
    lines.push_back(fmt::format(
        "SLA {} on the predicted p99s: {} of those within the headroom "
        "miss it{}",
        decide::LimitsText(r.sla), total, missed.empty() ? "" : " (first missed: " + missed + ")"));
    if (!r.sla_unchecked.empty()) {
      std::string keys;
      for (const std::string& k : r.sla_unchecked) keys += (keys.empty() ? "" : ", ") + k;
      lines.push_back(fmt::format(
          "not checked here: {} (no predicted figure); checked only on measurement", keys));
    }
  }
  return lines;
}

text::Table RankingTable(const SearchResult& r, int top) {
  const std::string first = r.load_points.empty() ? std::string("?") : r.load_points[0].Label();
  const bool open = !r.load_points.empty() && r.load_points[0].open();
  // A decode workload: output throughput, and TPOT beside TTFT at the first load point.
  text::Table t{{"rank", "candidate", "score [10-90%]",
                 r.decode ? "peak output TPS/GPU" : "peak input TPS/GPU", open ? "at" : "at C",
                 "TTFT p50 at " + first},
                {},
                {false, true, false, false, false, false},
                {"", "", "", "tokens/s", "", ""}};
  if (r.decode) {
    t.header.push_back("TPOT p50 at " + first);
    t.left.push_back(false);
    t.units.push_back("");
  }
  t.header.insert(t.header.end(), {"headroom", "why"});
  t.left.insert(t.left.end(), {false, true});
  t.units.insert(t.units.end(), {"MiB", ""});
  for (int k = 0; k < r.qualifying; ++k) {
    const Evaluated& e = r.evaluated[static_cast<size_t>(k)];
    if (k >= top && !e.could_be_best) continue;
    const PointFigures* peak = PeakThroughput(e, r.decode);
    std::vector<std::string> row = {
        std::to_string(k + 1) + (e.could_be_best ? "*" : ""),
        e.candidate.Label(),
        ScoreText(e),
        peak ? FormatNumber(PerGpu(*peak, r.decode), 1) : "-",
        peak ? (open ? peak->load.Label() : std::to_string(peak->load.concurrency)) : "-",
        e.points.empty() ? "-" : Seconds(e.points.front().ttft_p50_s)};
    if (r.decode)
      row.push_back(e.points.empty() || !(e.points.front().tpot_p50_s > 0)
                        ? "-"
                        : Milliseconds(e.points.front().tpot_p50_s));
    row.insert(row.end(), {FormatThousands(static_cast<int64_t>(e.headroom_mib)), Why(e)});
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

std::string FrontTitle(const SearchResult& r) {
  return r.decode ? "output TPS per GPU against throughput per user (1 / TPOT p50)"
                  : "input TPS per GPU against TTFT p50";
}

std::vector<std::string> FrontLines(const SearchResult& r) {
  std::vector<std::string> out;
  for (const ParetoPoint& p : r.pareto) {
    const std::string label = r.evaluated[p.evaluated].candidate.Label();
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
    std::vector<std::string> out = {
        fmt::format("no candidate within the headroom meets the SLA ({}); the first misses:",
                    decide::LimitsText(r.sla))};
    for (size_t i = 0; i < within.size() && i < 3; ++i)
      out.push_back(within[i]->candidate.Label() + ": " + within[i]->sla_miss);
    return out;
  }
  std::vector<const Evaluated*> closest;
  for (const Evaluated& e : r.evaluated) closest.push_back(&e);
  // The closest: the least headroom missing.
  std::stable_sort(closest.begin(), closest.end(), [](const Evaluated* a, const Evaluated* b) {
    return a->headroom_mib > b->headroom_mib;
  });
  std::vector<std::string> out = {
      fmt::format("no candidate keeps {} MiB of headroom{}",
                  FormatThousands(static_cast<int64_t>(r.min_headroom_mib)),
                  closest.empty() ? "; none could be predicted" : "; the closest:")};
  for (size_t i = 0; i < closest.size() && i < 3; ++i)
    out.push_back(fmt::format(
        "{}: {} MiB, {} MiB short", closest[i]->candidate.Label(),
        FormatThousands(static_cast<int64_t>(closest[i]->headroom_mib)),
        FormatThousands(static_cast<int64_t>(r.min_headroom_mib - closest[i]->headroom_mib))));
  return out;
}

std::string RenderSearchText(const SearchResult& r, int top) {
  // Appended piece by piece: GCC 12 at -O3 misreads "literal" + string&&.
  const std::vector<std::string> summary = SummaryLines(r);
  std::string out;
  for (size_t i = 0; i < summary.size(); ++i) {
    out.append(i == 0 ? "" : "  ").append(summary[i]).append("\n");
  }
  out.append("\n").append(text::RenderTextTable(RankingTable(r, top)));
  if (r.qualifying == 0) {
    const std::vector<std::string> lines = NoneQualifiesLines(r);
    for (size_t i = 0; i < lines.size(); ++i)
      out.append(i == 0 ? "\n" : "  ").append(lines[i]).append("\n");
    return out;
  }
  out.append("\n  ").append(TiedLine(r)).append("\n");
  out.append("\nPareto front (").append(FrontTitle(r)).append("):\n");
  for (const std::string& line : FrontLines(r)) out.append("  ").append(line).append("\n");
  return out;
}

nlohmann::json SearchToJson(const SearchResult& r) {
  json candidates = json::array();
  for (size_t i = 0; i < r.evaluated.size(); ++i) {
    const Evaluated& e = r.evaluated[i];
    json points = json::array();
    for (const PointFigures& p : e.points)
      points.push_back(
          {{"concurrency", p.load.concurrency},
           {"request_rate", p.load.open() ? json(p.load.request_rate) : json()},
           {"input_tps", p.input_tps},
           {"input_tps_low", End(p.input_tps_interval, false)},
           {"input_tps_high", End(p.input_tps_interval, true)},
           {"input_tps_per_gpu", p.input_tps_per_gpu},
           {"ttft_p50_s", p.ttft_p50_s},
           {"ttft_p50_s_low", End(p.ttft_p50_interval, false)},
           {"ttft_p50_s_high", End(p.ttft_p50_interval, true)},
           {"ttft_p95_s", p.ttft_p95_s},
           {"peak_gpu_mib", p.peak_gpu_mib},
           {"output_tps", p.output_tps},
           {"output_tps_low", End(p.output_tps_interval, false)},
           {"output_tps_high", End(p.output_tps_interval, true)},
           {"output_tps_per_gpu", p.output_tps_per_gpu},
           {"output_tps_per_user", p.tpot_p50_s > 0 ? json(p.output_tps_per_user) : json()},
           {"tpot_p50_ms", p.tpot_p50_s > 0 ? json(p.tpot_p50_s * 1e3) : json()},
           {"tpot_p50_ms_low", p.tpot_p50_interval ? json(p.tpot_p50_interval->low * 1e3) : json()},
           {"tpot_p50_ms_high",
            p.tpot_p50_interval ? json(p.tpot_p50_interval->high * 1e3) : json()},
           {"goodput_rps", p.goodput_rps},
           {"sla_figures", SlaJson(p.sla)},
           {"bubble_share", p.bubble_share},
           {"exposed_comm_share", p.exposed_comm_share}});
    candidates.push_back({{"rank", static_cast<int>(i) < r.qualifying ? json(i + 1) : json()},
                          {"candidate", LayoutJson(e.candidate)},
                          {"gpus", e.gpus},
                          {"qualifies", e.meets_headroom && e.meets_sla},
                          {"headroom_mib", e.headroom_mib},
                          {"meets_sla", e.meets_sla},
                          {"sla_miss", e.sla_miss.empty() ? json() : json(e.sla_miss)},
                          {"score", static_cast<int>(i) < r.qualifying ? json(e.score) : json()},
                          {"score_low", e.score_interval ? json(e.score_interval->low) : json()},
                          {"score_high", e.score_interval ? json(e.score_interval->high) : json()},
                          {"could_be_best", e.could_be_best},
                          {"allreduce_per_forward", e.allreduce_per_forward},
                          {"cross_node_allreduce_per_forward", e.cross_node_allreduce_per_forward},
                          {"alltoall_per_forward", e.alltoall_per_forward},
                          {"cross_node_alltoall_per_forward", e.cross_node_alltoall_per_forward},
                          {"cross_node_stage_hops", e.cross_node_stage_hops},
                          {"points", points}});
  }
  json rejected = json::array();
  for (const Rejection& x : r.rejected)
    rejected.push_back(
        {{"candidate", LayoutJson(x.candidate)}, {"reason", x.reason}, {"message", x.message}});
  json pareto = json::array();
  for (const ParetoPoint& p : r.pareto) {
    json member = {{"candidate", r.evaluated[p.evaluated].candidate.Label()},
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
          {"objective", r.objective},
          {"min_headroom_mib", r.min_headroom_mib},
          {"sla", SlaJson(r.sla)},
          {"sla_failed", r.sla_failed_by_key},
          {"sla_unchecked", r.sla_unchecked},
          {"load_points", LoadPointsJson(r.load_points)},
          {"space_size", r.candidates},
          {"qualifying", r.qualifying},
          {"with_intervals", r.with_intervals},
          {"could_be_best", r.could_be_best},
          {"pareto_axes", r.decode ? json::array({"output_tps_per_gpu", "output_tps_per_user"})
                                   : json::array({"input_tps_per_gpu", "ttft_p50_s"})},
          {"candidates", candidates},
          {"rejected", r.rejected_by_reason},
          {"rejections", rejected},
          {"pareto", pareto}};
}

}  // namespace ppsearch::search
