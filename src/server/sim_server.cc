#include "server/sim_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <thread>

namespace ppsearch::server {
namespace {

// How long a node >= 1 keeps retrying node 0 at --dist-init-addr.
constexpr double kJoinTimeoutS = 300;
// Worker threads answering HTTP: every open keep-alive connection and every
// request being answered holds one, so this bounds a benchmark's concurrency.
constexpr size_t kHttpThreads = 512;

}  // namespace

SimServer::SimServer(ServerArgs args, std::unique_ptr<Deployment> deployment, ServerLog* log)
    : args_(std::move(args)),
      d_(std::move(deployment)),
      log_(log),
      batch_logger_(d_->memory.max_total_tokens, std::max(args_.decode_log_interval, 1)) {}

SimServer::~SimServer() {
  StopHttp();
  leader_.Close();
  follower_.Close();
  if (engine_) engine_->Stop();
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
  http_ = std::make_unique<httplib::Server>();
  http_->new_task_queue = [] { return new httplib::ThreadPool(kHttpThreads); };
  if (args_.node_rank == 0) {
    AddLeaderRoutes();
  } else {
    AddFollowerRoutes();
  }
  if (!http_->bind_to_port(args_.host, args_.port)) {
    Shutdown(ServeOutcome::kStartupFailed,
             fmt::format("cannot listen on {}:{}; is another server using the port?", args_.host,
                         args_.port));
    return false;
  }
  http_thread_ = std::thread([this] { http_->listen_after_bind(); });
  return true;
}

void SimServer::StopHttp() {
  if (http_) http_->stop();
  if (http_thread_.joinable()) http_thread_.join();
}

ServeResult SimServer::Run(const std::atomic<bool>& stop_requested) {
  startup_unix_s_ = UnixNowS();
  log_->Info("server_args=" + ServerArgsRepr(args_));
  return args_.node_rank == 0 ? RunLeader(stop_requested) : RunFollower(stop_requested);
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
    for (const auto& line : StartupLines(args_, *d_, 0)) log_->Info(line.message, line.prefix);
    if (args_.fault.slow_start_s > 0)
      WaitFor(stop_requested, args_.fault.slow_start_s, [] { return false; });
  }
  if (!shutting_down()) {
    engine_->Start();
    if (!args_.fault.never_ready) {
      ready_ = true;
      log_->Info("The server is fired up and ready to roll!");
    }
    WaitFor(stop_requested, 1e12, [] { return false; });
  }
  ready_ = false;
  if (result_.outcome != ServeOutcome::kStopped)
    engine_->FailAll("The server is shutting down: " + result_.message);
  // Let handlers that were just answered flush their last bytes.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  StopHttp();
  leader_.Close();
  engine_->Stop();
  return result_;
}

ServeResult SimServer::RunFollower(const std::atomic<bool>& stop_requested) {
  auto addr = SplitHostPort(args_.dist_init_addr);
  std::atomic<bool> joined{false};
  std::thread join_thread([&] {
    Status st = follower_.Join(addr->first, addr->second, args_.node_rank, args_.nnodes,
                               kJoinTimeoutS, [this] {
                                 log_->Info(
                                     "Lost the connection to node 0 at --dist-init-addr (NCCL "
                                     "error: remote process exited or there "
                                     "was a network error). Exiting.");
                                 Shutdown(ServeOutcome::kNodeLost, "node 0 left the deployment");
                               });
    if (!st.ok()) {
      Shutdown(ServeOutcome::kStartupFailed, st.error().message);
    } else {
      joined = true;
      cv_.notify_all();
    }
  });
  WaitFor(stop_requested, 1e9, [&] { return joined.load(); });
  if (!shutting_down()) {
    for (const auto& line : StartupLines(args_, *d_, args_.node_rank))
      log_->Info(line.message, line.prefix);
    // SGLang's launch_dummy_health_check_server, once the schedulers are up.
    if (StartHttp()) {
      ready_ = true;
      WaitFor(stop_requested, 1e12, [] { return false; });
    }
  }
  follower_.Close();  // also ends a join still retrying
  join_thread.join();
  StopHttp();
  return result_;
}

void SimServer::OnBatch(const sim::BatchLaunch& launch) {
  const std::string line = batch_logger_.Line(launch);
  if (line.empty()) return;
  if (!launch.is_prefill) {
    const auto pos = line.find("gen throughput (token/s): ");
    if (pos != std::string::npos)
      last_gen_throughput_ = std::strtod(line.c_str() + pos + 26, nullptr);
  }
  log_->Info(line, ScopePrefix(0, args_.pp_size, 0, args_.tp_size));
}

}  // namespace ppsearch::server
