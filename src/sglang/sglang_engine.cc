#include "sglang/sglang_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include "evidence/validation.h"
#include "loadgen/bench_report.h"
#include "loadgen/load_loop.h"
#include "run/instances.h"
#include "sglang/commands.h"
#include "sglang/host_check.h"
#include "sglang/node_gpus.h"
#include "sglang/nsys_profile.h"
#include "util/stoppable_wait.h"

namespace ppsearch::sglang {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kLogScanInterval = std::chrono::milliseconds(200);

Clock::time_point After(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// A disaggregated deployment's sample: its pools' servers and the router.
bool IsDeployment(const spec::Spec& spec, const run::SampleContext& ctx) {
  return ctx.id.layout.disaggregated() && spec.disaggregation.has_value();
}

void SetVerdict(run::SampleOutput& out, evidence::Verdict verdict, std::string detail) {
  if (out.verdict != evidence::Verdict::kOk) {
    out.detail += "; " + detail;  // the first failure decides; later ones are noted
    return;
  }
  out.verdict = verdict;
  out.detail = std::move(detail);
}

// The version the server reports of itself: `version` of /server_info
// (older SGLang releases answer only /get_server_info, which newer ones
// keep as a deprecated alias). An error says what the servers answered;
// the sample goes on without it.
Result<std::string> ReportedVersion(const std::string& url, double timeout_s,
                                    const std::string& api_key,
                                    const std::function<std::string()>& abort_check) {
  std::string why;
  for (const char* route : {"/server_info", "/get_server_info"}) {
    // The whole answer: server args and internal states run to several KiB.
    Result<loadgen::SimpleResponse> r = loadgen::Get(
        url + route, static_cast<int64_t>(timeout_s * 1000), size_t{1} << 20, api_key, abort_check);
    if (!r.ok()) {
      why = r.error().message;
      continue;
    }
    nlohmann::json j = nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    if (r->http_status == 200 && j.is_object() && j.contains("version") && j["version"].is_string())
      return j["version"].get<std::string>();
    why = fmt::format("{} answered HTTP {} without a string \"version\"", route, r->http_status);
  }
  return MakeError("no server version: " + why);
}

}  // namespace

std::string SglangSampleEngine::Preflight() {
  std::string out;
  for (int n : sample_hosts_)
    for (const HostProblem& p : CheckHost(launcher_, spec_, n, spec_.lifecycle.host_timeout_s,
                                          /*check_reach=*/false))
      out += (out.empty() ? "" : "; ") + p.host + ": " + p.detail;
  return out;
}

std::optional<std::string> SglangSampleEngine::WaitMemoryReleased() {
  const auto& lc = spec_.lifecycle;
  const auto deadline = After(lc.memory_release_timeout_s);
  std::string held;
  // One look at least, even after an interrupt: memory already free lets
  // a sample that measured everything complete.
  while (true) {
    held.clear();
    for (int n : sample_hosts_) {
      Result<std::vector<std::string>> above =
          GpusAbove(launcher_, spec_, n, lc.memory_release_mib);
      const std::string& host = spec_.cluster.hosts[n].name;
      if (!above.ok()) {
        held += (held.empty() ? "" : "; ") + host + ": " + above.error().message;
        continue;
      }
      for (const auto& g : *above) held += (held.empty() ? "" : "; ") + host + " " + g;
    }
    if (held.empty() || Clock::now() >= deadline) break;
    if (!SleepUnlessStopped(std::min(deadline, After(lc.poll_interval_s)), stop_))
      return std::nullopt;
  }
  if (held.empty()) return "";
  return fmt::format("GPU memory not released within {} s after the servers stopped: {}",
                     lc.memory_release_timeout_s, held);
}

void SglangSampleEngine::Snapshot(run::SampleOutput& out) {
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    Result<std::string> csv = QueryGpuCsv(launcher_, spec_, sample_hosts_[i]);
    // A failed query leaves no snapshot; analysis names the missing file.
    out.nodes[i].gpu_csv = csv.ok() ? *csv : "";
    if (!csv.ok()) out.bench.snapshot_errors.push_back(csv.error().message);
  }
}

void SglangSampleEngine::CollectLogs(const std::vector<uintmax_t>& from, run::SampleOutput& out) {
  const std::vector<ServerSlot>& slots = group_->slots();
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    std::string log = group_->LogSince(slot, slot < from.size() ? from[slot] : 0);
    if (slots[slot].router) {
      out.router_host = slots[slot].host;
      out.router_log = std::move(log);
      continue;
    }
    for (size_t i = 0; i < out.nodes.size(); ++i)
      if (sample_hosts_[i] == slots[slot].node) out.nodes[i].log = std::move(log);
  }
}

