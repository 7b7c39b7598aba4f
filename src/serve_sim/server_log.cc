#include "serve_sim/server_log.h"

#include <chrono>
#include <ctime>

namespace ppsearch::serve_sim {

ServerLog::ServerLog(std::FILE* out) : out_(out ? out : stdout) {}

ServerLog::~ServerLog() {
  if (owned_) std::fclose(out_);
}

Result<std::unique_ptr<ServerLog>> ServerLog::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return MakeError("cannot open --log-file '" + path + "' for appending");
  auto log = std::make_unique<ServerLog>(f);
  log->owned_ = true;
  return log;
}

void ServerLog::Info(const std::string& message, const std::string& prefix) {
  const std::string line = sglang_log::Line(std::time(nullptr), prefix, message);
  std::lock_guard lock(mu_);
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
}

void ServerLog::Raw(const std::string& text) {
  std::lock_guard lock(mu_);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

sglang_log::LogSetup LogSetupFor(const Deployment& d) {
  sglang_log::LogSetup setup = sglang_log::MakeLogSetup(
      d.model, d.hw, d.memory, d.plan.layout.tp, d.plan.layout.pp, d.scheduler.chunked_prefill_size,
      d.scheduler.max_prefill_tokens, d.pp_max_micro_batch_size);
  setup.context_len = d.scheduler.context_len;  // --context-length when the spec overrides it
  setup.ep_size = d.plan.layout.ep;
  return setup;
}

std::vector<LogLine> StartupLines(const ServerArgs&, const Deployment& d, int node) {
  const sglang_log::LogSetup setup = LogSetupFor(d);
  std::vector<LogLine> lines;
  for (int stage : StagesOnNode(d, node)) {
    auto stage_lines = sglang_log::StageStartupLines(setup, stage);
    lines.insert(lines.end(), stage_lines.begin(), stage_lines.end());
  }
  return lines;
}

std::string FaultLogText(const std::string& kind, const Deployment& d) {
  const sglang_log::LogSetup setup = LogSetupFor(d);
  return sglang_log::FaultText(kind, setup, std::time(nullptr),
                               ScopePrefix(0, setup.pp_size, 0, setup.tp_size, setup.ep_size));
}

}  // namespace ppsearch::serve_sim
