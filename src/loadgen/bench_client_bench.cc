// Client throughput on loopback: streamed answers from the scripted server
// at concurrency 256: 1-token answers, and many-token answers with and
// without chunk recording. Target: >= 2,000 requests/s with the client
// (this thread) using under one core; client_cpu_share is its CPU time over
// the sample's wall time.

#include <benchmark/benchmark.h>

#include "loadgen/bench_client.h"
#include "loadgen/scripted_server_testing.h"

namespace ppsearch::loadgen {
namespace {

constexpr const char kOneTokenAnswer[] =
    "data: {\"text\":\" The\",\"output_ids\":[578],\"meta_info\":{\"id\":\"r\",\"finish_reason\":"
    "{\"type\":\"length\",\"length\":1},\"prompt_tokens\":128,\"completion_tokens\":1,"
    "\"cached_tokens\":0}}\n\ndata: [DONE]\n\n";

struct Totals {
  double requests = 0, wall_s = 0, cpu_s = 0;
  int64_t chunks = 0;  // recorded token chunks
};

// One sample per iteration, added into `t`; false (the state says why) when
// a sample failed.
bool RunSamples(benchmark::State& state, const BenchOptions& o, Totals& t) {
  for (auto _ : state) {
    Result<BenchResult> result = RunBench(o);
    if (!result.ok() || result->metrics.requests_completed != o.num_requests) {
      state.SkipWithError(result.ok() ? "some requests failed" : result.error().message.c_str());
      return false;
    }
    t.requests += result->metrics.requests_completed;
    t.wall_s += result->metrics.duration_s;
    t.cpu_s += result->client_cpu_s;
    for (const auto& r : result->records) t.chunks += static_cast<int64_t>(r.chunk_gaps_us.size());
  }
  return true;
}

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
  Totals t;
  if (!RunSamples(state, o, t)) return;
  state.counters["req_per_s"] = t.requests / t.wall_s;
  state.counters["client_cpu_share"] = t.cpu_s / t.wall_s;
  state.counters["client_cpu_us_per_req"] = t.cpu_s / t.requests * 1e6;
}
BENCHMARK(BM_ClientOneTokenRequests)
    ->Args({256, 10000})
    ->Args({16, 5000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

// The cost of recording every chunk's arrival (the records' chunk_gaps_us
// and chunk_tokens): the same streams with recording on (range 3 = 1) and
// off (0). Each answer is `tokens` native chunks sent back to back, so the
// client thread, not the server's pacing, bounds the request rate; the two
// rates' ratio is the recording's cost.
void BM_ClientDecodeStreams(benchmark::State& state) {
  const int64_t tokens = state.range(2);
  ScriptedResponse answer;
  for (int64_t k = 1; k <= tokens; ++k)
    answer.pieces.push_back({0, NativeChunk(128, k, k == tokens), k == 1});
  answer.pieces.back().bytes += "data: [DONE]\n\n";
  auto server = ScriptedServer::Start([&answer](const ScriptedRequest&) { return answer; });
  if (!server.ok()) {
    state.SkipWithError(server.error().message.c_str());
    return;
  }
  BenchOptions o;
  o.url = (*server)->url();
  o.concurrency = static_cast<int>(state.range(0));
  o.num_requests = static_cast<int>(state.range(1));
  o.input_tokens = 128;
  o.output_tokens = tokens;
  o.timeout_s = 60;
  o.record_chunks = state.range(3) != 0;
  Totals t;
  if (!RunSamples(state, o, t)) return;
  state.counters["req_per_s"] = t.requests / t.wall_s;
  state.counters["tokens_per_s"] = t.requests * static_cast<double>(tokens) / t.wall_s;
  state.counters["client_cpu_us_per_req"] = t.cpu_s / t.requests * 1e6;
  state.counters["chunks_recorded_per_req"] = static_cast<double>(t.chunks) / t.requests;
}
BENCHMARK(BM_ClientDecodeStreams)
    ->ArgNames({"c", "n", "tokens", "record"})
    ->Args({256, 4000, 64, 0})
    ->Args({256, 4000, 64, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace
}  // namespace ppsearch::loadgen
