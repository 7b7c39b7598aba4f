#include "predict/predict.h"

#include <algorithm>
#include <utility>

#include "cost/decode_step.h"
#include "memory/served.h"
#include "memory/sglang_reserve.h"
#include "plan/disaggregation.h"
#include "predict/point_parts.h"
#include "workload/instance_split.h"

namespace ppsearch::predict {

std::optional<std::string> NotModelled(const plan::LayoutPlan& plan) {
  const std::string& a2a = plan.engine.moe_a2a_backend;
  const std::string& deepep_mode = plan.engine.deepep_mode;
  const std::string measure = "; plan it, or measure it with --engine sglang";
  if (a2a != "none" && a2a != "deepep")
    return plan.layout.Label() + " runs moe-a2a-backend \"" + a2a +
           "\", which the simulator does not model (it costs \"none\" and \"deepep\")" + measure;
  if (a2a == "deepep" && deepep_mode != "auto" && deepep_mode != "normal" &&
      deepep_mode != "low_latency")
    return "deepep-mode \"" + deepep_mode +
           "\" is not one of SGLang's modes (auto, normal, low_latency)";
  if (a2a == "deepep" && plan.layout.pp > 1)
    return plan.layout.Label() +
           " runs DeepEP with pipeline parallelism, which the simulator does not model (a MoE "
           "layer leaves its tokens scattered over the TP group, and SGLang has passed only "
           "1/tp of them across a stage boundary: sgl-project/sglang#17823)" +
           measure;
  if (a2a == "deepep" && plan.layout.dp > 1)
    return plan.layout.Label() +
           " runs DeepEP with DP attention, which the simulator does not model (it dispatches "
           "each DP rank's own tokens instead of gathering them)" +
           measure;
  if (plan.layout.dp <= 1 || plan.layout.pp <= 1) return std::nullopt;
  return plan.layout.Label() +
         " runs DP attention with pipeline parallelism, which the simulator does not model "
         "(its DP ranks step together at PP 1 only; SGLang itself crashes on this "
         "combination's warm-up request)" +
         measure;
}

cost::LayoutShape ShapeFromPlan(const plan::LayoutPlan& plan) {
  cost::LayoutShape shape;
  shape.pp = plan.layout.pp;
  shape.tp = plan.layout.tp;
  shape.ep = plan.layout.ep;
  shape.dp = std::max(plan.layout.dp, 1);
  const plan::EngineConfig& engine = plan.engine;
  shape.deepep = engine.moe_a2a_backend == "deepep";
  if (engine.deepep_mode == "normal") shape.deepep_mode = cost::DeepEpMode::kNormal;
  if (engine.deepep_mode == "low_latency") shape.deepep_mode = cost::DeepEpMode::kLowLatency;
  shape.deepep_bf16_dispatch = plan::DeepEpDispatchesBf16(engine);
  shape.mla_prefill = cost::MlaPrefillRuleFor(
      plan.prefill_attention_backend, engine.chunked_prefix_cache_threshold,
      engine.disable_chunked_prefix_cache, engine.flashinfer_mla_disable_ragged);
  for (const auto& st : plan.stages) {
    cost::StageShape s;
    s.first_layer = st.first_layer;
    s.end_layer = st.end_layer;
    s.has_embedding = st.has_embedding;
    s.has_lm_head = st.has_lm_head;
    s.tp_nodes = std::max(st.collectives.nodes_spanned, 1);
    // Stages whose TP groups sit on the same node(s) share its fabric.
    for (const auto& other : plan.stages)
      if (&other != &st && other.nodes == st.nodes) ++s.groups_per_node;
    shape.stages.push_back(s);
  }
  for (const auto& b : plan.boundaries)
    if (b.from_stage >= 0 && b.from_stage < static_cast<int>(shape.stages.size()))
      shape.stages[b.from_stage].hop_crosses_nodes = b.crosses_nodes();
  return shape;
}

memory::MemoryInputs MemoryInputsFor(const plan::LayoutPlan& plan, const spec::Spec& spec,
                                     const model::ModelDesc& model,
                                     const hardware::HardwareProfile& hw) {
  // A server of a disaggregated pool (--disaggregation-mode prefill or
  // decode) sets memory aside as SGLang sizes a PD server of its mode.
  const plan::PdSettings pd = plan::ResolvePdSettings(spec.engine);
  if (pd.mode == "prefill" || pd.mode == "decode")
    return plan::PoolMemoryInputs(plan, pd, spec, model, hw);
  return plan::StageMemoryInputs(plan, spec, model, hw);
}

sim::SchedulerConfig SchedulerConfigFor(const plan::LayoutPlan& plan, const model::ModelDesc& model,
                                        const memory::MemoryPlan& memory, int mbs_override) {
  const plan::EngineConfig& engine = plan.engine;
  sim::SchedulerConfig c;
  c.pp_size = plan.layout.pp;
  c.num_slots = plan.layout.pp + engine.pp_async_batch_depth;
  c.chunked_prefill_size = engine.chunked_prefill_size;
  c.max_prefill_tokens = engine.max_prefill_tokens;
  c.max_running_requests = std::max(memory.max_running_requests, 1);
  c.pp_max_micro_batch_size = mbs_override > 0 ? mbs_override : engine.pp_max_micro_batch_size;
  // Only a model that caches nothing per token has no pool limit; a layout
  // that leaves no room for its KV pool is rejected by the planner
  // (plan/layout_checks.cc CheckKvRoom), as SGLang refuses to start it.
  c.max_total_tokens = memory.max_total_tokens > 0 ? memory.max_total_tokens : (int64_t{1} << 40);
  c.page_size = engine.page_size;
  c.context_len = plan::ContextLength(engine, model);
  c.dynamic_chunking.enabled = engine.enable_dynamic_chunking;
  c.dynamic_chunking.smooth_factor = engine.dynamic_chunk_smooth_factor;
  c.overlap_schedule = plan.layout.pp == 1 && !engine.disable_overlap_schedule;
  c.dp_size = std::max(plan.layout.dp, 1);
  if (c.dp_size > 1) {
    // Each DP rank's scheduler gets chunked_prefill_size // dp
    // (server_args.py _handle_data_parallelism) and max_running_requests //
    // dp of a user's cap (pool_configurator.py: requested
    // max_running_requests per worker); its KV pool is its own GPU's.
    c.chunked_prefill_size = engine.SchedulerChunk(c.dp_size);
    if (const std::optional<int> cap = engine.max_running_requests)
      c.max_running_requests =
          std::max(std::min<int>(c.max_running_requests, static_cast<int>(*cap / c.dp_size)), 1);
  }
  return c;
}

std::vector<int> DecodeGraphBatchSizes(const plan::EngineConfig& engine,
                                       const memory::MemoryInputs& memory_inputs,
                                       const memory::MemoryPlan& memory) {
  if (engine.disable_cuda_graph) return {};
  return cost::DecodeCaptureBatchSizes(memory::DecodeGraphMaxBs(memory_inputs),
                                       memory.max_running_requests);
}

PointModel BuildPointModel(const plan::LayoutPlan& plan, const spec::Spec& spec,
                           const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                           const cost::Calibration& calibration,
                           int pp_max_micro_batch_size_override) {
  return BuildPointModelFrom(plan, MemoryInputsFor(plan, spec, model, hw), model, hw, calibration,
                             pp_max_micro_batch_size_override);
}

PointModel BuildPointModelFrom(const plan::LayoutPlan& plan, memory::MemoryInputs memory_inputs,
                               const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                               const cost::Calibration& calibration,
                               int pp_max_micro_batch_size_override) {
  PointModel m;
  m.memory_inputs = std::move(memory_inputs);
  m.memory_inputs.workspace_mib = calibration.Get(cost::Param::kWorkspace);
  m.memory = memory::PlanMemory(m.memory_inputs);
  m.memory_interval = memory::StagePeakIntervals(m.memory_inputs, memory::DefaultMemoryTermRange());
  cost::LayoutShape shape = ShapeFromPlan(plan);
  shape.decode_graph_batch_sizes = DecodeGraphBatchSizes(plan.engine, m.memory_inputs, m.memory);
  m.cost = std::make_unique<cost::LayoutCostModel>(model, hw, shape, calibration);
  m.scheduler = SchedulerConfigFor(plan, model, m.memory, pp_max_micro_batch_size_override);
  return m;
}

workload::WorkloadParams WorkloadFor(const spec::Spec& spec, int concurrency, uint64_t seed) {
  workload::WorkloadParams w;
  w.num_requests = spec.workload.requests;
  w.concurrency = concurrency;
  w.input_tokens = spec.workload.input_tokens;
  w.output_tokens = spec.workload.output_tokens;
  w.range_ratio = spec.workload.input_distribution == "fixed" ? 1.0 : spec.workload.range_ratio;
  w.output_range_ratio =
      spec.workload.output_distribution == "fixed" ? 1.0 : spec.workload.output_range_ratio;
  w.lengths = spec.workload.lengths;
  w.request_rate = spec.workload.request_rate;
  w.seed = seed;
  return w;
}

namespace {

// One instance serving `w` (its share of the load).
PointPrediction PredictInstance(const plan::LayoutPlan& plan, const spec::Spec& spec,
                                const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                                const cost::Calibration& calibration, const PointOptions& options,
                                const workload::WorkloadParams& w) {
  PointPrediction p;
  p.layout = plan.layout;
  p.concurrency = options.concurrency;
  p.allreduce_per_forward = plan.allreduce_per_forward;
  p.alltoall_per_forward = plan.alltoall_per_forward;
  PointModel m =
      BuildPointModel(plan, spec, model, hw, calibration, options.pp_max_micro_batch_size);
  p.memory = m.memory;
  p.memory_interval = std::move(m.memory_interval);
  p.scheduler = m.scheduler;
  auto requests = workload::PlanRequests(w);
  sim::SimOptions sim_options;
  sim_options.keep_trace = options.keep_trace;
  sim_options.step_by_step = options.step_by_step;
  sim_options.token_times = options.token_times;
  // With a request rate the concurrency caps the requests in flight, as the
  // benchmark client's does (0: no cap).
  p.sim = sim::Simulate(m.scheduler, *m.cost, requests, w.concurrency, sim_options);
  p.served_memory = memory::PlanServedMemory(m.memory_inputs, model,
                                             {p.sim.prefill_shapes, p.sim.peak_decode_batch});
  p.metrics = stats::ComputeSampleMetrics(p.sim.records, spec.decision.sla);
  const double window = static_cast<double>(std::max<int64_t>(p.sim.window_ns, 1));
  for (const auto& s : p.sim.stages) {
    StageShare share;
    share.compute = s.compute_ns / window;
    share.gemm = s.gemm_ns / window;
    share.moe = s.moe_ns / window;
    share.attention = s.attention_ns / window;
    share.exposed_comm = s.comm_ns / window;
    share.transfer = s.transfer_ns / window;
    share.overhead = s.overhead_ns / window;
    share.idle = s.idle_ns / window;
    p.exposed_comm_share += share.exposed_comm + share.transfer;
    p.bubble_share += share.idle;
    p.stage_shares.push_back(share);
  }
  if (!p.stage_shares.empty()) {
    p.exposed_comm_share /= static_cast<double>(p.stage_shares.size());
    p.bubble_share /= static_cast<double>(p.stage_shares.size());
  }
  return p;
}

}  // namespace

std::array<double, nsys::kComputeClasses> ClassShares(const StageShare& s) {
  std::array<double, nsys::kComputeClasses> out{};
  out[static_cast<int>(nsys::ComputeClass::kGemm)] = s.gemm;
  out[static_cast<int>(nsys::ComputeClass::kMoe)] = s.moe;
  out[static_cast<int>(nsys::ComputeClass::kAttention)] = s.attention;
  out[static_cast<int>(nsys::ComputeClass::kOther)] = s.other();
  return out;
}

std::array<double, nsys::kComputeClasses> MeanClassShares(const std::vector<StageShare>& stages) {
  std::array<double, nsys::kComputeClasses> out{};
  for (const StageShare& s : stages) {
    const auto c = ClassShares(s);
    for (int k = 0; k < nsys::kComputeClasses; ++k)
      out[k] += c[k] / static_cast<double>(stages.size());
  }
  return out;
}

InstanceShares SplitOverInstances(const workload::WorkloadParams& w, int instances) {
  InstanceShares out;
  // Without a cap on requests in flight (concurrency 0: an open loop's
  // arrivals, or every request at once) the router spreads the requests
  // themselves, each instance uncapped.
  const bool uncapped = w.concurrency <= 0;
  const std::vector<int> loads =
      uncapped ? std::vector<int>(static_cast<size_t>(std::max(instances, 1)), 0)
               : workload::SplitEvenly(w.concurrency, instances);
  const std::vector<int> requests = uncapped ? workload::SplitEvenly(w.num_requests, instances)
                                             : workload::SplitInProportion(w.num_requests, loads);
  for (size_t i = 0; i < loads.size(); ++i) {
    // A router leaves it idle.
    if ((!uncapped && loads[i] == 0) || requests[i] == 0) continue;
    workload::WorkloadParams share = w;
    share.concurrency = loads[i];
    share.num_requests = requests[i];
    share.request_rate = w.num_requests > 0 ? w.request_rate * requests[i] / w.num_requests : 0;
    const bool same = !out.shares.empty() && out.shares.back().concurrency == share.concurrency &&
                      out.shares.back().num_requests == share.num_requests;
    if (same) {
      ++out.copies.back();
    } else {
      out.shares.push_back(share);
      out.copies.push_back(1);
    }
  }
  return out;
}

stats::SampleMetrics CombineInstances(const std::vector<stats::SampleMetrics>& kinds,
                                      const std::vector<int>& copies) {
  stats::SampleMetrics out;
  // Latency figures: the busiest instance's (the first kind, one request
  // more in flight than the others when the split is uneven).
  out.ttft_s = kinds.front().ttft_s;
  out.e2e_s = kinds.front().e2e_s;
  out.tpot_s = kinds.front().tpot_s;
  out.itl_s = kinds.front().itl_s;
  for (size_t k = 0; k < kinds.size(); ++k) {
    const stats::SampleMetrics& m = kinds[k];
    const int n = copies[k];
    out.requests_total += n * m.requests_total;
    out.requests_completed += n * m.requests_completed;
    out.request_errors += n * m.request_errors;
    out.input_tokens += n * m.input_tokens;
    out.output_tokens += n * m.output_tokens;
    out.duration_s = std::max(out.duration_s, m.duration_s);
    out.input_tps += n * m.input_tps;
    out.output_tps += n * m.output_tps;
    out.request_throughput += n * m.request_throughput;
    out.requests_good += n * m.requests_good;
    out.goodput_rps += n * m.goodput_rps;
    out.tpot_requests += n * m.tpot_requests;
    out.itl_values += n * m.itl_values;
    // The instance that keeps up least: a router's client sees its queue.
    if (m.first_token_pace > 0 &&
        (out.first_token_pace == 0 || m.first_token_pace < out.first_token_pace))
      out.first_token_pace = m.first_token_pace;
  }
  return out;
}

std::vector<PointPrediction> PredictEachInstance(const plan::LayoutPlan& plan,
                                                 const spec::Spec& spec,
                                                 const model::ModelDesc& model,
                                                 const hardware::HardwareProfile& hw,
                                                 const cost::Calibration& calibration,
                                                 const PointOptions& options) {
  const workload::WorkloadParams w = WorkloadFor(spec, options.concurrency, options.seed);
  const int instances = std::max(plan.layout.instances, 1);
  const InstanceShares split = SplitOverInstances(w, instances);
  std::vector<PointPrediction> out;
  for (size_t k = 0; k < split.shares.size(); ++k) {
    PointPrediction p =
        PredictInstance(plan, spec, model, hw, calibration, options, split.shares[k]);
    p.concurrency = split.shares[k].concurrency;
    for (int copy = 0; copy < split.copies[k]; ++copy) out.push_back(p);
  }
  if (out.empty()) out.push_back(PredictInstance(plan, spec, model, hw, calibration, options, w));
  while (static_cast<int>(out.size()) < instances) {
    PointPrediction idle = out.front();
    idle.concurrency = 0;
    idle.sim.records.clear();
    idle.sim.trace.clear();
    idle.metrics = stats::SampleMetrics{};
    out.push_back(std::move(idle));
  }
  return out;
}

PointPrediction PredictPoint(const plan::LayoutPlan& plan, const spec::Spec& spec,
                             const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                             const cost::Calibration& calibration, const PointOptions& options) {
  const workload::WorkloadParams w = WorkloadFor(spec, options.concurrency, options.seed);
  if (plan.layout.instances <= 1)
    return PredictInstance(plan, spec, model, hw, calibration, options, w);
  const InstanceShares split = SplitOverInstances(w, plan.layout.instances);
  if (split.shares.empty()) return PredictInstance(plan, spec, model, hw, calibration, options, w);
  // The busiest instance's prediction carries the figures a layout has once
  // (memory, stage shares, the trace); the throughputs are every instance's.
  PointPrediction p =
      PredictInstance(plan, spec, model, hw, calibration, options, split.shares.front());
  std::vector<stats::SampleMetrics> kinds = {p.metrics};
  for (size_t k = 1; k < split.shares.size(); ++k)
    kinds.push_back(
        PredictInstance(plan, spec, model, hw, calibration, options, split.shares[k]).metrics);
  p.metrics = CombineInstances(kinds, split.copies);
  return p;
}

}  // namespace ppsearch::predict
