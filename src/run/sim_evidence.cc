#include "run/sim_evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nvidia_smi/gpu_memory.h"
#include "workload/workload.h"

namespace ppsearch::run {

uint64_t NameHash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

double SimNoiseFactor(const spec::SimSpec& sim, const evidence::SampleId& id) {
  if (sim.noise_cv <= 0) return 1.0;
  workload::SplitMix64 rng(sim.seed ^ NameHash(id.str()));
  // Box-Muller; lognormal with E[f] = 1 and CV = noise_cv.
  const double u1 = std::max(rng.NextUnit(), 1e-12), u2 = rng.NextUnit();
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  const double sigma = std::sqrt(std::log1p(sim.noise_cv * sim.noise_cv));
  return std::exp(sigma * z - sigma * sigma / 2);
}

void StretchRecords(double factor, std::vector<workload::RequestRecord>& records) {
  for (auto& r : records) {
    r.send_ns = std::llround(r.send_ns * factor);
    if (r.first_token_ns >= 0) r.first_token_ns = std::llround(r.first_token_ns * factor);
    if (r.end_ns >= 0) r.end_ns = std::llround(r.end_ns * factor);
    // Every chunk on the same clock, or the decode timing would not stretch
    // with its repeat and could outlast the request's end.
    for (int64_t& t : r.chunk_ns) t = std::llround(t * factor);
  }
}

std::vector<std::string> InjectFaults(const spec::SimSpec& sim, const evidence::SampleId& id,
                                      std::vector<workload::RequestRecord>& records) {
  std::vector<std::string> faults;
  for (const auto& fault : sim.inject) {
    if (fault.sample != id.str()) continue;
    if (fault.fault != "lose_requests") {
      faults.push_back(fault.fault);
      continue;
    }
    for (int i = 0; i < fault.count && i < static_cast<int>(records.size()); ++i) {
      auto& r = records[records.size() - 1 - i];
      r.status = workload::RequestStatus::kHttpError;
      r.http_status = 500;
      r.first_token_ns = -1;
      r.output_tokens = 0;
      r.chunk_ns.clear();
      r.error = "injected failure: request lost (HTTP 500)";
    }
  }
  return faults;
}

void FailForOutOfMemory(int stage, std::vector<workload::RequestRecord>& records) {
  for (auto& r : records) {
    if (r.status == workload::RequestStatus::kNotSent) continue;
    r.status = workload::RequestStatus::kStreamError;
    r.http_status = 0;
    r.first_token_ns = -1;
    r.output_tokens = 0;
    r.chunk_ns.clear();
    r.error = fmt::format(
        "the server closed the connection with no answer (simulated: stage {} ran out of GPU "
        "memory)",
        stage);
  }
}

int StageFirstNode(const plan::LayoutPlan& plan, int stage) {
  for (const auto& st : plan.stages)
    if (st.pp_rank == stage && !st.nodes.empty()) return st.nodes.front();
  return 0;
}

std::string SimGpuCsv(const std::string& host, const memory::MemoryPlan& memory, int node,
                      int gpus_per_node, int tp, const hardware::HardwareProfile& hw,
                      bool released) {
  std::vector<nvidia_smi::GpuMemory> gpus;
  for (int g = 0; g < gpus_per_node; ++g) {
    const size_t stage = static_cast<size_t>((node * gpus_per_node + g) / std::max(tp, 1));
    nvidia_smi::GpuMemory m;
    m.index = g;
    m.uuid = fmt::format("GPU-{:08x}-sim-{}-{}", NameHash(host) & 0xffffffff, host, g);
    m.name = hw.gpu_name;
    const double peak = stage < memory.stages.size() ? memory.stages[stage].peak_mib : 0.0;
    m.used_mib = released ? 0.0 : std::round(std::min(peak, hw.memory_mib));
    m.total_mib = hw.memory_mib;
    gpus.push_back(m);
  }
  return nvidia_smi::FormatGpuMemoryCsv(gpus);
}

}  // namespace ppsearch::run
