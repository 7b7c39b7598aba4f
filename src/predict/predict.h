#pragma once
// Predicting one point (layout x concurrency) of a search: the planner's
// layout, the memory model, the cost model and the engine model put together.
// Pure: the same inputs give the same prediction.
//
// Sealed: a point's model is built only by BuildPointModel and predicted only
// by PredictPoint / PredictEachInstance (and predict/search_points.h above them);
// the pieces they assemble live in predict/point_parts.h, which only this
// folder includes (tests/layering_test.cc).

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "cost/layout_cost.h"
#include "memory/memory_interval.h"
#include "memory/memory_model.h"
#include "nsys/compute_kernels.h"
#include "plan/plan.h"
#include "sim/engine.h"
#include "spec/spec.h"
#include "stats/stats.h"

namespace ppsearch::predict {

struct PointOptions {
  int concurrency = 1;
  uint64_t seed = 1;
  bool keep_trace = false;
  // Every decode step simulated as its own event (sim::SimOptions::step_by_step).
  bool step_by_step = false;
  // Each token's arrival in the records (sim::SimOptions::token_times): the
  // inter-token latencies need them, nothing else does.
  bool token_times = true;
  // Overrides the spec's pp-max-micro-batch-size (0: use the spec / default).
  int pp_max_micro_batch_size = 0;
};

// Per-stage shares of the sample window.
struct StageShare {
  double compute = 0, exposed_comm = 0, transfer = 0, overhead = 0, idle = 0;
  // Of compute, by class (sim::StageTime): dense GEMMs, routed experts,
  // attention cores; other = compute - the three.
  double gemm = 0, moe = 0, attention = 0;
  double other() const { return std::max(compute - gemm - moe - attention, 0.0); }
};

// A stage's compute by class, in nsys::kAllComputeClasses' order (the
// classes `ppsearch nsys` sorts a profile's kernels into), and the mean over
// a point's stages: what a profile's per-GPU class shares are set against.
std::array<double, nsys::kComputeClasses> ClassShares(const StageShare& s);
std::array<double, nsys::kComputeClasses> MeanClassShares(const std::vector<StageShare>& stages);

struct PointPrediction {
  spec::LayoutSpec layout;
  int concurrency = 0;
  stats::SampleMetrics metrics;
  sim::SimResult sim;
  memory::MemoryPlan memory;
  // What the GPUs hold once the point's batches have run (memory/served.h):
  // the pools as `memory` sizes them, the activations of the largest batch
  // the simulation launched. A simulated engine's GPU snapshots show this.
  memory::MemoryPlan served_memory;
  // Per stage: the peak's interval from the memory model's estimated terms
  // and its measured model form (memory/memory_interval.h).
  std::vector<memory::StagePeakInterval> memory_interval;
  std::vector<StageShare> stage_shares;
  // Mean over stages of (exposed collectives + activation all-gather) / window:
  // the quantity an Nsight profile's "exposed NCCL share" measures.
  double exposed_comm_share = 0;
  double bubble_share = 0;  // mean idle share over stages
  int allreduce_per_forward = 0;
  int alltoall_per_forward = 0;  // DeepEP dispatch + combine
  // The scheduler settings the point was simulated with (one DP rank's).
  sim::SchedulerConfig scheduler;
};

// Everything one layout's server is modelled with, the calibration applied:
// SGLang's memory sizing (the calibrated workspace included), the cost model
// of its operators and links, and the scheduler's settings from the plan's
// engine configuration. What PredictPoint simulates, and what serve-sim
// runs in real time.
struct PointModel {
  memory::MemoryInputs memory_inputs;
  memory::MemoryPlan memory;
  // Per stage: the peak's interval from the memory model's estimated terms
  // and its measured model form (memory/memory_interval.h).
  std::vector<memory::StagePeakInterval> memory_interval;
  // Refers to the model and hardware it was built from: they must outlive it.
  std::unique_ptr<cost::LayoutCostModel> cost;
  sim::SchedulerConfig scheduler;
};

// `pp_max_micro_batch_size_override` > 0 replaces the engine's setting.
PointModel BuildPointModel(const plan::LayoutPlan& plan, const spec::Spec& spec,
                           const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                           const cost::Calibration& calibration,
                           int pp_max_micro_batch_size_override = 0);

workload::WorkloadParams WorkloadFor(const spec::Spec& spec, int concurrency, uint64_t seed);

// Why the simulator cannot predict this planned layout (a valid one SGLang
// would run), or nullopt when it can. DP attention is modelled at PP 1 (dp
// schedulers stepping together, sim/dp_scheduler.h; the MoE's gather and
// scatter, cost/dp_step.cc); with PP it is not.
std::optional<std::string> NotModelled(const plan::LayoutPlan& plan);

// A layout's instances and the share of the load each serves: the distinct
// shares (busiest first) and how many instances serve each. The router
// splits the requests in flight evenly (workload::SplitEvenly: the first
// C mod n instances carry one more), and the requests and the request rate
// in proportion; without a cap (concurrency 0) it splits the requests
// evenly, each instance uncapped. An instance left without requests is
// idle and not listed.
struct InstanceShares {
  std::vector<workload::WorkloadParams> shares;
  std::vector<int> copies;
};
InstanceShares SplitOverInstances(const workload::WorkloadParams& w, int instances);

// The layout's figures from its instances' (`kinds`, busiest first, each
// served by `copies` instances): counts and throughputs summed, the duration
// the longest, latency figures the busiest instance's.
stats::SampleMetrics CombineInstances(const std::vector<stats::SampleMetrics>& kinds,
                                      const std::vector<int>& copies);

// Every instance of the layout at its share of the point's load, in
// instance order (one entry with a single instance): what the simulated
// engine turns into each instance's evidence. An instance left idle (C
// below the instance count) has the busiest's memory and no requests.
std::vector<PointPrediction> PredictEachInstance(const plan::LayoutPlan& plan,
                                                 const spec::Spec& spec,
                                                 const model::ModelDesc& model,
                                                 const hardware::HardwareProfile& hw,
                                                 const cost::Calibration& calibration,
                                                 const PointOptions& options);

// With several instances (plan.layout.instances), each instance is predicted
// at its share of the load (SplitOverInstances) and the figures combined
// (CombineInstances); memory, stage shares and the trace are the busiest
// instance's.
PointPrediction PredictPoint(const plan::LayoutPlan& plan, const spec::Spec& spec,
                             const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                             const cost::Calibration& calibration, const PointOptions& options);

}  // namespace ppsearch::predict
