// What serve-sim's HTTP path adds to TTFT: the client's first-token time
// minus the server's own (meta_info.first_token_ts), closed loop at C = 8, 16
// and 256, 4,096-token prompts prefilled a chunk at a time, --time-scale 20.
// Target (docs/tools.md): p99 under 1 ms at every concurrency. The server runs
// in this process on its own threads, as `ppsearch serve-sim` runs it; run
// from the repository root (the model config is read from data/).

#include <benchmark/benchmark.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "bench/bench_client.h"
#include "server/deployment.h"
#include "server/sim_server.h"
#include "stats/stats.h"
#include "util/files.h"

namespace ppsearch::server {
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

void BM_ServeSimFirstTokenGap(benchmark::State& state) {
  const int concurrency = static_cast<int>(state.range(0));
  ServerArgs args;
  args.model_path = "data/models/qwen3-235b-a22b";
  args.tp_size = 8;
  args.port = 38400 + concurrency;  // one port per run: no wait for the last one's TIME_WAIT
  args.time_scale = 20;
  if (Status s = ValidateServerArgs(args); !s.ok()) {
    state.SkipWithError(s.error().message.c_str());
    return;
  }
  auto deployment = BuildDeployment(args);
  if (!deployment.ok()) {
    state.SkipWithError(deployment.error().message.c_str());
    return;
  }
  std::FILE* sink = std::fopen("/dev/null", "w");
  ServerLog log(sink);
  SimServer server(args, std::move(deployment.value()), &log);
  std::atomic<bool> stop{false};
  std::thread serving([&] { server.Run(stop); });
  if (!WaitHealthy(args.port, 30)) state.SkipWithError("serve-sim did not become ready in 30 s");

  bench::BenchOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(args.port);
  o.concurrency = concurrency;
  o.num_requests = std::max(concurrency * 2, 64);
  o.input_tokens = 4096;
  o.output_tokens = 4;
  o.timeout_s = 30;
  o.warmup_requests = concurrency;
  std::vector<double> gaps;
  for (auto _ : state) {
    if (state.error_occurred()) break;
    auto r = bench::RunBench(o);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      break;
    }
    for (const auto& rec : r->records)
      if (rec.ok() && rec.server_first_token_unix_s > 0)
        gaps.push_back(r->sample_start_unix_s + rec.first_token_ns * 1e-9 -
                       rec.server_first_token_unix_s);
  }
  stop = true;
  serving.join();
  std::fclose(sink);
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

}  // namespace
}  // namespace ppsearch::server
