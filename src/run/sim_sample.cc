#include "run/sim_sample.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <optional>

#include "predict/predict.h"
#include "predict/search_points.h"
#include "run/instances.h"
#include "run/sim_deployment.h"
#include "run/sim_evidence.h"
#include "sglang_log/sglang_log.h"
#include "workload/workload.h"

namespace ppsearch::run {
namespace {

// Per-node server log: startup lines of every stage on the node, then the
// stage-0 batch lines the simulated sample produced. `node` counts within
// the node's instance (its first node is 0). Texts come from the
// shared SGLang log writer (sglang_log/), as serve-sim's do.
std::string NodeLog(const spec::Spec& spec, const plan::LayoutPlan& plan,
                    const predict::PointPrediction& p, const sglang_log::LogSetup& setup, int node,
                    std::time_t t0) {
  const auto& l = plan.layout;
  std::string out;
  if (node == 0) {
    out += sglang_log::Line(
        t0, "",
        fmt::format("server_args=ServerArgs(model_path='{}', tp_size={}, pp_size={}, ep_size={}, "
                    "nnodes={}, node_rank=0, chunked_prefill_size={}, pp_max_micro_batch_size={})",
                    spec.engine.model_path, l.tp, l.pp, l.ep,
                    spec.cluster.hosts.size() / static_cast<size_t>(std::max(l.instances, 1)),
                    setup.chunked_prefill_size, p.sim.pp_max_micro_batch_size));
  }
  for (const auto& st : plan.stages) {
    if (std::find(st.nodes.begin(), st.nodes.end(), node) == st.nodes.end()) continue;
    for (const auto& line : sglang_log::StageStartupLines(setup, st.pp_rank))
      out += sglang_log::Line(t0, line.prefix, line.message);
  }
  if (node == 0) out += sglang_log::Line(t0, "", "The server is fired up and ready to roll!");
  // Batch lines come from stage 0's first TP rank, on the first node of stage 0.
  const bool prints_batches =
      !plan.stages.empty() && !plan.stages[0].nodes.empty() && plan.stages[0].nodes[0] == node;
  for (const auto& slice : p.sim.trace) {
    if (slice.stage != 0 || !prints_batches) continue;
    std::time_t t = t0 + static_cast<std::time_t>(slice.start_ns / 1000000000);
    if (slice.is_prefill) {
      out += sglang_log::Line(
          t, sglang_log::ScopePrefix(0, l.pp, 0, l.tp, l.ep),
          fmt::format(
              "Prefill batch, #new-seq: {}, #new-token: {}, #cached-token: 0, token usage: 0.00, "
              "#running-req: 0, #queue-req: 0, cuda graph: False, input throughput (token/s): "
              "0.00",
              slice.requests, slice.tokens));
    }
  }
  return out;
}

}  // namespace

double SimSampleEngine::NoiseFactor(const spec::SimSpec& sim, const evidence::SampleId& id) {
  return SimNoiseFactor(sim, id);
}

Result<SampleOutput> SimSampleEngine::Run(const SampleContext& ctx) {
  if (ctx.deployment != nullptr)
    return DeploymentSample(inputs_, calibration_, ctx, NoiseFactor(spec_.sim, ctx.id));
  predict::PointRequest request;
  request.concurrency = ctx.id.concurrency;
  request.seed = ctx.workload_seed;
  request.keep_trace = true;
  const std::vector<predict::PointPrediction> each =
      predict::PredictSearchPointEachInstance(inputs_, *ctx.plan, calibration_, request);
  const predict::PointPrediction& p = each.front();
  SampleOutput out;
  // A slower repeat stretches every timestamp: throughput scales by 1/f.
  const double f = NoiseFactor(spec_.sim, ctx.id);
  // Every instance's requests, numbered across the sample. An instance whose
  // batches outgrow a GPU dies of it, as SGLang's server would.
  std::vector<std::optional<int>> out_of_memory;
  for (size_t i = 0; i < each.size(); ++i) {
    out_of_memory.push_back(StageOutOfMemory(each[i].served_memory, hw_.memory_mib));
    std::vector<workload::RequestRecord> records = each[i].sim.records;
    if (out_of_memory.back()) FailForOutOfMemory(*out_of_memory.back(), records);
    for (workload::RequestRecord& r : records) {
      r.id = static_cast<int64_t>(out.records.size());
      r.instance = static_cast<int>(i);
      out.records.push_back(std::move(r));
    }
  }
  StretchRecords(f, out.records);
  const std::vector<std::string> faults = InjectFaults(spec_.sim, ctx.id, out.records);
  const std::time_t t0 = std::time(nullptr);
  const sim::SchedulerConfig& sched = p.scheduler;
  sglang_log::LogSetup setup = sglang_log::MakeLogSetup(
      model_, hw_, p.memory, ctx.plan->layout.tp, ctx.plan->layout.pp, sched.chunked_prefill_size,
      sched.max_prefill_tokens, p.sim.pp_max_micro_batch_size);
  setup.context_len = sched.context_len;  // --context-length when the spec overrides it
  setup.ep_size = ctx.plan->layout.ep;
  const size_t per_instance = spec_.cluster.hosts.size() / each.size();
  for (size_t n = 0; n < spec_.cluster.hosts.size(); ++n) {
    // The host's instance, and the node's place in it.
    const size_t instance = std::min(n / std::max<size_t>(per_instance, 1), each.size() - 1);
    const int node = static_cast<int>(n - instance * per_instance);
    NodeEvidence ne;
    ne.host = spec_.cluster.hosts[n].name;
    ne.log = NodeLog(spec_, *ctx.plan, each[instance], setup, node, t0);
    // The stage that ran out of memory logs it on its first node.
    if (const std::optional<int> stage = out_of_memory[instance];
        stage && StageFirstNode(*ctx.plan, *stage) == node)
      ne.log +=
          sglang_log::FaultText("oom", setup, t0 + 1,
                                sglang_log::ScopePrefix(*stage, ctx.plan->layout.pp, 0,
                                                        ctx.plan->layout.tp, ctx.plan->layout.ep));
    // Failures surface on the node of the first stage, as a real crash would there.
    if (n == 0)
      for (const auto& fault : faults)
        ne.log += sglang_log::FaultText(
            fault, setup, t0 + 1,
            sglang_log::ScopePrefix(0, ctx.plan->layout.pp, 0, ctx.plan->layout.tp,
                                    ctx.plan->layout.ep));
    // `node`: within the instance (which stage's ranks it holds).
    ne.gpu_csv = SimGpuCsv(ne.host, each[instance].served_memory, node, spec_.cluster.gpus_per_node,
                           ctx.plan->layout.tp, hw_, out_of_memory[instance].has_value());
    out.nodes.push_back(std::move(ne));
  }
  out.bench.sample = ctx.id.str();
  out.bench.simulated = true;
  out.bench.noise_factor = f;
  out.bench.seed = ctx.workload_seed;
  out.bench.sim = evidence::BenchSimFigures{p.sim.pp_max_micro_batch_size, p.sim.micro_batches,
                                            p.exposed_comm_share, p.bubble_share};
  if (each.size() > 1) out.bench.instances = InstancesEvidence(spec_, *ctx.plan, out.records);
  return out;
}

}  // namespace ppsearch::run
