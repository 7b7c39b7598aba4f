#include "sglang/server_group.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "analysis/log_scan.h"
#include "evidence/server_state_file.h"
#include "loadgen/bench_client.h"
#include "loadgen/load_loop.h"
#include "run/redact.h"
#include "run/server_state.h"
#include "sglang/commands.h"
#include "util/files.h"
#include "util/stoppable_wait.h"

namespace ppsearch::sglang {
namespace {

using Clock = std::chrono::steady_clock;

// How long a node whose log printed a fatal line during start-up gets to exit.
constexpr auto kExitAfterFatalLine = std::chrono::seconds(2);

double SecondsLeft(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// False when `stop` was set before the time was up.
bool SleepUntilOr(Clock::time_point deadline, double seconds, const std::atomic<bool>* stop) {
  const auto until = std::min(deadline, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                           std::chrono::duration<double>(seconds)));
  return SleepUnlessStopped(until, stop);
}

}  // namespace

std::string ServerGroup::SlotName(size_t slot) const {
  return slot < slots_.size() ? slots_[slot].name : "server " + std::to_string(slot);
}

Status ServerGroup::Start(const evidence::SampleId& sample, const std::string& run_id) {
  std::vector<ServerSlot> slots;
  for (size_t n = 0; n < spec_.cluster.hosts.size(); ++n) {
    const int node = static_cast<int>(n);
    ServerSlot slot;
    slot.node = node;
    slot.host = spec_.cluster.hosts[n].name;
    slot.name = fmt::format("node {} ({})", node, slot.host);
    slot.command = ServerCommand(spec_, sample, node);
    slot.log_path = paths_.live_log(sample, slot.host);
    slot.kept_log_path = paths_.service(sample, slot.host);
    slots.push_back(std::move(slot));
  }
  // Every instance's first node answers for its instance, one after another.
  std::vector<ReadyProbe> probes;
  for (int head : InstanceHeads(spec_, sample.layout))
    probes.push_back({NodeUrl(spec_, head), true});
  if (probes.empty()) probes.push_back({NodeUrl(spec_, 0), true});
  return StartSlots(sample.layout, sample, run_id, std::move(slots), std::move(probes));
}

Status ServerGroup::StartSlots(const spec::LayoutSpec& layout, const evidence::SampleId& sample,
                               const std::string& run_id, std::vector<ServerSlot> slots,
                               std::vector<ReadyProbe> probes) {
  Stop();
  layout_ = layout;
  slots_ = std::move(slots);
  probes_ = std::move(probes);
  log_paths_.clear();
  scans_.clear();
  fatal_.reset();
  for (size_t i = 0; i < slots_.size(); ++i) {
    const ServerSlot& slot = slots_[i];
    launch::ServerLaunch l;
    l.node = slot.node;
    l.argv = slot.command.argv;
    l.env = slot.command.env;
    l.step = slot.command.step;
    l.log_path = slot.log_path;
    // A secret the server prints (SGLang's server_args line holds
    // api_key='...') is redacted before the log reaches the disk.
    if (const run::Redactor redact(spec_); !redact.empty()) {
      l.output_filter = {SelfExecutable(), "redact-log"};
      l.filter_env = {{run::kRedactSecretsVariable, redact.ToJsonText()}};
    }
    l.log_root = paths_.root;
    l.tag = ServerTag(run_id, sample, slot.host) + (slot.router ? "-router" : "");
    PPS_RETURN_IF_ERROR(MakeDirs(DirName(l.log_path)));
    log_paths_.push_back(l.log_path);
    Result<std::unique_ptr<launch::ServerProcess>> p = launcher_.StartServer(l);
    if (!p.ok()) {
      Stop();
      return MakeError("cannot start " + std::string(slot.router ? "" : "the server on ") +
                       slot.name + ": " + p.error().message);
    }
    Server s;
    s.slot = static_cast<int>(i);
    s.process = std::move(p).value();
    s.record = s.process->Record();
    s.record.cleanup = slot.command.cleanup;
    s.log_path = l.log_path;
    s.kept_log_path = slot.kept_log_path;
    // Written before waiting on anything: a crash from here on leaves a record to stop.
    Status saved = evidence::SaveServerState(paths_, s.record);
    servers_.push_back(std::move(s));
    if (!saved.ok()) {
      Stop();
      return saved;
    }
  }
  return Status::Ok();
}

std::optional<std::string> ServerGroup::FirstExited() {
  for (Server& s : servers_) {
    if (!s.exit) s.exit = s.process->Poll();
    if (s.exit) return SlotName(s.slot) + " " + s.exit->Describe();
  }
  return std::nullopt;
}

void ServerGroup::ScanLogsFrom(const std::vector<uintmax_t>& offsets) {
  scans_.assign(log_paths_.size(), LogScan{});
  for (size_t n = 0; n < scans_.size() && n < offsets.size(); ++n) scans_[n].offset = offsets[n];
  fatal_.reset();
}

std::optional<std::string> ServerGroup::FatalLine() {
  if (scans_.size() != log_paths_.size()) ScanLogsFrom({});
  for (size_t n = 0; n < scans_.size(); ++n) {
    LogScan& scan = scans_[n];
    const std::string fresh = LogSince(n, scan.offset);
    // A line still being written is read whole on a later call.
    const size_t end = fresh.rfind('\n');
    if (end == std::string::npos) continue;
    const std::string lines = fresh.substr(0, end + 1);
    for (const analysis::LogFinding& f : analysis::ScanLog(lines, log_paths_[n])) {
      if (!analysis::EndsTheServer(f.kind)) continue;
      // A crash prints "Scheduler hit an exception", the traceback, then
      // the error: the most severe line names it, the earliest breaks ties.
      if (fatal_ && f.kind >= fatal_->kind) continue;
      fatal_ = f;
      fatal_->file = SlotName(n);
      fatal_->line += scan.lines;
    }
    scan.offset += lines.size();
    scan.lines += static_cast<int>(std::count(lines.begin(), lines.end(), '\n'));
  }
  if (!fatal_) return std::nullopt;
  return fmt::format("{} log line {}: {}", fatal_->file, fatal_->line, fatal_->text);
}

std::optional<std::string> ServerGroup::ExitedElseFatal() {
  if (auto exited = FirstExited()) return exited;
  std::optional<std::string> fatal = FatalLine();
  if (!fatal) return std::nullopt;
  const auto until = Clock::now() + kExitAfterFatalLine;
  while (Clock::now() < until) {
    if (auto exited = FirstExited()) return exited;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return FatalLine();
}

Status ServerGroup::WaitReady(const std::atomic<bool>* stop) {
  const auto& lc = spec_.lifecycle;
  // Every call below that can wait (a probe on a server that accepts but
  // does not answer, the 1-token request) is ended by the stop flag too.
  const std::function<std::string()> interrupted = [stop] { return InterruptedReason(stop); };
  const auto stopped = [] {
    return MakeError("interrupted while waiting for the servers to become ready");
  };
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(lc.start_timeout_s));
  size_t ready = 0;
  std::string last = "no answer yet";
  auto exited_error = [this](const std::string& exited) {
    size_t slot = 0;
    for (const Server& s : servers_)
      if (s.exit) slot = static_cast<size_t>(s.slot);
    // The copy the sample keeps: the streamed one in live/ is removed.
    return MakeError(exited + " before the server was ready; the last lines of its log (" +
                     slots_[slot].kept_log_path + "):\n" + LogTail(slot, 15));
  };
  while (ready < probes_.size()) {
    const ReadyProbe& probe = probes_[ready];
    if (StopRequested(stop)) return stopped();
    if (auto exited = FirstExited()) return exited_error(*exited);
    if (FatalLine()) {
      // A process that prints its failure usually exits a moment later; its
      // exit status and log tail say more than the line alone.
      ExitedElseFatal();
      if (auto exited = FirstExited()) return exited_error(*exited);
      return MakeError(*FatalLine() + " before the server was ready");
    }
    const double left = SecondsLeft(deadline);
    if (left <= 0) break;
    const int64_t probe_ms = static_cast<int64_t>(std::clamp(left, 0.1, 10.0) * 1000);
    const std::string route = probe.generate ? "/health_generate" : "/health";
    Result<loadgen::SimpleResponse> health =
        loadgen::Get(probe.url + route, probe_ms, 2048, "", interrupted);
    if (!health.ok()) {
      last = health.error().message;
    } else if (health->http_status != 200) {
      last = fmt::format("{} answered HTTP {}", route, health->http_status);
    } else if (!probe.generate) {
      ++ready;
      last = "no answer yet";
      continue;
    } else {
      // Proven with a real generation: one request, one token.
      loadgen::BenchOptions one;
      one.url = probe.url;
      one.num_requests = 1;
      one.input_tokens = 16;
      one.output_tokens = 1;
      one.timeout_s = std::clamp(left, 1.0, 600.0);
      one.prompt.seed = 7;
      one.api_key = spec_.engine.ArgString("api-key").value_or("");
      one.abort_check = interrupted;
      Result<loadgen::BenchResult> r = loadgen::RunBench(one);
      if (r.ok() && !r->records.empty() && r->records[0].ok()) {
        ++ready;
        last = "no answer yet";
        continue;
      }
      last = r.ok() ? "the 1-token request failed: " + r->records[0].error : r.error().message;
    }
    if (!SleepUntilOr(deadline, lc.poll_interval_s, stop)) return stopped();
  }
  if (StopRequested(stop)) return stopped();
  if (ready == probes_.size()) return Status::Ok();
  return MakeError(fmt::format("the server did not become ready within {} s ({}: {})",
                               lc.start_timeout_s, probes_[ready].url, last));
}

std::vector<std::string> ServerGroup::Stop(const std::atomic<bool>* kill_now) {
  std::vector<std::string> notes;
  if (servers_.empty()) return notes;
  const auto& lc = spec_.lifecycle;
  // Marks where the sample ends in every log (the log scan stops there)
  // before any node is signalled: a peer that logs node 0's exit before its
  // own SIGTERM arrives logs it after its marker.
  for (Server& s : servers_) {
    if (!s.exit) s.exit = s.process->Poll();
    if (!s.exit)
      AppendLineBelow(paths_.root, s.log_path.substr(paths_.root.size() + 1),
                      std::string(analysis::kStopMarker) + ": SIGTERM to its process tree");
  }
  for (Server& s : servers_)
    if (!s.exit) s.process->Signal(SIGTERM);
  const auto grace = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(lc.stop_grace_s));
  auto all_exited = [&] {
    bool all = true;
    for (Server& s : servers_) {
      if (!s.exit) s.exit = s.process->Poll();
      all = all && s.exit.has_value();
    }
    return all;
  };
  while (!all_exited() && Clock::now() < grace && !StopRequested(kill_now))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (Server& s : servers_) {
    if (s.exit) continue;
    notes.push_back(Clock::now() < grace ? SlotName(s.slot) + " was killed at a second interrupt"
                                         : fmt::format("{} ignored SIGTERM for {} s and was killed",
                                                       SlotName(s.slot), lc.stop_grace_s));
    s.process->Signal(SIGKILL);
    if (!s.record.cleanup.empty())
      launcher_.RunStep(launch::SudoStep::kContainer, slots_[s.slot].node, s.record.cleanup,
                        lc.host_timeout_s);
  }
  const auto hard = Clock::now() + std::chrono::seconds(10);
  while (!all_exited() && Clock::now() < hard)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<Server> left;
  for (Server& s : servers_) {
    if (s.exit) {
      evidence::RemoveServerState(paths_, s.record);
    } else {
      notes.push_back(SlotName(s.slot) + " did not exit after SIGKILL; its state file stays");
    }
  }
  servers_.clear();
  return notes;
}

