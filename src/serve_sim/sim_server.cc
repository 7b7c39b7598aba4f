#include "serve_sim/sim_server.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <sstream>
#include <thread>

#include "launch/process.h"

namespace ppsearch::serve_sim {
namespace {

// How long a node >= 1 keeps retrying node 0 at --dist-init-addr.
constexpr double kJoinTimeoutS = 300;
// A new connection silent this long mid-request is cut; cpp-httplib, used
// before, waited 5 s.
constexpr double kReadTimeoutS = 2;
// A client that reads nothing of its answer this long is cut, and idle
// keep-alive connections are closed after it, as uvicorn's
// timeout_keep_alive (5 s) closes SGLang's.
constexpr double kKeepAliveTimeoutS = 5;

}  // namespace

SimServer::SimServer(ServerArgs args, std::unique_ptr<Deployment> deployment, ServerLog* log)
    : args_(std::move(args)),
      d_(std::move(deployment)),
      log_(log),
      gpu_registry_(args_.gpu_state_dir, static_cast<int>(::getpid())),
      batch_logger_(d_->memory.max_total_tokens, std::max(args_.decode_log_interval, 1)) {}

SimServer::~SimServer() {
  StopHttp();
  leader_.Close();
  follower_.Close();
}

void SimServer::Shutdown(ServeOutcome outcome, const std::string& message) {
  {
    std::lock_guard lock(mu_);
    if (shutting_down_) return;
    result_ = {outcome, message};
    shutting_down_ = true;
  }
  cv_.notify_all();
}

template <typename Pred>
bool SimServer::WaitFor(const std::atomic<bool>& stop_requested, double max_s, Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_s);
  std::unique_lock lock(mu_);
  while (!shutting_down_) {
    if (pred()) return true;
    if (stop_requested) {
      lock.unlock();
      Shutdown(ServeOutcome::kStopped, "stopped by signal");
      lock.lock();
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return false;
}

bool SimServer::StartHttp() {
  // SGLang's --api-key guards node 0's API; the dummy health server of the
  // other nodes takes none.
  if (args_.node_rank == 0)
    for (const ExtraFlag& f : args_.extra_flags)
      if (f.name == "api-key" && f.value && !f.value->empty()) api_key_ = ApiKeyCheck(*f.value);
  HttpFrontOptions options;
  options.read_timeout_s = kReadTimeoutS;
  options.write_timeout_s = kKeepAliveTimeoutS;
  http_ = std::make_unique<HttpFront>([this](const Call& call) { Dispatch(call); },
                                      [this](const HttpRequest& q) {
                                        if (guard_)
                                          guard_->RequestEnded(q.remote_ip, q.remote_port);
                                      },
                                      options);
  if (Status st = http_->Listen(args_.host, args_.port); !st.ok()) {
    Shutdown(ServeOutcome::kStartupFailed, st.error().message);
    return false;
  }
  guard_ = std::make_unique<ConnectionGuard>(http_->listen_fd());
  // A prefill server's bootstrap server, where decode servers fetch the KV.
  if (args_.node_rank == 0 && args_.disaggregation_mode == "prefill") {
    if (Status st = http_->Listen(args_.host, args_.disaggregation_bootstrap_port); !st.ok()) {
      Shutdown(ServeOutcome::kStartupFailed, "bootstrap server: " + st.error().message);
      return false;
    }
  }
  // The engine runs on the loop that writes its streams (realtime_engine.h).
  if (engine_) http_->SetTicker([this] { return engine_->RunDue(); });
  http_->Start();
  return true;
}

void SimServer::StopHttp() {
  if (http_) http_->Stop();
}

void SimServer::RegisterGpus() {
  std::lock_guard lock(served_mu_);
  RegisterGpusLocked(ServedMemory(*d_, served_));
}

void SimServer::RegisterGpusLocked(const memory::MemoryPlan& memory) {
  if (args_.gpu_state_dir.empty() || released_) return;
  GpuRegistration r;
  r.pid = static_cast<int>(::getpid());
  r.start_ticks = launch::ProcessStartTicks(::getpid()).value_or(0);
  r.process_name = "ppsearch serve-sim";
  r.node_rank = args_.node_rank;
  r.gpus = NodeGpuMemory(*d_, memory, args_.node_rank, args_.gpu_state_dir);
  // nvidia-smi shows whole MiB: a batch that moves no GPU by one is not written.
  std::vector<double> mib;
  for (const auto& g : r.gpus) mib.push_back(std::round(g.used_mib.value_or(0)));
  if (!registered_mib_.empty() && mib == registered_mib_) return;
  registered_mib_ = mib;
  if (Status st = gpu_registry_.Register(r); !st.ok())
    log_->Info("Cannot register GPU memory in --gpu-state-dir: " + st.error().message);
}

void SimServer::ReleaseGpus(double until_unix_s) {
  std::lock_guard lock(served_mu_);
  released_ = true;
  gpu_registry_.Release(until_unix_s);
}

memory::ServedBatches SimServer::served() const {
  std::lock_guard lock(served_mu_);
  return served_;
}

void SimServer::OnServed(const sim::BatchShape* prefill, int64_t decode) {
  if (shutting_down()) return;
  std::lock_guard lock(served_mu_);
  const bool grew =
      (prefill != nullptr && sim::AddToFront(served_.prefill, *prefill)) || decode > served_.decode;
  if (!grew) return;
  served_.decode = std::max(served_.decode, decode);
  const memory::MemoryPlan memory = ServedMemory(*d_, served_);
  for (int stage : StagesOnNode(*d_, args_.node_rank)) {
    if (stage >= static_cast<int>(memory.stages.size()) ||
        memory.stages[stage].peak_mib <= d_->hw.memory_mib)
      continue;
    const sglang_log::LogSetup setup = LogSetupFor(*d_);
    log_->Raw(
        sglang_log::FaultText("oom", setup, std::time(nullptr),
                              ScopePrefix(stage, setup.pp_size, 0, setup.tp_size, setup.ep_size)));
    Shutdown(ServeOutcome::kDied,
             fmt::format("node {} ran out of GPU memory: stage {} needs {:.0f} MiB of the GPU's "
                         "{:.0f} MiB with the activations of {}",
                         args_.node_rank, stage, memory.stages[stage].peak_mib, d_->hw.memory_mib,
                         memory.stages[stage].activation_peak));
    return;
  }
  RegisterGpusLocked(memory);
}

void SimServer::OnLeaderLine(const std::string& line) {
  std::istringstream in(line);
  std::string word, kind;
  in >> word;
  if (word == "ANSWERED") {
    DieAfterRequests();
    return;
  }
  if (word != "SERVED" || !(in >> kind)) return;
  sim::BatchShape shape;
  if (kind == "prefill" && in >> shape.tokens >> shape.logit_rows) OnServed(&shape, 0);
  int64_t decode = 0;
  if (kind == "decode" && in >> decode) OnServed(nullptr, decode);
}

ServeResult SimServer::Run(const std::atomic<bool>& stop_requested) {
  startup_unix_s_ = UnixNowS();
  log_->Info("server_args=" + ServerArgsRepr(args_));
  ServeResult r;
  if (args_.fault.exit_during_start) {
    // The weights start loading (memory is taken), then loading fails.
    RegisterGpus();
    const auto stages = StagesOnNode(*d_, args_.node_rank);
    const auto lines = sglang_log::StageStartupLines(LogSetupFor(*d_), stages.front());
    for (size_t i = 0; i < 3 && i < lines.size(); ++i)
      log_->Info(lines[i].message, lines[i].prefix);
    log_->Raw(FaultLogText("start", *d_));
    r = {ServeOutcome::kFaultExit, "model loading failed (--fault-exit-during-start)"};
  } else {
    r = args_.node_rank == 0 ? RunLeader(stop_requested) : RunFollower(stop_requested);
  }
  const double leak_s = args_.fault.leak_gpu_s;
  if (leak_s > 0 && !args_.gpu_state_dir.empty())
    log_->Info(fmt::format("GPU memory stays held {} s after exit (--fault-leak-gpu-s).", leak_s));
  ReleaseGpus(leak_s > 0 ? UnixNowS() + leak_s : 0);
  return r;
}

ServeResult SimServer::RunLeader(const std::atomic<bool>& stop_requested) {
  engine_ = std::make_unique<RealtimeEngine>(d_->scheduler, *d_->cost, args_.time_scale, clock_);
  engine_->SetBatchObserver(
      [this](const sim::BatchLaunch& b, const sim::OnlineEngine&) { OnBatch(b); });
  if (!StartHttp()) return result_;

  if (args_.nnodes > 1) {
    auto addr = SplitHostPort(args_.dist_init_addr);
    Status st = leader_.Listen(addr->first, addr->second, args_.nnodes, [this](int rank) {
      log_->Info(fmt::format(
          "Node {} lost: the connection to it at --dist-init-addr dropped (NCCL error: remote "
          "process exited or there was a network error). Failing in-flight requests and "
          "exiting.",
          rank));
      Shutdown(ServeOutcome::kNodeLost, fmt::format("node {} left the deployment", rank));
    });
    if (!st.ok()) {
      Shutdown(ServeOutcome::kStartupFailed, st.error().message);
    } else {
      log_->Info(fmt::format("Waiting for {} other node(s) to join at {}", args_.nnodes - 1,
                             args_.dist_init_addr));
      WaitFor(stop_requested, 1e9, [this] { return leader_.all_joined(); });
    }
  }
  if (!shutting_down()) {
    RegisterGpus();
    for (const auto& line : StartupLines(args_, *d_, 0)) log_->Info(line.message, line.prefix);
    if (args_.fault.slow_start_s > 0)
      WaitFor(stop_requested, args_.fault.slow_start_s, [] { return false; });
  }
  if (!shutting_down()) {
    engine_->Start();
    http_->Post([this] { http_->Kick(); });
    if (!args_.fault.never_ready) {
      ready_ = true;
      log_->Info("The server is fired up and ready to roll!");
    }
    WaitUntilDeath(stop_requested);
  }
  ready_ = false;
  if (result_.outcome == ServeOutcome::kDied) return result_;  // abrupt: nothing answered
  if (result_.outcome != ServeOutcome::kStopped)
    engine_->FailAll("The server is shutting down: " + result_.message);
  // Let answers just given (the failures above) reach their clients.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  StopHttp();
  leader_.Close();
  return result_;
}

void SimServer::WaitUntilDeath(const std::atomic<bool>& stop_requested) {
  const double die_s = args_.fault.die_after_s;
  WaitFor(stop_requested, die_s > 0 ? die_s : 1e12, [] { return false; });
  if (die_s > 0 && !shutting_down())
    Shutdown(ServeOutcome::kDied, fmt::format("node {} died --fault-die-after-s {} after it became "
                                              "ready",
                                              args_.node_rank, die_s));
}

void SimServer::DieAfterRequests() {
  Shutdown(ServeOutcome::kDied,
           fmt::format("node {} died --fault-die-after-requests {}, once the deployment had "
                       "answered that many requests",
                       args_.node_rank, args_.fault.die_after_requests));
}

ServeResult SimServer::RunFollower(const std::atomic<bool>& stop_requested) {
  auto addr = SplitHostPort(args_.dist_init_addr);
  std::atomic<bool> joined{false};
  std::thread join_thread([&] {
    Status st = follower_.Join(
        addr->first, addr->second, args_.node_rank, args_.nnodes, kJoinTimeoutS,
        [this] {
          log_->Info(
              "Lost the connection to node 0 at --dist-init-addr (NCCL "
              "error: remote process exited or there "
              "was a network error). Exiting.");
          Shutdown(ServeOutcome::kNodeLost, "node 0 left the deployment");
        },
        args_.fault.die_after_requests, [this](const std::string& line) { OnLeaderLine(line); });
    if (!st.ok()) {
      Shutdown(ServeOutcome::kStartupFailed, st.error().message);
    } else {
      joined = true;
      cv_.notify_all();
    }
  });
  WaitFor(stop_requested, 1e9, [&] { return joined.load(); });
  if (!shutting_down()) {
    RegisterGpus();
    for (const auto& line : StartupLines(args_, *d_, args_.node_rank))
      log_->Info(line.message, line.prefix);
    // SGLang's launch_dummy_health_check_server, once the schedulers are up.
    if (StartHttp()) {
      ready_ = true;
      WaitUntilDeath(stop_requested);
    }
  }
  if (result_.outcome == ServeOutcome::kDied) {
    join_thread.join();  // done: it joined
    return result_;
  }
  follower_.Close();  // also ends a join still retrying
  join_thread.join();
  StopHttp();
  return result_;
}

void SimServer::OnBatch(const sim::BatchLaunch& launch) {
  LogBatch(launch);
  // SGLang logs a batch as it schedules it, then runs it: the memory it
  // takes comes after its line. Node 0 tells the other nodes each batch
  // larger than those before (their stages run it too).
  const memory::ServedBatches before = served();
  if (launch.is_prefill) {
    const sim::BatchShape shape{launch.new_tokens, launch.logit_rows};
    std::vector<sim::BatchShape> front = before.prefill;
    if (!sim::AddToFront(front, shape)) return;
    if (args_.nnodes > 1)
      leader_.Tell(fmt::format("SERVED prefill {} {}", shape.tokens, shape.logit_rows));
    OnServed(&shape, 0);
    return;
  }
  if (launch.logit_rows <= before.decode) return;
  if (args_.nnodes > 1) leader_.Tell(fmt::format("SERVED decode {}", launch.logit_rows));
  OnServed(nullptr, launch.logit_rows);
}

void SimServer::LogBatch(const sim::BatchLaunch& launch) {
  const std::string line = batch_logger_.Line(launch);
  if (line.empty()) return;
  if (!launch.is_prefill) {
    const auto pos = line.find("gen throughput (token/s): ");
    if (pos != std::string::npos)
      last_gen_throughput_ = std::strtod(line.c_str() + pos + 26, nullptr);
  }
  log_->Info(line, ScopePrefix(0, args_.pp_size, 0, args_.tp_size, args_.ep_size));
}

}  // namespace ppsearch::serve_sim
