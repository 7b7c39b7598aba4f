#pragma once
// The probe's timings as the hardware profile's figures, each with one
// definition: nccl-tests' bus bandwidth, the GEMM model's efficiency for
// the rate a shape implies, the cost model's prior for what a copy implies
// of the DRAM rate. Per node, then the median over the nodes. Pure.

#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "probe/node_result.h"

namespace ppsearch::probe {

// One GEMM shape's measured rate and what it implies of the sustained rate.
struct ShapeRate {
  GemmShape shape;
  double measured_tflops = 0;
  double efficiency = 1;      // cost::BestEfficiency's total for the shape
  double implied_tflops = 0;  // measured / efficiency
  bool memory_bound = false;  // below the roofline's ridge: says nothing of the tensor rate
};

// The tensor budget (cost/tensor_burst.h) as one node's calls show it.
struct BurstFigure {
  double sustained_tflops = 0;  // the second half of the calls, median
  double burst_tflops = 0;      // the leading calls above 1.05 x sustained (0: none)
  double window_ms = 0;         // how long they lasted
  double series_ms = 0;         // how long the calls ran in all
  // The calls right after the burst below sustained / 1.05: the payback
  // (0: none, or no burst to pay back).
  double payback_tflops = 0;
  double payback_ms = 0;
  // Burst time regained per second of idle, from the series after short
  // gaps (unset: no burst, or no gap run). `refill_at_least`: every gap
  // refilled the whole window, so the ratio is a lower bound.
  std::optional<double> refill_ratio;
  bool refill_at_least = false;
  double longest_gap_ms = 0;  // the longest gap timed (0: none)
  int gaps = 0;               // how many gaps were timed
};

// A node-local collective's nccl-tests figures for one group size.
struct CollectiveFigure {
  std::string op;
  int group_size = 0;
  double busbw_gbps = 0;  // at the largest message
  int64_t largest_bytes = 0;
  double latency_us = 0;  // the fastest at <= 4 KiB (else at the smallest message)
};

struct NodeFigures {
  std::string node;
  std::vector<ShapeRate> shapes;
  std::optional<double> bf16_tflops;  // median implied rate of the compute-bound shapes
  std::optional<double> copy_gbps;    // bytes read + written per second
  std::optional<BurstFigure> burst;
  std::optional<double> launch_us;  // per kernel replayed from a CUDA graph
  std::vector<CollectiveFigure> collectives;
  std::optional<double> p2p_gbps, p2p_latency_us;
};

struct ProbeFigures {
  std::vector<NodeFigures> nodes;
  // The median over the nodes (every node's own in `nodes`), and the spread
  // (max / min - 1) where nodes differ.
  std::optional<double> bf16_tflops, copy_gbps, launch_us, p2p_gbps, p2p_latency_us;
  double bf16_spread = 0, copy_spread = 0;
  std::optional<double> memory_bw_gbps;       // copy_gbps / the memory_bw_eff prior's centre
  std::optional<BurstFigure> burst;           // the median node's burst
  std::vector<CollectiveFigure> collectives;  // median busbw and latency per op and size
  // Between nodes (the cross phase): one direction of a ping-pong.
  std::optional<double> nic_gbps, inter_latency_us;
};

// nccl-tests' bus bandwidth (doc/PERFORMANCE.md): the algorithm bandwidth
// (bytes / time) times 2(n-1)/n for all_reduce, (n-1)/n for all_gather,
// reduce_scatter and all_to_all, 1 for send_recv. GB/s.
double BusBandwidthGbps(const std::string& op, int ranks, int64_t bytes, double seconds_per_op);

// The leading burst of a call-by-call series (each call `flops`).
BurstFigure BurstOf(const BurstTiming& burst);

NodeFigures FiguresOf(const NodeResult& result, const hardware::HardwareProfile& base);

// Every node's figures and their medians; `cross` are the cross phase's
// rows from the first node (empty: one node, or not run).
ProbeFigures Summarize(const std::vector<NodeResult>& results,
                       const std::vector<CollectiveTiming>& cross,
                       const hardware::HardwareProfile& base);

}  // namespace ppsearch::probe
