#pragma once
// The real engine behind `ppsearch run --engine sglang`: each sample runs
// the whole lifecycle of SGLang servers across the cluster's nodes through a
// launcher (local, ssh, slurm):
//
//   preflight  every host answers, the ports are free, no other process holds
//              more than lifecycle.preflight_gpu_mib of GPU memory
//   start      every node's server, its output streamed into live/
//   ready      node 0's /health_generate, then one 1-token request (a node
//              that exits or prints such a line first fails the start)
//   bench      the built-in client (loadgen::RunBench), stopped at once when a
//              node's process exits, any node's log prints a line that means
//              a rank cannot go on (OOM, NCCL failure, CUDA error, SGLang's
//              watchdog, a fatal signal), or the benchmark's deadline passes
//   snapshot   nvidia-smi on every node
//   stop       SIGTERM to every process tree, SIGKILL after the grace period
//   release    wait until every GPU is back under lifecycle.memory_release_mib
//
// and returns the evidence with its verdict: ok, engine_failed_to_start,
// engine_died, requests_failed, timeout or preflight_failed (the log scan adds
// log_findings). With lifecycle.reuse_server one server runs per layout across
// its concurrency points and repeats.
//
// An interrupt (SampleContext::stop) ends the waits of any stage (ready,
// bench, release) within a fraction of a second: the servers are stopped
// and the sample comes back interrupted, with no verdict.

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "run/sample_engine.h"
#include "sglang/server_group.h"
#include "spec/spec.h"

namespace ppsearch::sglang {

class SglangSampleEngine : public run::SampleEngine {
 public:
  SglangSampleEngine(const spec::Spec& spec, launch::Launcher& launcher)
      : spec_(spec), launcher_(launcher) {}
  ~SglangSampleEngine() override { Finish(); }

  const char* kind() const override { return "sglang"; }
  bool simulated() const override { return false; }
  Result<run::SampleOutput> Run(const run::SampleContext& context) override;
  void Finish() override;
  void ServersStoppedElsewhere() override { release_pending_ = true; }

 private:
  // "" when every host is ready for a new server; else what is wrong.
  std::string Preflight();
  // Polls until every GPU is released; "" or what is still held; none when
  // the stop flag ended the wait.
  std::optional<std::string> WaitMemoryReleased();
  void Snapshot(run::SampleOutput& out);
  void CollectLogs(const std::vector<uintmax_t>& from, run::SampleOutput& out);
  // A sample's stages. ServeLayout: the layout's servers up and ready (kept
  // from the sample before, or started after a preflight), with the log
  // offsets the sample's logs start at; false when they are not, the
  // verdict and evidence in `out`. Benchmark: the load against them, its
  // records and its verdict. EndSample: the servers stopped and their GPUs
  // released unless the next sample reuses them, and nsys's reports.
  bool ServeLayout(const run::SampleContext& ctx, run::SampleOutput& out,
                   std::vector<uintmax_t>& log_from);
  void Benchmark(const run::SampleContext& ctx, const std::vector<uintmax_t>& log_from,
                 run::SampleOutput& out);
  void EndSample(const run::SampleContext& ctx, run::SampleOutput& out);
  // The stop flag ended the sample `where` ("while its servers started"):
  // its servers are stopped as after any sample (SIGTERM, SIGKILL after
  // lifecycle.stop_grace_s), without waiting for their GPU memory (the run
  // exits; a resume waits for it), and `out` says it was interrupted.
  // Returns false, ServeLayout's answer for a sample that does not go on.
  bool Interrupted(run::SampleOutput& out, const std::string& where);
  // The group's Stop, cut short by a second interrupt.
  std::vector<std::string> StopServers();

  const spec::Spec& spec_;
  launch::Launcher& launcher_;
  std::optional<ServerGroup> group_;
  std::optional<evidence::RunPaths> paths_;
  std::optional<evidence::SampleId> server_sample_;  // the sample that started the servers
  const std::atomic<bool>* stop_ = nullptr;          // the sample's SampleContext::stop
  const std::atomic<bool>* kill_now_ = nullptr;      // the sample's SampleContext::kill_now
  std::string server_version_;     // reported by the running servers; "" when unknown
  std::vector<int> sample_hosts_;  // the cluster nodes of the sample's servers (out.nodes)
  // The last stop's GPU memory was not released in time: the next sample
  // waits for it (up to memory_release_timeout_s again) before its preflight,
  // rather than failing at once on what is only slow.
  bool release_pending_ = false;
};

}  // namespace ppsearch::sglang
