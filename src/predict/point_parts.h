#pragma once
// The pieces BuildPointModel (predict.h) assembles a point's model from.
// Only src/predict/ includes this header (tests/layering_test.cc): everything
// else gets a point's model whole, so no caller can leave a piece out.

#include <vector>

#include "cost/calibration.h"
#include "cost/layout_cost.h"
#include "memory/memory_model.h"
#include "model/model.h"
#include "plan/plan.h"
#include "sim/scheduler.h"
#include "spec/spec.h"

namespace ppsearch::predict {

struct PointModel;
// BuildPointModel from the server's memory inputs as the caller resolved
// them (a disaggregated pool's, plan::PoolMemoryInputs); the calibrated
// workspace is applied here.
PointModel BuildPointModelFrom(const plan::LayoutPlan& plan, memory::MemoryInputs memory_inputs,
                               const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                               const cost::Calibration& calibration,
                               int pp_max_micro_batch_size_override);

cost::LayoutShape ShapeFromPlan(const plan::LayoutPlan& plan);
memory::MemoryInputs MemoryInputsFor(const plan::LayoutPlan& plan, const spec::Spec& spec,
                                     const model::ModelDesc& model,
                                     const hardware::HardwareProfile& hw);
sim::SchedulerConfig SchedulerConfigFor(const plan::LayoutPlan& plan, const model::ModelDesc& model,
                                        const memory::MemoryPlan& memory,
                                        int pp_max_micro_batch_size_override);
// The decode batch sizes the layout's server captures as CUDA graphs (none
// with disable-cuda-graph), for cost::LayoutShape::decode_graph_batch_sizes.
std::vector<int> DecodeGraphBatchSizes(const plan::EngineConfig& engine,
                                       const memory::MemoryInputs& memory_inputs,
                                       const memory::MemoryPlan& memory);

}  // namespace ppsearch::predict
