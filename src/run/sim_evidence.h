#pragma once
// What the simulated engine's samples share, aggregated layout or
// disaggregated deployment: the seeded per-repeat noise, the faults a spec's
// [sim] inject table plants, and the snapshot of a simulated node's GPUs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "hardware/hardware.h"
#include "memory/memory_model.h"
#include "memory/served.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "workload/request_record.h"

namespace ppsearch::run {

// FNV-1a of `s`: seeds and GPU ids that depend on a name only.
uint64_t NameHash(const std::string& s);

// The repeat's throughput factor: lognormal with mean 1 and the spec's
// coefficient of variation, seeded by (sim.seed, sample id).
double SimNoiseFactor(const spec::SimSpec& sim, const evidence::SampleId& id);

// A slower repeat stretches every timestamp by `factor` (throughput / factor).
void StretchRecords(double factor, std::vector<workload::RequestRecord>& records);

// The [sim] inject entries for this sample: `lose_requests` applied to the
// records here (the last ones fail with HTTP 500); every other fault's kind
// returned, for the node log to print.
std::vector<std::string> InjectFaults(const spec::SimSpec& sim, const evidence::SampleId& id,
                                      std::vector<workload::RequestRecord>& records);

using memory::StageOutOfMemory;

// Every request of a sample whose server died of `stage`'s out-of-memory
// fails as its client sees a dying server: the connection closes with no
// answer. The simulation does not say when the largest batch ran, and a
// server that dies mid-sample leaves no figure to rank either way.
void FailForOutOfMemory(int stage, std::vector<workload::RequestRecord>& records);

// The node, within its server, of `stage`'s first rank: where its error is logged.
int StageFirstNode(const plan::LayoutPlan& plan, int stage);

// nvidia-smi's CSV of a simulated node, `node` of its server (which stages'
// ranks it holds): each GPU at its stage's peak in `memory` (ranks stage by
// stage, `tp` TP ranks each, as the planner numbers them), never above the
// GPU's total; with `released` (its server died: StageOutOfMemory) every GPU
// free, as nvidia-smi shows a dead server's after the load.
std::string SimGpuCsv(const std::string& host, const memory::MemoryPlan& memory, int node,
                      int gpus_per_node, int tp, const hardware::HardwareProfile& hw,
                      bool released = false);

}  // namespace ppsearch::run
