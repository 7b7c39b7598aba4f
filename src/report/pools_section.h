#pragma once
// A disaggregated deployment's part of report.md and report.html: each pool
// (its layout, hosts and GPUs), how loaded each ran and where the requests'
// time to first token went at each load point, which pool held the
// throughput back, and the GPU memory of each pool. Numbers come from the
// samples' bench summaries (their `disaggregation` group) and GPU
// snapshots; a figure is the median over the point's valid repeats.

#include <optional>
#include <string>
#include <vector>

#include "analysis/run.h"
#include "report/document.h"

namespace ppsearch::report {

// Figure names (Block::Figure) and the ids of their svg elements.
inline constexpr const char* kFigurePoolTtft = "pools-ttft";
inline constexpr const char* kFigurePoolLoad = "pools-load";

// A deployment's load point: medians over its valid repeats.
struct PoolPoint {
  int concurrency = 0;
  double prefill_busy = 0;  // the prefill pool's busy share
  double decode_fill = 0;   // the decode pool's batch fill
  // The completed requests' mean TTFT, in parts (seconds): the wait for the
  // decode server's preallocation and the bootstrap handshake, the prefill
  // server's queue and compute, the KV transfer, the decode join.
  double prealloc_s = 0, prefill_s = 0, transfer_s = 0, decode_join_s = 0;
  double transfer_share = 0;  // of the TTFT
  std::string bottleneck;     // the repeats' most frequent answer
};

// One per load point with a valid sample of a deployment, by concurrency;
// empty for a run of aggregated layouts.
std::vector<PoolPoint> PoolPoints(const analysis::RunAnalysis& a);

// nullopt for a run of aggregated layouts. A deployment run on real servers
// (no simulated pool figures) gets its pools' hosts and GPU memory only.
std::optional<Section> PoolsSection(const analysis::RunAnalysis& a);

// Stacked bars per load point: where the TTFT went.
std::string PoolTtftChart(const std::vector<PoolPoint>& points);
// Bars per load point: the prefill pool's busy share, the decode pool's fill.
std::string PoolLoadChart(const std::vector<PoolPoint>& points);

}  // namespace ppsearch::report