Result<run::SampleOutput> SglangSampleEngine::Run(const run::SampleContext& ctx) {
  run::SampleOutput out;
  // The hosts whose servers the sample runs: every node, or a deployment's pools'.
  sample_hosts_ = spec::ServerNodes(spec_, ctx.id.layout);
  for (int node : sample_hosts_) out.nodes.push_back({spec_.cluster.hosts[node].name, "", ""});
  out.bench.sample = ctx.id.str();
  out.bench.simulated = false;
  out.bench.seed = ctx.workload_seed;
  if (!paths_) paths_ = *ctx.paths;
  if (!group_) group_.emplace(spec_, launcher_, *paths_);
  stop_ = ctx.stop;
  kill_now_ = ctx.kill_now;

  const auto started = Clock::now();
  std::vector<uintmax_t> log_from;
  if (!ServeLayout(ctx, out, log_from)) return out;
  // What a comparison of two runs checks besides the spec's engine.version.
  out.bench.ready = evidence::BenchServerReady{
      std::chrono::duration<double>(Clock::now() - started).count(), server_version_};
  Benchmark(ctx, log_from, out);
  if (out.interrupted) return out;
  Snapshot(out);
  EndSample(ctx, out);
  if (out.interrupted) return out;
  CollectLogs(log_from, out);
  out.bench.sample_wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  return out;
}

bool SglangSampleEngine::ServeLayout(const run::SampleContext& ctx, run::SampleOutput& out,
                                     std::vector<uintmax_t>& log_from) {
  const bool reuse = spec_.lifecycle.reuse_server && group_->running() &&
                     group_->layout() == ctx.id.layout && !group_->FirstExited();
  if (reuse) {
    log_from = group_->LogEnds();
    return true;
  }
  // A server kept up for a next sample of its layout that did not come
  // (an adaptive run chose another layout) frees its GPUs only now.
  if (group_->running()) release_pending_ = true;
  for (const auto& note : StopServers()) out.bench.stop_notes.push_back(note);
  if (release_pending_) {
    const std::optional<std::string> held = WaitMemoryReleased();
    if (!held) return Interrupted(out, "while waiting for the last servers' GPU memory");
    out.bench.release_wait = *held;
    release_pending_ = false;
  }
  if (StopRequested(stop_)) return Interrupted(out, "before its preflight");
  const std::string busy = Preflight();
  if (!busy.empty()) {
    SetVerdict(out, evidence::Verdict::kPreflightFailed, busy);
    Snapshot(out);
    return false;
  }
  const bool deployment = IsDeployment(spec_, ctx);
  Status st =
      deployment ? group_->StartDeployment(ctx.id, ctx.run_id) : group_->Start(ctx.id, ctx.run_id);
  server_sample_ = ctx.id;
  if (st.ok()) st = group_->WaitReady(stop_);
  // Not a failure to start: the servers were given no chance to finish.
  if (!st.ok() && StopRequested(stop_)) return Interrupted(out, "while its servers started");
  if (!st.ok()) {
    SetVerdict(out, evidence::Verdict::kEngineFailedToStart, st.error().message);
    Snapshot(out);
    for (const auto& note : StopServers()) out.bench.stop_notes.push_back(note);
    CollectLogs({}, out);
    return false;
  }
  log_from.assign(group_->slots().size(), 0);
  // A deployment's servers report their version; its router is not SGLang's server.
  const std::string asked = deployment ? group_->ProbeUrl(0) : NodeUrl(spec_, 0);
  Result<std::string> version = ReportedVersion(asked, spec_.lifecycle.host_timeout_s,
                                                spec_.engine.ArgString("api-key").value_or(""),
                                                [this] { return InterruptedReason(stop_); });
  server_version_ = version.ok() ? *version : "";
  if (!version.ok()) out.bench.server_version_error = version.error().message;
  return true;
}

