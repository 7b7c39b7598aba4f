#include "predict/disaggregated.h"

#include <algorithm>
#include <cmath>

#include "memory/served.h"
#include "predict/point_parts.h"
#include "workload/workload.h"

namespace ppsearch::predict {
namespace {

int PoolServerGpus(const spec::LayoutSpec& l) { return l.pp * l.tp; }

struct PdPoolModel {
  PointModel model;
  spec::Spec spec;
};

PdPoolModel BuildPoolModel(const plan::DisaggregatedPlan& plan, const plan::PoolPlan& pool,
                           const spec::Spec& spec, const model::ModelDesc& model,
                           const hardware::HardwareProfile& hw,
                           const cost::Calibration& calibration) {
  const spec::Disaggregation deployment{plan.transfer, plan.prefill.pool, plan.decode.pool};
  PdPoolModel out{{}, plan::PoolSpecOf(spec, deployment, pool.pool)};
  // The pool's engine carries its --disaggregation-mode: built as any
  // server of that mode is, serve-sim's included.
  out.model = BuildPointModel(pool.layout(), out.spec, model, hw, calibration);
  return out;
}

PoolPrediction PoolFiguresOf(const plan::PoolPlan& pool, const PointModel& m,
                             const model::ModelDesc& model, const sim::PoolSim& sim,
                             int64_t window_ns, double resident_ns) {
  PoolPrediction p;
  p.role = pool.role;
  p.servers = sim.servers;
  p.gpus = sim.servers * PoolServerGpus(pool.pool.layout);
  p.memory = m.memory;
  p.served_memory =
      memory::PlanServedMemory(m.memory_inputs, model, {sim.prefill_shapes, sim.peak_decode_batch});
  p.scheduler = m.scheduler;
  const double capacity_ns = static_cast<double>(std::max<int64_t>(window_ns, 1)) * sim.servers;
  double busy = 0;
  for (const sim::StageStats& s : sim.stages)
    busy += static_cast<double>(s.busy_ns()) / capacity_ns;
  if (!sim.stages.empty()) p.busy_share = busy / static_cast<double>(sim.stages.size());
  // Every DP rank of every server admits max_running_requests at once.
  const double slots = static_cast<double>(std::max(m.scheduler.dp_size, 1)) *
                       std::max(m.scheduler.max_running_requests, 1);
  p.batch_fill = resident_ns / (capacity_ns * slots);
  return p;
}

double NsToSeconds(double ns) { return ns / 1e9; }

}  // namespace

sim::KvTransferConfig TransferFor(const plan::DisaggregatedPlan& plan,
                                  const model::ModelDesc& model,
                                  const hardware::HardwareProfile& hw) {
  return TransferBetween(PoolServerGpus(plan.prefill.pool.layout),
                         PoolServerGpus(plan.decode.pool.layout), model, hw);
}

sim::KvTransferConfig TransferBetween(int prefill_gpus, int decode_gpus,
                                      const model::ModelDesc& model,
                                      const hardware::HardwareProfile& hw) {
  sim::KvTransferConfig t;
  t.kv_bytes_per_token = model.kv_bytes_per_token();
  const int gpus = std::min(prefill_gpus, decode_gpus);
  t.bytes_per_ns = hw.nic_gbps_per_gpu * std::max(gpus, 1);  // GB/s is bytes per ns
  t.latency_ns = std::llround(hw.inter_latency_us * 1e3);
  t.handshake_ns = t.latency_ns;
  return t;
}

std::optional<std::string> DisaggregatedNotModelled(const plan::DisaggregatedPlan& plan) {
  if (!plan.valid()) return "the deployment's plan has errors (see `ppsearch plan`)";
  for (const plan::PoolPlan* pool : {&plan.prefill, &plan.decode})
    if (auto why = NotModelled(pool->layout())) return "the " + pool->role + " pool " + *why;
  return std::nullopt;
}

DisaggregatedPrediction PredictDisaggregated(const plan::DisaggregatedPlan& plan,
                                             const spec::Spec& spec, const model::ModelDesc& model,
                                             const hardware::HardwareProfile& hw,
                                             const cost::Calibration& calibration,
                                             const PointOptions& options) {
  const PdPoolModel prefill = BuildPoolModel(plan, plan.prefill, spec, model, hw, calibration);
  const PdPoolModel decode = BuildPoolModel(plan, plan.decode, spec, model, hw, calibration);
  sim::DisaggregatedConfig config;
  config.prefill = prefill.model.scheduler;
  config.prefill_instances = std::max(plan.prefill.pool.layout.instances, 1);
  config.decode = decode.model.scheduler;
  config.decode_instances = std::max(plan.decode.pool.layout.instances, 1);
  config.decode_extra_slots = plan.decode.decode_extra_slots;
  config.reserved_decode_tokens = plan.decode.pd.reserved_decode_tokens;
  config.transfer = TransferFor(plan, model, hw);
  config.router = plan.transfer.router_policy == "round_robin" ? sim::RouterPolicy::kRoundRobin
                                                               : sim::RouterPolicy::kLeastLoaded;

  const workload::WorkloadParams w = WorkloadFor(spec, options.concurrency, options.seed);
  sim::SimOptions sim_options;
  sim_options.step_by_step = options.step_by_step;
  sim_options.token_times = options.token_times;
  DisaggregatedPrediction p;
  p.concurrency = options.concurrency;
  p.sim = sim::SimulateDisaggregated(config, *prefill.model.cost, *decode.model.cost,
                                     workload::PlanRequests(w), w.concurrency, sim_options);
  p.metrics = stats::ComputeSampleMetrics(p.sim.records, spec.decision.sla);

  // TTFT's parts over the requests that completed, and the time each spent
  // in a pool's batches (prefill: its prompt; decode: first token to end).
  double prefill_resident = 0, decode_resident = 0;
  int completed = 0;
  for (size_t i = 0; i < p.sim.records.size(); ++i) {
    const workload::RequestRecord& r = p.sim.records[i];
    const sim::RequestPhases& ph = p.sim.phases[i];
    if (r.status != workload::RequestStatus::kOk || r.first_token_ns < 0) continue;
    ++completed;
    p.ttft_parts.prealloc_wait_s += NsToSeconds(ph.prealloc_wait_ns);
    p.ttft_parts.handshake_s += NsToSeconds(config.transfer.handshake_ns);
    p.ttft_parts.prefill_s += NsToSeconds(ph.prefill_ns);
    p.ttft_parts.transfer_s += NsToSeconds(ph.transfer_ns);
    p.ttft_parts.decode_join_s += NsToSeconds(ph.decode_join_ns);
    prefill_resident += static_cast<double>(ph.prefill_ns);
    decode_resident += static_cast<double>(r.end_ns - r.first_token_ns);
  }
  if (completed > 0) {
    TtftParts& t = p.ttft_parts;
    for (double* v :
         {&t.prealloc_wait_s, &t.handshake_s, &t.prefill_s, &t.transfer_s, &t.decode_join_s})
      *v /= completed;
    if (t.total() > 0) p.transfer_share_of_ttft = t.transfer_s / t.total();
  }
  p.prefill = PoolFiguresOf(plan.prefill, prefill.model, model, p.sim.prefill, p.sim.window_ns,
                            prefill_resident);
  p.decode = PoolFiguresOf(plan.decode, decode.model, model, p.sim.decode, p.sim.window_ns,
                           decode_resident);
  const double prefill_load = p.prefill.busy_share;
  const double decode_load = p.decode.batch_fill;
  if (completed == 0 || std::max(prefill_load, decode_load) < 0.5)
    p.bottleneck = "neither";
  else
    p.bottleneck = prefill_load >= decode_load ? "prefill" : "decode";
  return p;
}

DisaggregatedIntervals ModelFormIntervals(const DisaggregatedPrediction& p,
                                          const plan::DisaggregatedPlan& plan,
                                          const spec::Spec& spec,
                                          const hardware::HardwareProfile& hw,
                                          const cost::Calibration& calibration,
                                          const cost::ModelFormScales& scales) {
  DisaggregatedIntervals out;
  auto pool_sigma = [&](const plan::PoolPlan& pool, uncertainty::Extrapolation* d) {
    const uncertainty::Site site{pool.pool.layout, spec.cluster.gpus_per_node,
                                 hw.name,          spec.workload.input_tokens,
                                 p.concurrency,    spec.workload.output_tokens};
    *d = uncertainty::FromCalibration(site, calibration, scales);
    return uncertainty::ModelFormSigma(scales, *d);
  };
  out.pool_sigma = std::max(pool_sigma(plan.prefill, &out.prefill_distance),
                            pool_sigma(plan.decode, &out.decode_distance));
  const auto per_unit = scales.PerUnit();
  out.transfer_sigma = *std::max_element(per_unit.begin(), per_unit.end());
  out.sigma = std::hypot(out.pool_sigma, out.transfer_sigma);
  const double compared_pools =
      std::max(uncertainty::ModelFormSigma(scales, uncertainty::Compared(out.prefill_distance)),
               uncertainty::ModelFormSigma(scales, uncertainty::Compared(out.decode_distance)));
  out.compared_sigma = std::hypot(compared_pools, out.transfer_sigma);
  auto widen = [&](double central, double sigma = -1) {
    return uncertainty::Widen(central, {central, central}, sigma < 0 ? out.sigma : sigma).total;
  };
  const stats::SampleMetrics& m = p.metrics;
  out.input_tps = widen(m.input_tps);
  out.output_tps = widen(m.output_tps);
  out.ttft_p50_s = widen(m.ttft_s.p50);
  out.ttft_p99_s = widen(m.ttft_s.p99);
  out.tpot_p50_s = widen(m.tpot_s.p50);
  out.tpot_p99_s = widen(m.tpot_s.p99);
  out.compared_input_tps = widen(m.input_tps, out.compared_sigma);
  out.compared_output_tps = widen(m.output_tps, out.compared_sigma);
  out.compared_ttft_p50_s = widen(m.ttft_s.p50, out.compared_sigma);
  return out;
}

}  // namespace ppsearch::predict
