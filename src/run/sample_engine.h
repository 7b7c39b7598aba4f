#pragma once
// What runs one benchmark sample. The simulated engine and the real SGLang
// engine implement it; the runner writes whatever they return into the same
// evidence directory, so analysis never knows which made it.

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evidence/bench_summary.h"
#include "evidence/evidence.h"
#include "evidence/profile_files.h"
#include "evidence/run_metadata.h"
#include "plan/disaggregation.h"
#include "plan/plan.h"
#include "util/result.h"
#include "workload/request_record.h"

namespace ppsearch::run {

struct SampleContext {
  evidence::SampleId id;
  const plan::LayoutPlan* plan = nullptr;     // an aggregated layout's; null for a deployment
  uint64_t workload_seed = 1;                 // differs per repeat: no prefix reuse across repeats
  const evidence::RunPaths* paths = nullptr;  // the run directory (live logs, server state)
  std::string run_id;
  bool next_same_layout = false;  // the sample after this one uses the same layout
  // A disaggregated deployment's two pools (the sample's layout is one);
  // null for an aggregated layout.
  const plan::DisaggregatedPlan* deployment = nullptr;
  // Set by SIGINT/SIGTERM (null: never). Every wait of a sample (servers
  // starting, readiness, the load, GPU memory being released) watches it, so
  // an interrupt ends the sample within a fraction of a second rather than
  // when the sample would have ended (SampleOutput::interrupted).
  const std::atomic<bool>* stop = nullptr;
  // Set by a second SIGINT/SIGTERM (null: never): servers being stopped are
  // killed now rather than after lifecycle.stop_grace_s.
  const std::atomic<bool>* kill_now = nullptr;
};

struct NodeEvidence {
  std::string host;
  std::string log;      // server log of the sample (SGLang format)
  std::string gpu_csv;  // nvidia-smi CSV after the sample
};

// One Nsight Systems analysis of a sample (nsys/analysis_json.h's JSON):
// per node for a profiled real server, or of the export the spec names;
// evidence/profile_files.h owns the files.
using ProfileEvidence = evidence::ProfileFile;

struct SampleOutput {
  std::vector<workload::RequestRecord> records;
  std::vector<NodeEvidence> nodes;
  // A disaggregated deployment's router (real servers): the host it ran on
  // and its log; none otherwise.
  std::string router_host;
  std::string router_log;
  std::vector<ProfileEvidence> profiles;
  evidence::BenchSummary bench;  // bench/<sample>.json
  // The engine's own verdict, from what it saw of the servers (the evidence
  // adds requests_failed and log_findings, analysis/sample.h).
  evidence::Verdict verdict = evidence::Verdict::kOk;
  std::string detail;  // a sentence: what went wrong, on which node
  // The stop flag cut the sample short (its servers stopped, as after any
  // sample): nothing else here is evidence. The runner records the sample
  // as interrupted, neither measured nor failed, and a resume runs it again;
  // `detail` says where it was.
  bool interrupted = false;
};

class SampleEngine {
 public:
  virtual ~SampleEngine() = default;
  virtual const char* kind() const = 0;  // "sim", "sglang", "replay"
  virtual bool simulated() const = 0;
  // What a replaying engine answers from (run.json's "replay"); none otherwise.
  virtual std::optional<evidence::ReplaySource> replayed() const { return std::nullopt; }
  // Expected failures of the engine (a server that never became ready) come
  // back as errors; failures of requests are in the records.
  virtual Result<SampleOutput> Run(const SampleContext& context) = 0;
  // After the last sample (or an interruption): stop whatever is still running.
  virtual void Finish() {}
  // A resume stopped servers an earlier process left, or that process
  // stopped its interrupted sample's servers as it exited: their GPUs free
  // their memory some time after the processes end, so the next start waits
  // for it as it does after a stop of its own.
  virtual void ServersStoppedElsewhere() {}
};

}  // namespace ppsearch::run
