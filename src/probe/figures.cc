#include "probe/figures.h"

#include <algorithm>
#include <map>

#include "cost/gemm.h"
#include "cost/parameters.h"

namespace ppsearch::probe {
namespace {

// The profiles' latency convention: the smallest time at <= 4 KiB.
constexpr int64_t kLatencyBytes = 4096;
// A call this much faster than the sustained rate is in the burst.
constexpr double kBurstMargin = 1.05;

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double SecondsPerOp(const TimedRun& run) {
  return run.seconds / static_cast<double>(std::max<int64_t>(run.iterations, 1));
}

double GemmBytes(const GemmShape& g) {
  return hardware::Bf16GemmMinBytes(static_cast<double>(g.m), static_cast<double>(g.n),
                                    static_cast<double>(g.k));
}

std::optional<double> MedianOf(const std::vector<NodeFigures>& nodes,
                               std::optional<double> NodeFigures::*field, double* spread) {
  std::vector<double> v;
  for (const NodeFigures& n : nodes)
    if (n.*field) v.push_back(*(n.*field));
  if (v.empty()) return std::nullopt;
  if (spread != nullptr) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    *spread = *lo > 0 ? *hi / *lo - 1 : 0;
  }
  return Median(v);
}

// Per op and group size: the busbw at the largest message and the latency.
std::vector<CollectiveFigure> CollectiveFiguresOf(const std::vector<CollectiveTiming>& rows) {
  std::map<std::pair<std::string, int>, CollectiveFigure> by;
  for (const CollectiveTiming& c : rows) {
    CollectiveFigure& f = by[{c.op, c.ranks}];
    f.op = c.op;
    f.group_size = c.ranks;
    const double t = SecondsPerOp(c.run);
    if (c.bytes >= f.largest_bytes) {
      f.largest_bytes = c.bytes;
      f.busbw_gbps = BusBandwidthGbps(c.op, c.ranks, c.bytes, t);
    }
  }
  for (auto& [key, f] : by) {
    // The fastest time among the small messages, or at the smallest size.
    int64_t smallest = INT64_MAX;
    for (const CollectiveTiming& c : rows)
      if (c.op == f.op && c.ranks == f.group_size) smallest = std::min(smallest, c.bytes);
    const int64_t limit = std::max(kLatencyBytes, smallest);
    double best = 0;
    for (const CollectiveTiming& c : rows) {
      if (c.op != f.op || c.ranks != f.group_size || c.bytes > limit) continue;
      const double us = SecondsPerOp(c.run) * 1e6;
      if (best == 0 || us < best) best = us;
    }
    f.latency_us = best;
  }
  std::vector<CollectiveFigure> out;
  for (const auto& [key, f] : by) out.push_back(f);
  return out;
}

}  // namespace

double BusBandwidthGbps(const std::string& op, int ranks, int64_t bytes, double seconds_per_op) {
  if (!(seconds_per_op > 0) || ranks < 1) return 0;
  const double algbw = static_cast<double>(bytes) / seconds_per_op / 1e9;
  const double n = ranks;
  if (op == "all_reduce") return algbw * 2 * (n - 1) / n;
  if (op == "send_recv") return algbw;
  return algbw * (n - 1) / n;  // all_gather, reduce_scatter, all_to_all
}

namespace {

// The burst time a series spent: for each leading call above the margin,
// the share of it that ran at the burst rate, from how much sooner than the
// sustained rate it ended (t_sustained - t = x (ratio - 1)), so a call the
// budget ran out inside counts only its burst part.
double BurstSpentMs(const std::vector<double>& calls, double flops, double sustained_tflops,
                    double ratio) {
  double spent_s = 0;
  for (double t : calls) {
    const double t_sustained = flops / (sustained_tflops * 1e12);
    if (t_sustained <= kBurstMargin * t) break;
    spent_s += std::min(t, (t_sustained - t) / (ratio - 1));
  }
  return spent_s * 1e3;
}

}  // namespace

