#include "serve_sim/realtime_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "cost/layout_cost.h"
#include "predict/predict.h"
#include "serve_sim/engine_testing.h"
#include "sim/engine.h"
#include "testkit/example_search.h"
#include "workload/workload.h"

namespace ppsearch::serve_sim {
namespace {

using testutil::Config;
using testutil::FakeClock;
using testutil::LinearCost;

class Recorder : public sim::EngineListener {
 public:
  std::vector<int64_t> first_ns, end_ns;
  std::vector<int64_t> tokens;
  void OnTokens(int r, int64_t n, int64_t t) override {
    Grow(r);
    if (n == 1) first_ns[r] = t;
    tokens[r] = n;
  }
  void OnFinished(int r, int64_t t, bool) override {
    Grow(r);
    end_ns[r] = t;
  }

 private:
  void Grow(int r) {
    if (static_cast<int>(first_ns.size()) <= r) {
      first_ns.resize(r + 1, -1);
      end_ns.resize(r + 1, -1);
      tokens.resize(r + 1, 0);
    }
  }
};

// A client that goes away: its request stops with the batch it is in, the
// listener hears no more of it, and the others run on.
TEST(OnlineEngineTest, AnAbortedRequestStopsDecoding) {
  LinearCost cost(2, 200, 50'000);
  Recorder rec;
  sim::OnlineEngine engine(Config(2), cost, &rec);
  engine.Submit(0, 100, 1000);
  engine.Submit(0, 100, 1000);
  const int later = engine.Submit(1'000'000'000'000, 100, 1000);  // not sent yet
  int64_t t = 0;
  while (rec.tokens.size() < 2 || rec.tokens[0] < 5) {
    t += 1'000'000;
    engine.RunUntil(t);
    ASSERT_LT(t, int64_t{1'000'000'000'000}) << "no 5th token";
  }
  const int64_t at_abort = rec.tokens[0];
  engine.Abort(0);
  engine.Abort(later);
  engine.RunToEnd();
  EXPECT_EQ(rec.tokens[0], at_abort);
  EXPECT_EQ(rec.end_ns[0], -1);
  EXPECT_EQ(rec.tokens[1], 1000);
  EXPECT_GE(rec.end_ns[1], 0);
  EXPECT_EQ(rec.tokens.size(), 2u) << "the unsent request was never heard of";
  EXPECT_EQ(engine.running_requests(), 0);
  EXPECT_EQ(engine.kv_tokens_used(), 0);
}

// Submitting the planned arrivals into the online engine while advancing it in
// small steps gives the same times as the offline Simulate.
TEST(OnlineEngineTest, IncrementalRunMatchesOfflineSimulate) {
  LinearCost cost(2, 200, 50'000);
  workload::WorkloadParams w;
  w.num_requests = 12;
  w.input_tokens = 3000;
  w.output_tokens = 5;
  w.range_ratio = 0.5;
  w.request_rate = 50;
  w.seed = 3;
  auto planned = workload::PlanRequests(w);
  sim::SimResult offline = sim::Simulate(Config(2), cost, planned, 0);

  Recorder rec;
  sim::OnlineEngine engine(Config(2), cost, &rec);
  size_t next = 0;
  for (int64_t t = 0; next < planned.size() || engine.NextEventNs(); t += 1'000'000) {
    engine.RunUntil(t);
    while (next < planned.size() && planned[next].arrival_ns <= t + 1'000'000) {
      // Submit in the step it arrives in, at its own time.
      if (planned[next].arrival_ns < engine.now_ns()) break;
      engine.Submit(planned[next].arrival_ns, planned[next].input_tokens,
                    planned[next].output_tokens);
      ++next;
    }
    ASSERT_LT(t, int64_t{100'000'000'000}) << "did not drain";
  }
  ASSERT_EQ(rec.end_ns.size(), planned.size());
  for (size_t i = 0; i < planned.size(); ++i) {
    EXPECT_EQ(rec.first_ns[i], offline.records[i].first_token_ns) << i;
    EXPECT_EQ(rec.end_ns[i], offline.records[i].end_ns) << i;
    EXPECT_EQ(rec.tokens[i], 5);
  }
  EXPECT_EQ(engine.counters().micro_batches, offline.micro_batches);
}

TEST(RealtimeEngineTest, TokensArriveWhenTheScaledClockReachesThem) {
  LinearCost cost(1, 1000, 0);  // 1 us per token: 1000-token prefill = 1 ms simulated
  FakeClock clock;
  RealtimeEngine engine(Config(1), cost, /*time_scale=*/10.0, clock);
  EXPECT_LT(engine.RunDue(), 0) << "not started: nothing runs";
  engine.Start();
  EXPECT_LT(engine.RunDue(), 0) << "idle: nothing is scheduled";
  auto h = engine.Submit(1000, 3);
  EXPECT_EQ(engine.in_flight(), 1);
  // Nothing can be done before the clock moves; the first event (the
  // request's ingest, 2 us simulated) is 0.2 us of wall time away.
  EXPECT_NEAR(engine.RunDue(), 0.2e-6, 1e-9);
  RequestProgress p = h->Snapshot();
  EXPECT_EQ(p.output_tokens, 0);
  EXPECT_FALSE(p.finished);
  // 1 ms wall = 10 ms simulated: prefill and both decode steps are done.
  clock.now_ns += 1'000'000;
  EXPECT_LT(engine.RunDue(), 0) << "done: nothing is left";
  p = h->Snapshot();
  ASSERT_TRUE(p.finished);
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.output_tokens, 3);
  // ingest 2 us + schedule 0.5 us + 1000 us + return 1 us + stream 0.3 us.
  EXPECT_EQ(p.first_token_sim_ns, 2000 + 500 + 1'000'000 + 1000 + 300);
  EXPECT_EQ(engine.in_flight(), 0);
}

// A rehearsal streams decode at the predicted pace: the example's PP1
// layout (overlap scheduler on), one request of 64 tokens at time scale 4.
// The fake clock is moved to each token's predicted release in turn; the
// token must be out then and not a clock step before, so the wall gaps
// between chunks are the decode step the cost model predicts, / 4.
TEST(RealtimeEngineTest, DecodeStreamsAtThePredictedStepPace) {
  const testkit::ExampleInputs& in = testkit::Example();
  const plan::LayoutPlan* lp = in.Layout(1);
  ASSERT_NE(lp, nullptr);
  const predict::PointModel point =
      predict::BuildPointModel(*lp, in.spec, in.model, in.hardware, cost::Calibration{});
  const cost::LayoutCostModel& cost = *point.cost;
  const sim::SchedulerConfig& config = point.scheduler;
  ASSERT_TRUE(config.overlap_schedule);
  constexpr int64_t kInput = 1000, kOutput = 64;
  constexpr double kScale = 4;
  // The decode step of one sequence at context c, the host work hidden.
  auto step_ns = [&](int64_t context) {
    sim::MicroBatch b;
    b.entries.push_back({0, 1, context, false});
    return std::max(cost.StageCost(0, b).total_ns() + cost.OutputReturnNs(b), cost.ScheduleNs(b));
  };
  // The engine's own release times: the offline run's chunks less the
  // stream-out, played step by step as the real-time engine plays them (an
  // offline run jumps a lone request's cycles in closed form, within a ns).
  workload::PlannedRequest planned{0, kInput, kOutput, 0};
  sim::SimOptions step_by_step;
  step_by_step.step_by_step = true;
  const sim::SimResult offline = sim::Simulate(config, cost, {planned}, 1, step_by_step);
  const std::vector<int64_t>& chunks = offline.records[0].chunk_ns;
  ASSERT_EQ(chunks.size(), static_cast<size_t>(kOutput));

  FakeClock clock;
  const int64_t start = clock.now_ns.load();
  RealtimeEngine engine(config, cost, kScale, clock);
  engine.Start();
  auto h = engine.Submit(kInput, kOutput);
  std::vector<int64_t> wall_ns;
  for (int64_t k = 1; k <= kOutput; ++k) {
    const int64_t release = chunks[k - 1] - cost.StreamOutNs();
    const int64_t at = start + static_cast<int64_t>(std::ceil(release / kScale));
    clock.now_ns = at - 1;
    engine.RunDue();
    ASSERT_EQ(h->Snapshot().output_tokens, k - 1) << "token " << k << " released early";
    clock.now_ns = at;
    engine.RunDue();
    ASSERT_EQ(h->Snapshot().output_tokens, k) << "token " << k << " not released at its time";
    wall_ns.push_back(clock.now_ns.load());
  }
  for (int64_t k = 2; k <= kOutput; ++k) {
    // Token k follows the step that read a context of input + k - 2 tokens.
    const double predicted = step_ns(kInput + k - 2) / kScale;
    EXPECT_NEAR(static_cast<double>(wall_ns[k - 1] - wall_ns[k - 2]), predicted,
                1e-3 * predicted + 1)
        << "gap before token " << k;
  }
}

TEST(RealtimeEngineTest, FailAllFailsInFlightAndLaterRequests) {
  LinearCost cost(1, 1000, 0);
  FakeClock clock;
  RealtimeEngine engine(Config(1), cost, 1.0, clock);
  engine.Start();
  auto h = engine.Submit(100, 10);
  engine.FailAll("node 1 left");
  RequestProgress p = h->Snapshot();
  EXPECT_TRUE(p.finished);
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.http_status, 500);
  EXPECT_EQ(p.error, "node 1 left");
  EXPECT_EQ(engine.Submit(5, 5)->Snapshot().http_status, 500);
}

// A PD server's request waits in a reserved handle: nothing runs until it
// is admitted; a prefilled one skips its prompt (its first token comes with
// the decode loop, not after a 1,000-token prefill); a failed or aborted
// one finishes at once, and an admit after that does nothing.
TEST(RealtimeEngineTest, AReservedRequestRunsOnlyOnceAdmittedAndPrefilledSkipsItsPrompt) {
  LinearCost cost(1, 1000, 0);
  FakeClock clock;
  RealtimeEngine engine(Config(1), cost, 1.0, clock);
  engine.Start();
  auto waiting = engine.Reserve();
  EXPECT_EQ(engine.in_flight(), 1);
  EXPECT_LT(engine.RunDue(), 0) << "a reserved request schedules nothing";
  RequestProgress finished_with;
  int finishes = 0;
  waiting->OnFinish([&](const RequestProgress& p) {
    finished_with = p;
    ++finishes;
  });
  engine.Admit(waiting, 1000, 3, /*prefilled=*/true);
  clock.now_ns += 1'000'000;  // 1 ms: a 1,000-token prefill alone would take it all
  engine.RunDue();
  const RequestProgress p = waiting->Snapshot();
  ASSERT_TRUE(p.finished);
  EXPECT_TRUE(p.ok);
  EXPECT_EQ(p.output_tokens, 3);
  EXPECT_LT(p.first_token_sim_ns - p.submit_sim_ns, 1'000'000 / 10)
      << "its prompt was computed elsewhere";
  EXPECT_EQ(finishes, 1);
  EXPECT_TRUE(finished_with.ok);

  auto failed = engine.Reserve();
  engine.Fail(*failed, 500, "Decode transfer failed for request");
  EXPECT_EQ(failed->Snapshot().http_status, 500);
  engine.Admit(failed, 10, 1, true);
  EXPECT_LT(engine.RunDue(), 0) << "a failed request is not admitted later";
  auto aborted = engine.Reserve();
  engine.Abort(*aborted);
  EXPECT_EQ(aborted->Snapshot().http_status, 499);
  EXPECT_EQ(engine.in_flight(), 0);
  auto last = engine.Reserve();
  engine.FailAll("shutting down");
  EXPECT_EQ(last->Snapshot().error, "shutting down");
}

}  // namespace
}  // namespace ppsearch::serve_sim
