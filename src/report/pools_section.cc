#include "report/pools_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "stats/stats.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

using evidence::BenchDisaggregation;

// The valid samples of a deployment at one load point, in run order.
std::map<int, std::vector<const analysis::SampleAnalysis*>> ByConcurrency(
    const analysis::RunAnalysis& a) {
  std::map<int, std::vector<const analysis::SampleAnalysis*>> out;
  for (const analysis::SampleAnalysis& s : a.evidence.samples)
    if (s.valid() && s.disaggregation && s.disaggregation->pools.size() == 2)
      out[s.id.concurrency].push_back(&s);
  return out;
}

double MedianOf(const std::vector<const analysis::SampleAnalysis*>& samples,
                double (*get)(const BenchDisaggregation&)) {
  std::vector<double> values;
  for (const auto* s : samples) values.push_back(get(*s->disaggregation));
  return stats::Median(values);
}

// The repeats' most frequent answer (the first of a tie, in run order).
std::string MostOften(const std::vector<const analysis::SampleAnalysis*>& samples) {
  std::map<std::string, int> count;
  std::string best;
  for (const auto* s : samples) {
    const int n = ++count[s->disaggregation->bottleneck];
    if (n > count[best] || best.empty()) best = s->disaggregation->bottleneck;
  }
  return best;
}

std::string Seconds(double s) { return FormatNumber(s, 3) + " s"; }

table::Table LoadTable(const std::map<int, std::vector<const analysis::SampleAnalysis*>>& points) {
  table::Table t;
  t.header = {"C",         "Prefill busy", "Decode fill", "Preallocation",
              "Prefill",   "Transfer",     "Decode join", "Transfer share of TTFT",
              "Bottleneck"};
  t.left = {false, false, false, false, false, false, false, false, true};
  for (const auto& [c, samples] : points) {
    t.rows.push_back(
        {std::to_string(c),
         FormatPercent(
             MedianOf(samples, [](const BenchDisaggregation& d) { return d.pools[0].busy_share; }),
             1),
         FormatPercent(
             MedianOf(samples, [](const BenchDisaggregation& d) { return d.pools[1].batch_fill; }),
             1),
         Seconds(MedianOf(
             samples,
             [](const BenchDisaggregation& d) { return d.prealloc_wait_s + d.handshake_s; })),
         Seconds(MedianOf(samples, [](const BenchDisaggregation& d) { return d.prefill_s; })),
         Seconds(MedianOf(samples, [](const BenchDisaggregation& d) { return d.transfer_s; })),
         Seconds(MedianOf(samples, [](const BenchDisaggregation& d) { return d.decode_join_s; })),
         FormatPercent(
             MedianOf(samples,
                      [](const BenchDisaggregation& d) { return d.transfer_share_of_ttft; }),
             1),
         MostOften(samples)});
  }
  return t;
}

// Each pool's servers, hosts and the highest GPU memory any of its GPUs
// held in a valid sample.
table::Table MemoryTable(const analysis::RunAnalysis& a, const BenchDisaggregation& first) {
  table::Table t;
  t.header = {"Pool",          "Servers", "Hosts", "GPUs", "Peak GPU memory MiB",
              "Remaining MiB", "Peak on"};
  t.left = {true, false, true, false, false, false, true};
  for (const evidence::BenchPool& pool : first.pools) {
    std::set<std::string> hosts;
    std::string host_list;
    for (const evidence::BenchInstance& server : pool.servers)
      for (const std::string& h : server.hosts.value_or(std::vector<std::string>{})) {
        hosts.insert(h);
        host_list += (host_list.empty() ? "" : " ") + h;
      }
    std::optional<analysis::GpuPeak> peak;
    for (const analysis::SampleAnalysis& s : a.evidence.samples) {
      if (!s.valid() || !s.disaggregation) continue;
      for (const analysis::GpuPeak& g : s.gpus)
        if (hosts.count(g.host) && (!peak || g.used_mib > peak->used_mib)) peak = g;
    }
    t.rows.push_back(
        {pool.role, std::to_string(pool.servers.size()), host_list, std::to_string(pool.gpus),
         peak ? FormatNumber(peak->used_mib, 0) : "-",
         peak && peak->total_mib > 0 ? FormatNumber(peak->total_mib - peak->used_mib, 0) : "-",
         peak ? fmt::format("host {} GPU {}", peak->host, peak->local_gpu) : "-"});
  }
  return t;
}

}  // namespace

std::optional<Section> PoolsSection(const analysis::RunAnalysis& a) {
  const auto points = ByConcurrency(a);
  if (points.empty()) return std::nullopt;
  const BenchDisaggregation& first = *points.begin()->second.front()->disaggregation;
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
  s.blocks.push_back(Block::TableBlock(MemoryTable(a, first)));
  return s;
}

}  // namespace ppsearch::report
