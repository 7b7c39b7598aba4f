#include "report/pools_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "report/svg_chart.h"
#include "stats/stats.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

using evidence::BenchDisaggregation;

// A sample's pools as the section reads them: the prefill pool first, the
// decode pool second, found by role (a file may list them in any order).
std::optional<BenchDisaggregation> Ordered(const analysis::SampleAnalysis& s) {
  if (!s.valid() || !s.disaggregation) return std::nullopt;
  const evidence::BenchPool* prefill = nullptr;
  const evidence::BenchPool* decode = nullptr;
  for (const evidence::BenchPool& pool : s.disaggregation->pools) {
    if (pool.role == "prefill" && !prefill) prefill = &pool;
    if (pool.role == "decode" && !decode) decode = &pool;
  }
  if (!prefill || !decode) return std::nullopt;
  BenchDisaggregation d = *s.disaggregation;
  d.pools = {*prefill, *decode};
  return d;
}

// The valid samples of a deployment at each load point, in run order.
std::map<int, std::vector<BenchDisaggregation>> ByConcurrency(const analysis::RunAnalysis& a) {
  std::map<int, std::vector<BenchDisaggregation>> out;
  for (const analysis::SampleAnalysis& s : a.evidence.samples)
    if (std::optional<BenchDisaggregation> d = Ordered(s)) out[s.id.concurrency].push_back(*d);
  return out;
}

template <typename Get>
double MedianOf(const std::vector<BenchDisaggregation>& samples, Get get) {
  std::vector<double> values;
  for (const BenchDisaggregation& d : samples) values.push_back(get(d));
  return stats::Median(values);
}

// The repeats' most frequent answer (the first of a tie, in run order).
std::string MostOften(const std::vector<BenchDisaggregation>& samples) {
  std::map<std::string, int> count;
  std::string best;
  for (const BenchDisaggregation& d : samples) {
    const int n = ++count[d.bottleneck];
    if (best.empty() || n > count[best]) best = d.bottleneck;
  }
  return best;
}

std::string Seconds(double s) { return FormatNumber(s, 3) + " s"; }

table::Table LoadTable(const std::vector<PoolPoint>& points) {
  table::Table t;
  t.header = {"C",         "Prefill busy", "Decode fill", "Preallocation",
              "Prefill",   "Transfer",     "Decode join", "Transfer share of TTFT",
              "Bottleneck"};
  t.left = {false, false, false, false, false, false, false, false, true};
  for (const PoolPoint& p : points)
    t.rows.push_back({std::to_string(p.concurrency), FormatPercent(p.prefill_busy, 1),
                      FormatPercent(p.decode_fill, 1), Seconds(p.prealloc_s), Seconds(p.prefill_s),
                      Seconds(p.transfer_s), Seconds(p.decode_join_s),
                      FormatPercent(p.transfer_share, 1), p.bottleneck});
  return t;
}

// One pool as the memory table lists it.
struct PoolRow {
  std::string role;
  int servers = 0;
  std::vector<std::string> hosts;
  int gpus = 0;
};

// The pools of a sample's bench summary (the simulated engine writes them).
std::vector<PoolRow> RowsOf(const BenchDisaggregation& d) {
  std::vector<PoolRow> out;
  for (const evidence::BenchPool& pool : d.pools) {
    PoolRow row{pool.role, static_cast<int>(pool.servers.size()), {}, pool.gpus};
    for (const evidence::BenchInstance& server : pool.servers)
      for (const std::string& h : server.hosts.value_or(std::vector<std::string>{}))
        row.hosts.push_back(h);
    out.push_back(std::move(row));
  }
  return out;
}

// The pools as the spec gives them (a run on real servers, whose bench
// summaries hold no simulated pool figures).
std::vector<PoolRow> RowsOf(const spec::Spec& spec) {
  std::vector<PoolRow> out;
  for (const spec::PoolSpec* pool : {&spec.disaggregation->prefill, &spec.disaggregation->decode}) {
    PoolRow row{
        pool->role, std::max(pool->layout.instances, 1), {}, static_cast<int>(pool->layout.gpus())};
    for (int h : pool->hosts) row.hosts.push_back(spec.cluster.hosts[static_cast<size_t>(h)].name);
    out.push_back(std::move(row));
  }
  return out;
}

// Each pool's servers, hosts and the highest GPU memory any of its GPUs
// held in a valid sample of a deployment.
table::Table MemoryTable(const analysis::RunAnalysis& a, const std::vector<PoolRow>& pools) {
  table::Table t;
  t.header = {"Pool",          "Servers", "Hosts", "GPUs", "Peak GPU memory MiB",
              "Remaining MiB", "Peak on"};
  t.left = {true, false, true, false, false, false, true};
  for (const PoolRow& pool : pools) {
    const std::set<std::string> hosts(pool.hosts.begin(), pool.hosts.end());
    std::string host_list;
    for (const std::string& h : pool.hosts) host_list += (host_list.empty() ? "" : " ") + h;
    std::optional<analysis::GpuPeak> peak;
    for (const analysis::SampleAnalysis& s : a.evidence.samples) {
      if (!s.valid() || !s.id.layout.disaggregated()) continue;
      for (const analysis::GpuPeak& g : s.gpus)
        if (hosts.count(g.host) && (!peak || g.used_mib > peak->used_mib)) peak = g;
    }
    t.rows.push_back(
        {pool.role, std::to_string(pool.servers), host_list, std::to_string(pool.gpus),
         peak ? FormatNumber(peak->used_mib, 0) : "-",
         peak && peak->total_mib > 0 ? FormatNumber(peak->total_mib - peak->used_mib, 0) : "-",
         peak ? fmt::format("host {} GPU {}", peak->host, peak->local_gpu) : "-"});
  }
  return t;
}

