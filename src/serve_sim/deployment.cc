#include "serve_sim/deployment.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "evidence/calibration_file.h"
#include "inputs/search_inputs.h"
#include "model/hf_config.h"
#include "predict/predict.h"
#include "serve_sim/gpu_registry.h"

namespace ppsearch::serve_sim {
namespace {

spec::ArgValue IntArg(int64_t v) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kInt;
  a.int_value = v;
  a.text = std::to_string(v);
  return a;
}

spec::ArgValue TextArg(const std::string& v) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kString;
  a.text = v;
  return a;
}

spec::ArgValue FloatArg(double v) {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kFloat;
  a.float_value = v;
  a.text = fmt::format("{}", v);
  return a;
}

// A flag serve-sim does not parse, as a spec's [engine.args] would hold it:
// a switch is true, a number its number, anything else its text.
spec::ArgValue ExtraArg(const ExtraFlag& f) {
  if (!f.value) {
    spec::ArgValue a;
    a.kind = spec::ArgValue::Kind::kBool;
    a.bool_value = true;
    a.text = "true";
    return a;
  }
  const std::string& v = *f.value;
  char* end = nullptr;
  errno = 0;
  const long long i = std::strtoll(v.c_str(), &end, 10);
  if (!v.empty() && *end == '\0' && errno == 0) return IntArg(i);
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (!v.empty() && *end == '\0' && errno == 0 && std::isfinite(d)) return FloatArg(d);
  return TextArg(v);
}

}  // namespace

spec::Spec SpecFromArgs(const ServerArgs& args) {
  spec::Spec s;
  s.path = "<serve-sim arguments>";
  s.experiment.name = "serve-sim";
  for (int n = 0; n < args.nnodes; ++n) {
    spec::HostSpec h;
    h.name = "node" + std::to_string(n);
    h.address = h.name;
    s.cluster.hosts.push_back(h);
  }
  s.cluster.gpus_per_node = std::max(1, args.tp_size * args.pp_size / std::max(args.nnodes, 1));
  s.cluster.hardware = args.hardware;
  s.engine.model_path = args.model_path;
  s.engine.model_config = args.ModelSource();
  s.engine.version = "0.5.18";
  s.engine.env = args.engine_env;
  s.engine.env_origin = "the environment's";
  if (args.chunked_prefill_size)
    s.engine.args.emplace_back("chunked-prefill-size", IntArg(*args.chunked_prefill_size));
  if (args.max_running_requests)
    s.engine.args.emplace_back("max-running-requests", IntArg(*args.max_running_requests));
  if (args.pp_max_micro_batch_size)
    s.engine.args.emplace_back("pp-max-micro-batch-size", IntArg(*args.pp_max_micro_batch_size));
  if (args.mem_fraction_static)
    s.engine.args.emplace_back("mem-fraction-static", FloatArg(*args.mem_fraction_static));
  // The flags serve-sim does not serve itself still size SGLang's memory and
  // scheduler (--disable-radix-cache sets the state pool's ratio, hence the
  // request cap): the planner reads them as it reads a spec's.
  for (const ExtraFlag& f : args.extra_flags) s.engine.args.emplace_back(f.name, ExtraArg(f));
  // A PD server's mode decides what memory it sets aside (predict's builder
  // reads it as it reads a disaggregated pool's).
  if (args.disaggregation_mode != "null") {
    s.engine.args.emplace_back("disaggregation-mode", TextArg(args.disaggregation_mode));
    s.engine.args.emplace_back("disaggregation-transfer-backend",
                               TextArg(args.disaggregation_transfer_backend));
    s.engine.args.emplace_back("disaggregation-bootstrap-port",
                               IntArg(args.disaggregation_bootstrap_port));
  }
  spec::LayoutSpec layout;
  layout.pp = args.pp_size;
  layout.tp = args.tp_size;
  layout.ep = args.ep_size;
  s.sweep.layouts.push_back(layout);
  s.sweep.concurrency = {1};
  s.workload.requests = 1;
  s.workload.input_tokens = 1;
  return s;
}

Result<std::unique_ptr<Deployment>> BuildDeployment(const ServerArgs& args) {
  auto d = std::make_unique<Deployment>();
  // The one loader, as every other command: the model, the hardware profile
  // with the spec's attention backend, the planned layout.
  Result<inputs::SearchInputs> in = inputs::LoadSearchInputs(SpecFromArgs(args));
  if (!in) return in.error();
  d->spec = std::move(in->spec);
  d->model = std::move(in->model);
  d->hw = std::move(in->hardware);
  if (!args.calibration_path.empty()) {
    auto cal = evidence::LoadCalibration(args.calibration_path);
    if (!cal) return cal.error();
    d->calibration = *cal;
  }
  d->plan = std::move(in->plan.layouts.front());
  if (!d->plan.valid) {
    std::string msg = "SGLang would reject this layout:";
    for (const auto& e : d->plan.errors) msg += "\n  " + e.message;
    return MakeError(msg);
  }
  predict::PointModel point =
      predict::BuildPointModel(d->plan, d->spec, d->model, d->hw, d->calibration);
  d->memory_inputs = point.memory_inputs;
  d->memory = point.memory;
  if (!d->memory.fits) return MakeError(d->memory.refusal);
  d->cost = std::move(point.cost);
  d->scheduler = point.scheduler;
  d->pp_max_micro_batch_size = sim::ResolvePpMaxMicroBatchSize(d->scheduler);
  return d;
}

std::vector<int> StagesOnNode(const Deployment& d, int node) {
  std::vector<int> stages;
  for (const auto& r : d.plan.ranks)
    if (r.node == node && std::find(stages.begin(), stages.end(), r.pp_rank) == stages.end())
      stages.push_back(r.pp_rank);
  std::sort(stages.begin(), stages.end());
  return stages;
}

memory::MemoryPlan ServedMemory(const Deployment& d, const memory::ServedBatches& served) {
  return memory::PlanServedMemory(d.memory_inputs, d.model, served);
}

std::vector<nvidia_smi::GpuMemory> NodeGpuMemory(const Deployment& d,
                                                 const memory::MemoryPlan& memory, int node,
                                                 const std::string& gpu_state_dir) {
  // smi-sim's uuids for the state directory, so a GPU keeps its uuid whether
  // or not a registration describes it; without one, per node.
  const std::string seed =
      gpu_state_dir.empty() ? fmt::format("node {}", node) : GpuUuidSeed(gpu_state_dir);
  std::vector<nvidia_smi::GpuMemory> gpus;
  for (const auto& r : d.plan.ranks) {
    if (r.node != node) continue;
    nvidia_smi::GpuMemory g;
    g.index = r.local_gpu;
    g.uuid = SimGpuUuid(seed, r.local_gpu);
    g.name = d.hw.gpu_name;
    const auto& stages = memory.stages;
    if (r.pp_rank < static_cast<int>(stages.size()))
      g.used_mib = std::min(stages[r.pp_rank].peak_mib, d.hw.memory_mib);
    g.total_mib = d.hw.memory_mib;
    gpus.push_back(g);
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  return gpus;
}

}  // namespace ppsearch::serve_sim
