#include "run/sim_deployment.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <optional>

#include "predict/disaggregated.h"
#include "run/sim_evidence.h"
#include "sglang_log/sglang_log.h"

namespace ppsearch::run {
namespace {

// One pool as the evidence needs it: its plan and its prediction.
struct Pool {
  const plan::PoolPlan& plan;
  const predict::PoolPrediction& predicted;
  int nodes_per_server() const {
    return static_cast<int>(plan.hosts.size()) / std::max(plan.pool.layout.instances, 1);
  }
};

sglang_log::LogSetup PoolLogSetup(const inputs::SearchInputs& in, const Pool& pool) {
  const spec::LayoutSpec& l = pool.plan.pool.layout;
  const sim::SchedulerConfig& sched = pool.predicted.scheduler;
  sglang_log::LogSetup setup =
      sglang_log::MakeLogSetup(in.model, in.hardware, pool.predicted.memory, l.tp, l.pp,
                               sched.chunked_prefill_size, sched.max_prefill_tokens, 0);
  setup.context_len = sched.context_len;
  setup.ep_size = l.ep;
  return setup;
}

// A pool node's server log: on a server's first node its arguments (with
// SGLang's PD flags), then the startup lines of every stage on the node,
// then the ready line.
std::string PoolNodeLog(const inputs::SearchInputs& in, const Pool& pool,
                        const sglang_log::LogSetup& setup, int node, std::time_t t0) {
  const spec::LayoutSpec& l = pool.plan.pool.layout;
  const plan::PdSettings& pd = pool.plan.pd;
  std::string out;
  if (node == 0)
    out += sglang_log::Line(
        t0, "",
        fmt::format("server_args=ServerArgs(model_path='{}', tp_size={}, pp_size={}, ep_size={}, "
                    "dp_size={}, enable_dp_attention={}, nnodes={}, node_rank=0, "
                    "chunked_prefill_size={}, disaggregation_mode='{}', "
                    "disaggregation_transfer_backend='{}', disaggregation_bootstrap_port={})",
                    in.spec.engine.model_path, l.tp, l.pp, l.ep, l.dp, l.dp > 1 ? "True" : "False",
                    pool.nodes_per_server(), setup.chunked_prefill_size, pd.mode,
                    pd.transfer_backend, pd.bootstrap_port));
  for (const auto& st : pool.plan.layout().stages) {
    if (std::find(st.nodes.begin(), st.nodes.end(), node) == st.nodes.end()) continue;
    for (const auto& line : sglang_log::StageStartupLines(setup, st.pp_rank))
      out += sglang_log::Line(t0, line.prefix, line.message);
  }
  if (node == 0) out += sglang_log::Line(t0, "", "The server is fired up and ready to roll!");
  return out;
}

// Each server of the pool: its hosts and the requests it served (the
// prefill or decode server the router gave each record).
evidence::BenchPool PoolEvidence(const Pool& pool, const predict::DisaggregatedPrediction& p,
                                 const std::vector<workload::RequestRecord>& records) {
  evidence::BenchPool out;
  out.role = pool.plan.role;
  out.gpus = pool.predicted.gpus;
  out.busy_share = pool.predicted.busy_share;
  out.batch_fill = pool.predicted.batch_fill;
  const int servers = std::max(pool.plan.pool.layout.instances, 1);
  const int per_server = pool.nodes_per_server();
  for (int s = 0; s < servers; ++s) {
    evidence::BenchInstance server;
    server.instance = s;
    server.hosts.emplace(pool.plan.hosts.begin() + s * per_server,
                         pool.plan.hosts.begin() + (s + 1) * per_server);
    out.servers.push_back(std::move(server));
  }
  const bool prefill = pool.plan.role == "prefill";
  for (size_t i = 0; i < p.sim.phases.size() && i < records.size(); ++i) {
    const int s = prefill ? p.sim.phases[i].prefill_instance : p.sim.phases[i].decode_instance;
    if (s < 0 || s >= servers) continue;
    ++out.servers[s].requests;
    if (records[i].ok()) ++out.servers[s].requests_ok;
  }
  return out;
}

}  // namespace

Result<SampleOutput> DeploymentSample(const inputs::SearchInputs& in,
                                      const cost::Calibration& calibration,
                                      const SampleContext& ctx, double noise_factor) {
  const plan::DisaggregatedPlan& d = *ctx.deployment;
  predict::PointOptions options;
  options.concurrency = ctx.id.concurrency;
  options.seed = ctx.workload_seed;
  const predict::DisaggregatedPrediction p =
      predict::PredictDisaggregated(d, in.spec, in.model, in.hardware, calibration, options);
  SampleOutput out;
  out.records = p.sim.records;
  for (size_t i = 0; i < out.records.size(); ++i) out.records[i].id = static_cast<int64_t>(i);
  StretchRecords(noise_factor, out.records);
  const std::vector<std::string> faults = InjectFaults(in.spec.sim, ctx.id, out.records);
  // A pool whose batches outgrow a GPU dies of it, as SGLang's servers would;
  // every request passes through both pools.
  const std::optional<int> prefill_oom =
      StageOutOfMemory(p.prefill.served_memory, in.hardware.memory_mib);
  const std::optional<int> decode_oom =
      StageOutOfMemory(p.decode.served_memory, in.hardware.memory_mib);
  if (prefill_oom || decode_oom)
    FailForOutOfMemory(prefill_oom ? *prefill_oom : *decode_oom, out.records);
  const std::time_t t0 = std::time(nullptr);
  evidence::BenchDisaggregation& bench = out.bench.disaggregation.emplace();
  for (const Pool pool : {Pool{d.prefill, p.prefill}, Pool{d.decode, p.decode}}) {
    const sglang_log::LogSetup setup = PoolLogSetup(in, pool);
    const std::optional<int> oom = &pool.plan == &d.prefill ? prefill_oom : decode_oom;
    const int per_server = std::max(pool.nodes_per_server(), 1);
    for (size_t i = 0; i < pool.plan.hosts.size(); ++i) {
      const int node = static_cast<int>(i) % per_server;
      NodeEvidence ne;
      ne.host = pool.plan.hosts[i];
      ne.log = PoolNodeLog(in, pool, setup, node, t0);
      // Each server's node of the stage that ran out of memory logs it.
      if (oom && StageFirstNode(pool.plan.layout(), *oom) == node)
        ne.log += sglang_log::FaultText(
            "oom", setup, t0 + 1,
            sglang_log::ScopePrefix(*oom, pool.plan.pool.layout.pp, 0, pool.plan.pool.layout.tp,
                                    pool.plan.pool.layout.ep));
      // Failures surface on the first prefill server, as a crash there would.
      if (&pool.plan == &d.prefill && i == 0)
        for (const auto& fault : faults)
          ne.log += sglang_log::FaultText(
              fault, setup, t0 + 1,
              sglang_log::ScopePrefix(0, pool.plan.pool.layout.pp, 0, pool.plan.pool.layout.tp,
                                      pool.plan.pool.layout.ep));
      ne.gpu_csv =
          SimGpuCsv(ne.host, pool.predicted.served_memory, node, in.spec.cluster.gpus_per_node,
                    pool.plan.pool.layout.tp, in.hardware, oom.has_value());
      out.nodes.push_back(std::move(ne));
    }
    bench.pools.push_back(PoolEvidence(pool, p, out.records));
  }
  // The repeat's stretch applies to every time, as to the records; the
  // shares are ratios of times and stay.
  const predict::TtftParts& t = p.ttft_parts;
  bench.prealloc_wait_s = t.prealloc_wait_s * noise_factor;
  bench.handshake_s = t.handshake_s * noise_factor;
  bench.prefill_s = t.prefill_s * noise_factor;
  bench.transfer_s = t.transfer_s * noise_factor;
  bench.decode_join_s = t.decode_join_s * noise_factor;
  bench.transfer_share_of_ttft = p.transfer_share_of_ttft;
  bench.transfer_bytes = p.sim.transfer_bytes;
  bench.bottleneck = p.bottleneck;
  out.bench.sample = ctx.id.str();
  out.bench.simulated = true;
  out.bench.noise_factor = noise_factor;
  out.bench.seed = ctx.workload_seed;
  return out;
}

}  // namespace ppsearch::run
