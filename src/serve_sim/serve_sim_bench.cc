// What serve-sim's HTTP path adds to TTFT: the client's first-token time
// minus the server's own (meta_info.first_token_ts), closed loop at C = 8, 16
// and 256, 4,096-token prompts prefilled a chunk at a time, --time-scale 20.
// Target (docs/tools.md): p99 under 1 ms at every concurrency. The server runs
// in this process on its own threads, as `ppsearch serve-sim` runs it; run
// from the repository root (the model config is read from data/).
//
// BM_ServeSimOneTokenRequests: the request rate the load generator reaches
// against serve-sim with 1-token answers at C = 256, and the CPU each side
// spends per request. Target: serve-sim spends no more per request than
// the client, so it is never what limits a bench (with a thread per
// connection it spent about 220 us against the client's 115 us here).

#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "loadgen/bench_client.h"
#include "serve_sim/deployment.h"
#include "serve_sim/sim_server.h"
#include "stats/stats.h"
#include "testkit/free_port.h"
#include "util/files.h"

namespace ppsearch::serve_sim {
namespace {

// True once GET /health answers 200, within `timeout_s`.
bool WaitHealthy(int port, double timeout_s) {
  httplib::Client client("127.0.0.1", port);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    auto res = client.Get("/health");
    if (res && res->status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// serve-sim on its own threads in this process, as `ppsearch serve-sim`
// runs it, ready to answer (or `error` says why not).
class InProcessServer {
 public:
  InProcessServer(int port, double time_scale) {
    args_.model_path = "data/models/qwen3-235b-a22b";
    args_.tp_size = 8;
    args_.port = port;
    args_.time_scale = time_scale;
    if (Status s = ValidateServerArgs(args_); !s.ok()) {
      error = s.error().message;
      return;
    }
    auto deployment = BuildDeployment(args_);
    if (!deployment.ok()) {
      error = deployment.error().message;
      return;
    }
    sink_ = std::fopen("/dev/null", "w");
    log_ = std::make_unique<ServerLog>(sink_);
    server_ = std::make_unique<SimServer>(args_, std::move(deployment.value()), log_.get());
    serving_ = std::thread([this] { server_->Run(stop_); });
    if (!WaitHealthy(port, 30)) error = "serve-sim did not become ready in 30 s";
  }
  ~InProcessServer() {
    stop_ = true;
    if (serving_.joinable()) serving_.join();
    server_.reset();
    if (sink_) std::fclose(sink_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(args_.port); }
  std::string error;

 private:
  ServerArgs args_;
  std::FILE* sink_ = nullptr;
  std::unique_ptr<ServerLog> log_;
  std::unique_ptr<SimServer> server_;
  std::atomic<bool> stop_{false};
  std::thread serving_;
};

double ProcessCpuS() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void BM_ServeSimFirstTokenGap(benchmark::State& state) {
  const int concurrency = static_cast<int>(state.range(0));
  InProcessServer server(ppsearch::testing::FreePort(), 20);
  if (!server.error.empty()) {
    state.SkipWithError(server.error.c_str());
    return;
  }
  loadgen::BenchOptions o;
  o.url = server.url();
  o.concurrency = concurrency;
  o.num_requests = std::max(concurrency * 2, 64);
  o.input_tokens = 4096;
  o.output_tokens = 4;
  o.timeout_s = 30;
  o.warmup_requests = concurrency;
  std::vector<double> gaps;
  for (auto _ : state) {
    if (state.error_occurred()) break;
    auto r = loadgen::RunBench(o);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      break;
    }
    for (const auto& rec : r->records)
      if (rec.ok() && rec.server_first_token_unix_s > 0)
        gaps.push_back(r->sample_start_unix_s + rec.first_token_ns * 1e-9 -
                       rec.server_first_token_unix_s);
  }
  if (gaps.empty()) return;
  state.counters["gap_p50_ms"] = stats::Percentile(gaps, 50) * 1e3;
  state.counters["gap_p90_ms"] = stats::Percentile(gaps, 90) * 1e3;
  state.counters["gap_p99_ms"] = stats::Percentile(gaps, 99) * 1e3;
}
BENCHMARK(BM_ServeSimFirstTokenGap)
    ->Arg(8)
    ->Arg(16)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

void BM_ServeSimOneTokenRequests(benchmark::State& state) {
  // x1000: a 128-token prefill is microseconds, so the HTTP path is what is timed.
  InProcessServer server(ppsearch::testing::FreePort(), 1000);
  if (!server.error.empty()) {
    state.SkipWithError(server.error.c_str());
    return;
  }
  loadgen::BenchOptions o;
  o.url = server.url();
  o.concurrency = 256;
  o.num_requests = static_cast<int>(state.range(0));
  o.input_tokens = 128;
  o.output_tokens = 1;
  o.timeout_s = 30;
  // Warmed once outside the timing: connections open, pools grown.
  loadgen::BenchOptions warm = o;
  warm.num_requests = 1024;
  if (auto r = loadgen::RunBench(warm); !r.ok()) {
    state.SkipWithError(r.error().message.c_str());
    return;
  }
  double requests = 0, wall_s = 0, client_cpu_s = 0, process_cpu_s = 0;
  for (auto _ : state) {
    const double cpu0 = ProcessCpuS();
    auto r = loadgen::RunBench(o);
    const double cpu1 = ProcessCpuS();
    if (!r.ok() || r->metrics.requests_completed != o.num_requests) {
      state.SkipWithError(r.ok() ? "some requests failed" : r.error().message.c_str());
      return;
    }
    // The process's CPU less the client thread's is serve-sim's (and the
    // client's planning of the sample, a few milliseconds).
    requests += o.num_requests;
    wall_s += r->metrics.duration_s;
    client_cpu_s += r->client_cpu_s;
    process_cpu_s += cpu1 - cpu0;
  }
  state.counters["req_per_s"] = requests / wall_s;
  state.counters["client_cpu_us_per_req"] = client_cpu_s / requests * 1e6;
  state.counters["server_cpu_us_per_req"] = (process_cpu_s - client_cpu_s) / requests * 1e6;
}
BENCHMARK(BM_ServeSimOneTokenRequests)
    ->Arg(20000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace
}  // namespace ppsearch::serve_sim
