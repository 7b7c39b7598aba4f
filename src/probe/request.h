#pragma once
// What `ppsearch probe` asks each node to measure: the model's own GEMM
// shapes at the layouts' splits, a copy for DRAM bandwidth, a burst after
// idle, the collectives over the message sizes the layouts use. Sent to
// probe_script.py as one JSON argument; pure data and arithmetic.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/model.h"
#include "spec/spec.h"

namespace ppsearch::probe {

// One GEMM of one rank: m tokens x k input features -> n output features.
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  std::string dtype = "bf16";  // what the script times it in ("bf16")
  std::string what;            // where the model runs it: "layer 3 kv_b_proj at TP 8"

  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * k; }
};

struct ProbeRequest {
  std::vector<GemmShape> gemm_shapes;
  double seconds = 0.5;  // timed per GEMM shape and for the copy
  int max_iterations = 2000;
  double idle_s = 2;     // the tensor cores idle this long before the burst
  double burst_s = 0.5;  // the burst's GEMM is timed call by call this long
  // Then, after each of these gaps, timed again for refill_s: how much burst
  // that much idle buys back (the window's refill ratio).
  std::vector<double> refill_gaps_s = {0.0005, 0.002, 0.008, 0.032};
  double refill_s = 0.15;
  int64_t copy_bytes = int64_t{1} << 30;
  std::vector<std::string> collective_ops = {"all_reduce", "all_gather", "reduce_scatter",
                                             "all_to_all"};
  std::vector<int64_t> collective_bytes;
  double collective_seconds = 0.2;  // timed per operation and size
  std::vector<int> group_sizes;     // node-local groups (capped at the GPUs present)
  double group_timeout_s = 300;
  bool cpu = false;  // measure on the CPU even where CUDA is present
  int cpu_threads = 1;
};

// The GEMMs of `model` at `tokens` tokens per forward, for every layout's
// TP (and DP-attention) split: each distinct (m, n, k) once, the largest
// `limit` by FLOPs. Routed experts run tokens x top_k / experts rows each.
std::vector<GemmShape> ModelGemmShapes(const model::ModelDesc& model,
                                       const std::vector<spec::LayoutSpec>& layouts, int64_t tokens,
                                       size_t limit);

// Node-local group sizes worth measuring: 2, 4, ... up to the GPUs per
// node, and the GPUs per node itself.
std::vector<int> GroupSizes(int gpus_per_node);

// Message sizes from `smallest` to `largest` bytes, x16 apart, both included.
std::vector<int64_t> MessageSizes(int64_t smallest, int64_t largest);

// The script's argument for a node-local probe.
nlohmann::json RequestJson(const ProbeRequest& request);

// The script's argument for the cross-node phase: rank `rank` of `world`
// processes meeting at master:port.
nlohmann::json CrossRequestJson(const ProbeRequest& request, const std::string& master, int port,
                                int rank, int world, double timeout_s);

}  // namespace ppsearch::probe
