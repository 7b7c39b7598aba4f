// Client throughput on loopback: 1-token streamed answers from the scripted
// server at concurrency 256. Target: >= 2,000 requests/s with the client
// (this thread) using under one core; client_cpu_share is its CPU time over
// the sample's wall time.

#include <benchmark/benchmark.h>

#include "bench/bench_client.h"
#include "bench/scripted_server_testing.h"

namespace ppsearch::bench {
namespace {

constexpr const char kOneTokenAnswer[] =
    "data: {\"text\":\" The\",\"output_ids\":[578],\"meta_info\":{\"id\":\"r\",\"finish_reason\":"
    "{\"type\":\"length\",\"length\":1},\"prompt_tokens\":128,\"completion_tokens\":1,"
    "\"cached_tokens\":0}}\n\ndata: [DONE]\n\n";

void BM_ClientOneTokenRequests(benchmark::State& state) {
  auto server = ScriptedServer::Start([](const ScriptedRequest&) {
    ScriptedResponse r;
    r.pieces.push_back({0, kOneTokenAnswer, false});
    return r;
  });
  if (!server.ok()) {
    state.SkipWithError(server.error().message.c_str());
    return;
  }
  BenchOptions o;
  o.url = (*server)->url();
  o.num_requests = static_cast<int>(state.range(1));
  o.concurrency = static_cast<int>(state.range(0));
  o.input_tokens = 128;
  o.output_tokens = 1;
  o.timeout_s = 30;
  double requests = 0, wall_s = 0, cpu_s = 0;
  for (auto _ : state) {
    Result<BenchResult> result = RunBench(o);
    if (!result.ok() || result->metrics.requests_completed != o.num_requests) {
      state.SkipWithError(result.ok() ? "some requests failed" : result.error().message.c_str());
      return;
    }
    requests += result->metrics.requests_completed;
    wall_s += result->metrics.duration_s;
    cpu_s += result->client_cpu_s;
  }
  state.counters["req_per_s"] = requests / wall_s;
  state.counters["client_cpu_share"] = cpu_s / wall_s;
  state.counters["client_cpu_us_per_req"] = cpu_s / requests * 1e6;
}
BENCHMARK(BM_ClientOneTokenRequests)
    ->Args({256, 10000})
    ->Args({16, 5000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace
}  // namespace ppsearch::bench