std::string LoadLabel(const PoolPoint& p) { return fmt::format("C = {}", p.concurrency); }

}  // namespace

std::vector<PoolPoint> PoolPoints(const analysis::RunAnalysis& a) {
  std::vector<PoolPoint> out;
  for (const auto& [c, samples] : ByConcurrency(a)) {
    PoolPoint p;
    p.concurrency = c;
    p.prefill_busy = MedianOf(samples, [](const auto& d) { return d.pools[0].busy_share; });
    p.decode_fill = MedianOf(samples, [](const auto& d) { return d.pools[1].batch_fill; });
    p.prealloc_s =
        MedianOf(samples, [](const auto& d) { return d.prealloc_wait_s + d.handshake_s; });
    p.prefill_s = MedianOf(samples, [](const auto& d) { return d.prefill_s; });
    p.transfer_s = MedianOf(samples, [](const auto& d) { return d.transfer_s; });
    p.decode_join_s = MedianOf(samples, [](const auto& d) { return d.decode_join_s; });
    p.transfer_share = MedianOf(samples, [](const auto& d) { return d.transfer_share_of_ttft; });
    p.bottleneck = MostOften(samples);
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<Section> PoolsSection(const analysis::RunAnalysis& a) {
  const std::vector<PoolPoint> points = PoolPoints(a);
  if (points.empty()) {
    // Real servers: each pool's evidence is its hosts' logs and snapshots.
    bool deployment = false;
    for (const analysis::SampleAnalysis& s : a.evidence.samples)
      deployment = deployment || (s.valid() && s.id.layout.disaggregated());
    if (!deployment || !a.spec().disaggregation) return std::nullopt;
    Section s{"Pools", {}};
    s.blocks.push_back(Block::Paragraph(
        "A disaggregated deployment on real servers: a prefill pool and a decode pool, SGLang's "
        "router in front. Each pool's servers kept their logs (service/<sample>/<host>.log, the "
        "router's <host>.router.log) and GPU snapshots apart. How loaded each pool ran and "
        "where the time to first token went are the simulator's figures: `ppsearch simulate` "
        "or `ppsearch run --engine sim` gives them for this deployment."));
    s.blocks.push_back(Block::TableBlock(MemoryTable(a, RowsOf(a.spec()))));
    return s;
  }
  std::optional<BenchDisaggregation> first;
  for (const analysis::SampleAnalysis& s : a.evidence.samples)
    if (!first) first = Ordered(s);
  Section s{"Pools", {}};
  s.blocks.push_back(Block::Paragraph(
      "A disaggregated deployment: a prefill pool and a decode pool, the KV cache of each "
      "request moved from its prefill server to its decode server, SGLang's router in front. "
      "Medians over each point's valid repeats. Busy is the share of the prefill pool's GPU "
      "time at work; fill is the decode pool's requests held against what its servers admit at "
      "once. The time to first token of the completed requests (means) splits into the wait "
      "for the decode server's preallocation and the bootstrap handshake, the prefill server's "
      "queue and compute, the KV transfer, and the wait for the decode loop to take the request "
      "in. The bottleneck is the pool that held the throughput back ('neither' when both ran "
      "below half)."));
  s.blocks.push_back(Block::TableBlock(LoadTable(points)));
  s.blocks.push_back(Block::Figure(kFigurePoolTtft));
  s.blocks.push_back(Block::Figure(kFigurePoolLoad));
  s.blocks.push_back(Block::TableBlock(MemoryTable(a, RowsOf(*first))));
  return s;
}

std::string PoolTtftChart(const std::vector<PoolPoint>& points) {
  BandChart c;
  c.id = kFigurePoolTtft;
  c.title = "Where the time to first token went (means of the completed requests)";
  c.x_label = "concurrency C";
  c.y_label = "TTFT (s)";
  // Short names: the legend sits on one line.
  c.series = {{"preallocation", PaletteColor(0)},
              {"prefill", PaletteColor(1)},
              {"transfer", PaletteColor(2)},
              {"decode join", PaletteColor(3)}};
  c.value_decimals = 4;
  for (const PoolPoint& p : points) {
    Slot slot;
    slot.what = LoadLabel(p);
    double at = 0;
    const double parts[] = {p.prealloc_s, p.prefill_s, p.transfer_s, p.decode_join_s};
    for (int i = 0; i < 4; ++i) {
      slot.bars.push_back({i, at, at + parts[i], LoadLabel(p) + " " + c.series[i].name});
      at += parts[i];
    }
    c.bands.push_back({LoadLabel(p), "", false, "", {slot}});
  }
  return RenderBandChart(c);
}

std::string PoolLoadChart(const std::vector<PoolPoint>& points) {
  BandChart c;
  c.id = kFigurePoolLoad;
  c.title = "How loaded each pool ran";
  c.x_label = "concurrency C";
  c.y_label = "share (%)";
  c.series = {{"prefill pool busy", PaletteColor(0)}, {"decode pool fill", PaletteColor(1)}};
  c.value_decimals = 1;
  for (const PoolPoint& p : points) {
    Slot busy, fill;
    busy.what = LoadLabel(p) + " prefill pool busy";
    fill.what = LoadLabel(p) + " decode pool fill";
    busy.bars.push_back({0, 0, p.prefill_busy * 100, busy.what});
    fill.bars.push_back({1, 0, p.decode_fill * 100, fill.what});
    c.bands.push_back({LoadLabel(p), "", false, "", {busy, fill}});
  }
  c.lines.push_back({50, "half: below it in both pools, the load sets the pace", "#888"});
  return RenderBandChart(c);
}

}  // namespace ppsearch::report
