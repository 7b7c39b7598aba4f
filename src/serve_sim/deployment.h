#pragma once
// What a serve-sim process simulates: the model, GPUs, layout plan, memory
// plan, cost model and scheduler settings of one SGLang deployment, built
// from the launch arguments the same way `ppsearch simulate` builds a point
// (plan::PlanLayout, predict::ShapeFromPlan, memory::PlanMemory,
// cost::LayoutCostModel, predict::SchedulerConfigFor).

#include <memory>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "cost/layout_cost.h"
#include "hardware/hardware.h"
#include "memory/memory_model.h"
#include "memory/served.h"
#include "model/model.h"
#include "nvidia_smi/gpu_memory.h"
#include "plan/plan.h"
#include "serve_sim/server_args.h"
#include "sim/scheduler.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::serve_sim {

struct Deployment {
  spec::Spec spec;  // built in code: nnodes hosts node0.., gpus_per_node = tp * pp / nnodes
  model::ModelDesc model;
  hardware::HardwareProfile hw;
  cost::Calibration calibration;
  plan::LayoutPlan plan;
  memory::MemoryInputs memory_inputs;  // what `memory` was planned from
  memory::MemoryPlan memory;
  std::unique_ptr<cost::LayoutCostModel> cost;  // refers to model and hw above
  sim::SchedulerConfig scheduler;
  int pp_max_micro_batch_size = 0;  // resolved

  Deployment() = default;
  Deployment(const Deployment&) = delete;
  Deployment& operator=(const Deployment&) = delete;
};

// The experiment spec serve-sim's arguments describe.
spec::Spec SpecFromArgs(const ServerArgs& args);

// Loads the model, hardware profile and calibration and plans the layout.
// Errors: unreadable config/profile/calibration, or a layout SGLang rejects
// (the planner's messages).
Result<std::unique_ptr<Deployment>> BuildDeployment(const ServerArgs& args);

// The pipeline stages with ranks on `node`, ascending.
std::vector<int> StagesOnNode(const Deployment& d, int node);

// The deployment's memory once it has run `served` (memory/served.h): the
// pools as planned, the activations of those batches.
memory::MemoryPlan ServedMemory(const Deployment& d, const memory::ServedBatches& served);

// What nvidia-smi would print for `node`'s GPUs: each rank at its stage's
// peak in `memory` (ServedMemory) but never above the GPU (a stage above it
// stops the server first), the profile's total and name, and the uuids
// smi-sim gives `gpu_state_dir`'s GPUs (gpu_registry.h; per node without one).
std::vector<nvidia_smi::GpuMemory> NodeGpuMemory(const Deployment& d,
                                                 const memory::MemoryPlan& memory, int node,
                                                 const std::string& gpu_state_dir = "");

}  // namespace ppsearch::serve_sim
