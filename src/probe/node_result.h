#pragma once
// What probe_script.py printed on one node, typed: the timings as measured,
// no rate computed yet (figures.h does that). The format's one reader.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probe/request.h"
#include "util/result.h"

namespace ppsearch::probe {

struct TimedRun {
  int64_t iterations = 0;
  double seconds = 0;
};

struct GemmTiming {
  GemmShape shape;
  TimedRun run;
};

// One GEMM timed call by call after `idle_s` of idle tensor cores.
// The same GEMM timed again after a short gap (the gap as measured).
struct RefillTiming {
  double idle_s = 0;
  std::vector<double> call_seconds;
};

struct BurstTiming {
  GemmShape shape;
  double idle_s = 0;
  std::vector<double> call_seconds;
  std::vector<RefillTiming> refills;  // in the order run
};

struct CopyTiming {
  int64_t bytes = 0;  // read, and written, per copy
  TimedRun run;
};

struct LaunchTiming {
  int kernels = 0;  // per replay of the graph
  TimedRun run;
};

// A collective (or "send_recv" ping-pong) over `ranks` processes with a
// `bytes` buffer (nccl-tests' size convention).
struct CollectiveTiming {
  std::string op;
  int ranks = 0;
  int64_t bytes = 0;
  TimedRun run;
};

struct Skipped {
  std::string what;
  std::string why;
};

struct NodeResult {
  std::string node;      // the spec's host name
  std::string hostname;  // what the node calls itself
  std::string torch;
  std::string device;  // "cuda" or "cpu"
  std::string device_name;
  std::string cuda;  // CUDA version, "" on the CPU
  int device_count = 0;
  int sm_count = 0;
  double memory_mib = 0;
  std::vector<GemmTiming> gemm;
  std::optional<BurstTiming> burst;
  std::optional<CopyTiming> copy;
  std::optional<LaunchTiming> launch;
  std::vector<CollectiveTiming> collectives;  // node-local
  std::vector<CollectiveTiming> cross;        // between nodes (the cross phase)
  std::vector<Skipped> skipped;

  bool on_gpu() const { return device == "cuda"; }
};

// The script's output on `node`: its last non-empty line is the JSON object.
// An error names the node and the key.
Result<NodeResult> ParseNodeOutput(const std::string& node, const std::string& output);

}  // namespace ppsearch::probe
