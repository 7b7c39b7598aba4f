// What serve-sim's HTTP path adds to TTFT: the client's first-token time
// against the server's own (meta_info.first_token_ts) at C = 8, 16 and 256 on
// reused connections. The test catches the stalls that are defects (a first
// token held behind Nagle's delayed ACK, 40 ms; a dropped SYN, 1 s; every
// stream woken on its own thread, 6-17 ms); the speed target itself (p99
// under 1 ms) is measured by BM_ServeSimFirstTokenGap, not here, because a
// shared 2-core CI machine cannot promise sub-millisecond scheduling. It runs
// alone (RUN_SERIAL).

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>
#include <vector>

#include "loadgen/bench_client.h"
#include "serve_sim_fixture.h"
#include "stats/stats.h"

namespace ppsearch::testing {
namespace {

class ServeSimTtft : public ServeSimE2e {
 protected:
  int StartReady(const std::string& extra) {
    const int port = FreePort();
    Start(Common(port) + extra);
    EXPECT_TRUE(WaitHealthy(port, 20)) << Log();
    return port;
  }
};

// The client's first-token time minus the server's own (meta_info.first_token_ts),
// over a closed loop of `concurrency`, 2 requests per connection: what the HTTP
// path adds to TTFT. Prompts of 4,096 tokens are prefilled a chunk at a time,
// so first tokens come a few at a time as on a real server (256 released at
// one instant would measure this machine's scheduler instead).
std::vector<double> FirstTokenGapsS(int port, int concurrency) {
  loadgen::BenchOptions o;
  o.url = "http://127.0.0.1:" + std::to_string(port);
  o.concurrency = concurrency;
  o.num_requests = std::max(concurrency * 2, 64);
  o.input_tokens = 4096;
  o.output_tokens = 4;
  o.timeout_s = 30;
  o.warmup_requests = concurrency;  // as a sample's warm-up does: no cold first burst
  auto r = loadgen::RunBench(o);
  EXPECT_TRUE(r.ok()) << r.error().message;
  std::vector<double> gaps;
  if (!r.ok()) return gaps;
  for (const auto& rec : r->records) {
    EXPECT_TRUE(rec.ok()) << rec.error;
    EXPECT_GT(rec.server_first_token_unix_s, 0) << "serve-sim reports first_token_ts";
    if (!rec.ok() || rec.server_first_token_unix_s <= 0) continue;
    gaps.push_back(r->sample_start_unix_s + rec.first_token_ns * 1e-9 -
                   rec.server_first_token_unix_s);
  }
  return gaps;
}

// How late this machine wakes a sleeping thread now: the p90 of the
// oversleep of 100 sleeps of 1 ms. Idle, tens of microseconds; with other
// work on both cores, a scheduler tick (4-10 ms), which every first token
// handed from serve-sim's loop to a reader then pays too. The bounds
// below are about serve-sim's HTTP path, not the machine's scheduler.
double WakeupDelayP90S() {
  std::vector<double> late;
  for (int i = 0; i < 100; ++i) {
    const auto before = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    late.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count() - 1e-3);
  }
  return stats::Percentile(late, 90);
}

TEST_F(ServeSimTtft, ClientTtftIsWithinAMillisecondOfTheServersFirstTokenAtP99) {
  // x20: a decode step of 256 streams then lasts long enough for the client
  // to read its 256 chunks before the next first tokens come. At x100 (20 s
  // of wall time less) this 2-core machine's client is still reading the
  // last burst when they do, which measures its CPU rather than the HTTP
  // path: p99 0.55-1.9 ms there, against 0.39-0.63 ms at x20.
  const int port = StartReady(" --time-scale 20");
  for (int c : {8, 16, 256}) {
    // Before serve-sim wrote every stream from the thread that runs its engine and the
    // client built its bodies ahead, C=256 reached p99 6-17 ms here (256
    // woken handler threads, and a wave of body building, between a first
    // token and its stamp) and p90 above 2 ms; a backlog drop adds 1 s and
    // Nagle 40 ms. Measured since: p90 0.28-0.48 ms, p99 0.35-3.3 ms
    // (CI once 1.45 ms at C=256). The bounds sit between the two, and the
    // best of at most three samples is judged, as a stray burst of other
    // work can still take one of 2 cores.
    // On a machine that wakes threads late for other work (measured
    // before each sample), the bounds grow with that delay: CI once gave a
    // p90 of 10.7 ms at C = 8, 16 and every try, the test taking 103 s
    // instead of 34; alone on the same build, 0.4 ms.
    double p99_bound = 0.005, p90_bound = 0.002, wakeup_s = 0;
    double best_p90 = 1e9, best_p99 = 1e9;
    for (int attempt = 0; attempt < 3 && (best_p99 >= p99_bound || best_p90 >= p90_bound);
         ++attempt) {
      wakeup_s = WakeupDelayP90S();
      p99_bound = std::max(p99_bound, 3 * wakeup_s);
      p90_bound = std::max(p90_bound, 2 * wakeup_s);
      std::vector<double> gaps = FirstTokenGapsS(port, c);
      ASSERT_EQ(gaps.size(), static_cast<size_t>(std::max(2 * c, 64)));
      EXPECT_GT(stats::Percentile(gaps, 1), -0.001) << "C=" << c << ": the client saw it before";
      best_p90 = std::min(best_p90, stats::Percentile(gaps, 90));
      best_p99 = std::min(best_p99, stats::Percentile(gaps, 99));
    }
    std::cout << "C=" << c << ": best p90 " << best_p90 * 1e3 << " ms, best p99 " << best_p99 * 1e3
              << " ms; wake-up delay p90 " << wakeup_s * 1e3
              << " ms\n";  // the measured margin, in the test log
    EXPECT_LT(best_p99, p99_bound) << "C=" << c;
    EXPECT_LT(best_p90, p90_bound) << "C=" << c;
  }
}

}  // namespace
}  // namespace ppsearch::testing