BurstFigure BurstOf(const BurstTiming& b) {
  BurstFigure f;
  const std::vector<double>& calls = b.call_seconds;
  if (calls.empty()) return f;
  const double flops = b.shape.flops();
  for (double s : calls) f.series_ms += s * 1e3;
  f.gaps = static_cast<int>(b.refills.size());
  for (const RefillTiming& r : b.refills)
    f.longest_gap_ms = std::max(f.longest_gap_ms, r.idle_s * 1e3);
  std::vector<double> tail;
  for (size_t i = calls.size() / 2; i < calls.size(); ++i) tail.push_back(flops / calls[i] / 1e12);
  f.sustained_tflops = Median(tail);
  auto rate = [&](double seconds) { return flops / seconds / 1e12; };
  size_t lead = 0;
  while (lead < calls.size() / 2 && rate(calls[lead]) > kBurstMargin * f.sustained_tflops) ++lead;
  if (lead == 0) return f;
  // The burst rate from the calls that ran wholly inside it: all the fast
  // ones but the last, which the budget may have run out inside (one fast
  // call alone gives a lower bound). The window is the burst time spent.
  const size_t whole = lead > 1 ? lead - 1 : 1;
  double whole_s = 0;
  for (size_t i = 0; i < whole; ++i) whole_s += calls[i];
  f.burst_tflops = flops * static_cast<double>(whole) / whole_s / 1e12;
  const double ratio = f.burst_tflops / f.sustained_tflops;
  f.window_ms = BurstSpentMs(calls, flops, f.sustained_tflops, ratio);
  // The payback: the slow calls that follow, past at most one call the
  // payback started inside (within the margin of the sustained rate).
  auto slow = [&](size_t i) { return rate(calls[i]) * kBurstMargin < f.sustained_tflops; };
  size_t first = lead;
  if (first < calls.size() && !slow(first)) ++first;
  double payback_s = 0;
  size_t count = 0;
  for (size_t i = first; i < calls.size() && slow(i); ++i, ++count) payback_s += calls[i];
  if (count > 0) {
    f.payback_ms = payback_s * 1e3;
    f.payback_tflops = flops * static_cast<double>(count) / payback_s / 1e12;
  }
  // The refill: each series after a gap starts from the sustained state the
  // series before it ended in, so what it spends is what the gap refilled.
  // A gap that bought back too little to show (no call above the margin)
  // says nothing; one that refilled the window (90% of it) gives a lower
  // bound, which the ratio never falls below.
  std::vector<double> partial;
  double at_least = 0;
  bool any = false;
  for (const RefillTiming& r : b.refills) {
    const double spent_ms = BurstSpentMs(r.call_seconds, flops, f.sustained_tflops, ratio);
    if (spent_ms <= 0) continue;
    any = true;
    const double per_ms = spent_ms / (r.idle_s * 1e3);
    if (spent_ms >= 0.9 * f.window_ms)
      at_least = std::max(at_least, per_ms);
    else
      partial.push_back(per_ms);
  }
  if (!partial.empty()) {
    f.refill_ratio = std::max(Median(partial), at_least);
  } else if (any) {
    f.refill_ratio = at_least;
    f.refill_at_least = true;
  } else if (!b.refills.empty()) {
    f.refill_ratio = 0;  // no gap up to the longest bought back a burst that shows
  }
  return f;
}