void SglangSampleEngine::Benchmark(const run::SampleContext& ctx,
                                   const std::vector<uintmax_t>& log_from, run::SampleOutput& out) {
  const bool deployment = IsDeployment(spec_, ctx);
  loadgen::BenchOptions options = deployment
                                      ? DeploymentBenchOptions(spec_, ctx.id, ctx.workload_seed)
                                      : BenchOptionsFor(spec_, ctx.id, ctx.workload_seed);
  const auto deadline = After(evidence::SampleDeadlineS(spec_, ctx.id.concurrency));
  group_->ScanLogsFrom(log_from);
  // The load loop asks between events, often: the logs are read at most
  // every kLogScanInterval.
  auto next_scan = Clock::now();
  std::optional<Clock::time_point> fatal_seen;
  std::string died, late;
  bool interrupted = false;
  options.abort_check = [&]() -> std::string {
    if (StopRequested(stop_)) {
      interrupted = true;
      return InterruptedReason(stop_);
    }
    if (auto exited = group_->FirstExited()) {
      died = *exited + " during the benchmark";
      return died;
    }
    if (Clock::now() >= next_scan) {
      next_scan = Clock::now() + kLogScanInterval;
      if (auto fatal = group_->FatalLine()) {
        // The rest of a crash's lines (the error after the traceback) are
        // given one more scan to arrive.
        if (!fatal_seen) fatal_seen = Clock::now();
        if (Clock::now() - *fatal_seen >= kLogScanInterval) {
          died = *group_->ExitedElseFatal() + " during the benchmark";
          return died;
        }
      }
    }
    if (Clock::now() >= deadline) {
      late = fmt::format("the benchmark passed its {:.0f} s deadline",
                         evidence::SampleDeadlineS(spec_, ctx.id.concurrency));
      return late;
    }
    return "";
  };
  Result<loadgen::BenchResult> result = loadgen::RunBench(options);
  // Records cut short by an interrupt measure nothing and judge nothing.
  if (interrupted) {
    Interrupted(out, "during the benchmark");
    return;
  }
  // A node that died can end the benchmark before a poll saw it: its peers
  // fail every request at once (SGLang's do too), so look once more.
  if (died.empty() && late.empty()) {
    if (auto failure = group_->ExitedElseFatal()) died = *failure + " during the benchmark";
  }
  if (result.ok()) {
    out.records = result->records;
    out.bench.client = loadgen::BenchClientSummaryOf(options, *result);
    if (!options.more_urls.empty()) out.bench.instances = loadgen::BenchInstances(options, *result);
    // Several instances: each one's hosts beside its URL and requests.
    if (ctx.id.layout.instances > 1) {
      out.bench.instances = run::InstancesEvidence(spec_, *ctx.plan, out.records);
      const std::vector<std::string> urls = loadgen::ServerUrls(options);
      for (size_t i = 0; i < out.bench.instances.size() && i < urls.size(); ++i)
        out.bench.instances[i].url = urls[i];
    }
  }
  if (!died.empty()) {
    SetVerdict(out, evidence::Verdict::kEngineDied,
               result.ok() ? died : died + ": " + result.error().message);
  } else if (!late.empty()) {
    SetVerdict(out, evidence::Verdict::kTimeout, late);
  } else if (!result.ok()) {
    SetVerdict(out, evidence::Verdict::kRequestsFailed,
               "the benchmark failed: " + result.error().message);
  } else {
    for (const auto& r : out.records)
      if (r.status == workload::RequestStatus::kTimeout) {
        SetVerdict(out, evidence::Verdict::kTimeout,
                   fmt::format("request {} timed out: {}", r.id, r.error));
        break;
      }
  }
}

void SglangSampleEngine::EndSample(const run::SampleContext& ctx, run::SampleOutput& out) {
  const bool keep = spec_.lifecycle.reuse_server && ctx.next_same_layout &&
                    out.verdict == evidence::Verdict::kOk && !group_->FirstExited();
  if (keep) return;
  for (const auto& note : StopServers()) out.bench.stop_notes.push_back(note);
  const std::optional<std::string> held = WaitMemoryReleased();
  // Whether the servers freed their GPUs is part of the sample's verdict:
  // cut short, it is unknown, so the sample runs again on resume.
  if (!held) {
    Interrupted(out, "while waiting for its servers' GPU memory to be released");
    return;
  }
  release_pending_ = !held->empty();
  if (!held->empty()) SetVerdict(out, evidence::Verdict::kTimeout, *held);
  // nsys writes its report when the profiled server exits; a reused
  // server's report covers every sample it served.
  if (spec_.profile.nsys && server_sample_)
    out.profiles = CollectNsysProfiles(launcher_, spec_, *ctx.plan, *server_sample_);
}

bool SglangSampleEngine::Interrupted(run::SampleOutput& out, const std::string& where) {
  out.interrupted = true;
  out.detail = "interrupted " + where;
  // An interrupted sample's manifest line keeps its detail alone: the notes
  // of a stop made before the interrupt (servers killed at a second
  // signal) go there too.
  for (const auto& note : out.bench.stop_notes) out.detail += "; " + note;
  for (const auto& note : StopServers()) out.detail += "; " + note;
  release_pending_ = true;
  return false;
}

std::vector<std::string> SglangSampleEngine::StopServers() { return group_->Stop(kill_now_); }

void SglangSampleEngine::Finish() {
  if (group_) StopServers();
}

}  // namespace ppsearch::sglang
