#pragma once
// One benchmark sample, analysed from its evidence: request counts and
// latency statistics from the per-request records, failures from every
// node's server log, and the peak GPU memory of every GPU. Pure: the reader
// (analysis/run.h) loads the files into SampleInputs.

#include <optional>
#include <string>
#include <vector>

#include "analysis/log_scan.h"
#include "evidence/evidence.h"
#include "gpu/gpu_memory.h"
#include "stats/stats.h"
#include "workload/request_record.h"

namespace ppsearch::analysis {

struct LogText {
  std::string file;  // relative to the run directory, e.g. "service/<sample>/601.log"
  std::string text;
};

// One node's nvidia-smi CSV; it may hold several snapshots (lines repeat per GPU).
struct NodeGpuSnapshot {
  std::string host;
  int node = -1;  // index of host in the spec's cluster.hosts; -1 when unknown
  std::vector<gpu::GpuMemory> gpus;
};

struct SampleInputs {
  evidence::SampleId id;
  evidence::SampleState state = evidence::SampleState::kCompleted;
  std::vector<workload::RequestRecord> records;
  int requests_expected = 0;  // workload.requests of the spec
  std::vector<LogText> logs;
  std::vector<NodeGpuSnapshot> gpu;
  std::vector<std::string> problems;  // evidence that is missing or unreadable
};

// Highest used memory of one GPU over its node's snapshots.
struct GpuPeak {
  std::string host;
  int node = -1;
  int local_gpu = 0;
  double used_mib = 0;
  double total_mib = 0;
};

// Highest used memory over one node's GPUs and snapshots.
struct NodePeak {
  std::string host;
  double used_mib = 0;
  double total_mib = 0;  // of the GPU with the peak
};

struct SampleAnalysis {
  evidence::SampleId id;
  std::string name;  // id.str()
  evidence::SampleState state = evidence::SampleState::kCompleted;
  stats::SampleMetrics metrics;
  int requests_expected = 0;
  int prompt_length_mismatches = 0;  // ok requests whose server-reported prompt length differs
  std::vector<LogFinding> findings;
  std::vector<GpuPeak> gpus;
  std::vector<NodePeak> nodes;          // in the order the node CSVs were given
  std::optional<double> peak_gpu_mib;   // highest used over all GPUs
  std::optional<double> gpu_total_mib;  // total of the GPU with the peak
  std::optional<double> headroom_mib;   // worst rank: min over GPUs of total - used
  std::vector<std::string> problems;

  bool completed() const { return state == evidence::SampleState::kCompleted; }
  // Requests the sample should have sent: the larger of records and the spec's count.
  int requests_total() const;
  bool all_requests_ok() const;
  // Completed, every request ok, no log finding, no missing evidence.
  bool valid() const;
};

SampleAnalysis AnalyseSample(const SampleInputs& in);

}  // namespace ppsearch::analysis