NodeFigures FiguresOf(const NodeResult& r, const hardware::HardwareProfile& base) {
  NodeFigures f;
  f.node = r.node;
  const int sm_count = r.sm_count > 0 ? r.sm_count : base.sm_count;
  if (r.copy)
    f.copy_gbps = 2.0 * static_cast<double>(r.copy->bytes) / SecondsPerOp(r.copy->run) / 1e9;
  const double bytes_per_s = (f.copy_gbps ? *f.copy_gbps : base.memory_bw_gbps) * 1e9;
  for (const GemmTiming& g : r.gemm) {
    ShapeRate s;
    s.shape = g.shape;
    s.measured_tflops = g.shape.flops() / SecondsPerOp(g.run) / 1e12;
    cost::GemmShape shape;
    shape.m = g.shape.m;
    shape.n = g.shape.n;
    shape.k = g.shape.k;
    s.efficiency = cost::BestEfficiency(shape, sm_count).total();
    s.implied_tflops = s.efficiency > 0 ? s.measured_tflops / s.efficiency : s.measured_tflops;
    f.shapes.push_back(s);
  }
  // The ridge of the roofline at the best rate any shape implies: a shape
  // whose FLOPs per byte fall below it is paced by DRAM, whatever it implies.
  double largest = 0;
  for (const ShapeRate& s : f.shapes) largest = std::max(largest, s.implied_tflops);
  std::vector<double> implied;
  for (ShapeRate& s : f.shapes) {
    s.memory_bound = s.shape.flops() / GemmBytes(s.shape) < largest * 1e12 / bytes_per_s;
    if (!s.memory_bound) implied.push_back(s.implied_tflops);
  }
  if (!implied.empty())
    f.bf16_tflops = Median(implied);
  else if (largest > 0)
    f.bf16_tflops = largest;
  if (r.burst) f.burst = BurstOf(*r.burst);
  if (r.launch) f.launch_us = SecondsPerOp(r.launch->run) / r.launch->kernels * 1e6;
  std::vector<CollectiveTiming> local, p2p;
  for (const CollectiveTiming& c : r.collectives) (c.op == "send_recv" ? p2p : local).push_back(c);
  f.collectives = CollectiveFiguresOf(local);
  for (const CollectiveFigure& c : CollectiveFiguresOf(p2p)) {
    f.p2p_gbps = c.busbw_gbps;
    f.p2p_latency_us = c.latency_us;
  }
  return f;
}

ProbeFigures Summarize(const std::vector<NodeResult>& results,
                       const std::vector<CollectiveTiming>& cross,
                       const hardware::HardwareProfile& base) {
  ProbeFigures p;
  for (const NodeResult& r : results) p.nodes.push_back(FiguresOf(r, base));
  p.bf16_tflops = MedianOf(p.nodes, &NodeFigures::bf16_tflops, &p.bf16_spread);
  p.copy_gbps = MedianOf(p.nodes, &NodeFigures::copy_gbps, &p.copy_spread);
  p.launch_us = MedianOf(p.nodes, &NodeFigures::launch_us, nullptr);
  p.p2p_gbps = MedianOf(p.nodes, &NodeFigures::p2p_gbps, nullptr);
  p.p2p_latency_us = MedianOf(p.nodes, &NodeFigures::p2p_latency_us, nullptr);
  // The cost model reaches memory_bw_eff of the profile's rate: the rate that
  // makes it reach the measured copy at the prior's centre.
  if (p.copy_gbps) p.memory_bw_gbps = *p.copy_gbps / cost::Info(cost::Param::kMemory).nominal;
  // The burst of the node whose sustained rate is the median.
  std::vector<BurstFigure> bursts;
  for (const NodeFigures& n : p.nodes)
    if (n.burst) bursts.push_back(*n.burst);
  if (!bursts.empty()) {
    std::sort(bursts.begin(), bursts.end(), [](const BurstFigure& a, const BurstFigure& b) {
      return a.sustained_tflops < b.sustained_tflops;
    });
    p.burst = bursts[bursts.size() / 2];
  }
  std::map<std::pair<std::string, int>, std::vector<CollectiveFigure>> by;
  for (const NodeFigures& n : p.nodes)
    for (const CollectiveFigure& c : n.collectives) by[{c.op, c.group_size}].push_back(c);
  for (const auto& [key, list] : by) {
    CollectiveFigure m = list.front();
    std::vector<double> bw, lat;
    for (const CollectiveFigure& c : list) {
      bw.push_back(c.busbw_gbps);
      lat.push_back(c.latency_us);
    }
    m.busbw_gbps = Median(bw);
    m.latency_us = Median(lat);
    p.collectives.push_back(m);
  }
  for (const CollectiveFigure& c : CollectiveFiguresOf(cross)) {
    if (c.op != "send_recv") continue;
    p.nic_gbps = c.busbw_gbps;
    p.inter_latency_us = c.latency_us;
  }
  return p;
}

}  // namespace ppsearch::probe