std::optional<int> ServerGroup::OpenLog(size_t node) const {
  if (node >= log_paths_.size()) return std::nullopt;
  const std::string& path = log_paths_[node];
  if (path.rfind(paths_.root + "/", 0) != 0) return std::nullopt;
  // Never through a link planted in live/: its target is not this server's output.
  Result<int> fd = OpenBelow(paths_.root, path.substr(paths_.root.size() + 1), O_RDONLY, 0, false);
  if (!fd.ok()) return std::nullopt;
  return *fd;
}

std::vector<uintmax_t> ServerGroup::LogEnds() const {
  std::vector<uintmax_t> out;
  for (size_t n = 0; n < log_paths_.size(); ++n) {
    struct stat st {};
    const std::optional<int> fd = OpenLog(n);
    out.push_back(fd && ::fstat(*fd, &st) == 0 ? static_cast<uintmax_t>(st.st_size) : 0);
    if (fd) ::close(*fd);
  }
  return out;
}

std::string ServerGroup::LogSince(size_t node, uintmax_t offset) const {
  const std::optional<int> fd = OpenLog(node);
  if (!fd) return "";
  std::string text;
  char buffer[1 << 16];
  off_t at = static_cast<off_t>(offset);
  for (;;) {
    const ssize_t n = ::pread(*fd, buffer, sizeof(buffer), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    at += n;
  }
  ::close(*fd);
  return text;
}

std::string ServerGroup::LogTail(size_t node, int lines) const {
  const std::string text = LogSince(node, 0);
  size_t at = text.size();
  for (int i = 0; i <= lines && at > 0; ++i) {
    at = text.rfind('\n', at - 1);
    if (at == std::string::npos) {
      at = 0;
      break;
    }
  }
  std::string tail = text.substr(at == 0 ? 0 : at + 1);
  std::string indented;
  size_t start = 0;
  while (start < tail.size()) {
    const size_t end = tail.find('\n', start);
    indented += "    " + tail.substr(start, end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return indented.empty() ? "    (empty)\n" : indented;
}

}  // namespace ppsearch::sglang
