#include "sim/disaggregated_engine.h"

#include <gtest/gtest.h>

#include "sim/engine.h"

namespace ppsearch::sim {
namespace {

// One stage: a batch costs per_token_ns per new token plus per_ctx_ns per
// token of context its sequences read; a decode step's growth in closed
// form, so that decode stretches run.
class PdContextCost : public CostModel {
 public:
  PdContextCost(int64_t per_token_ns, int64_t per_ctx_ns)
      : per_token_ns_(per_token_ns), per_ctx_ns_(per_ctx_ns) {}
  int num_stages() const override { return 1; }
  StageTime StageCost(int, const MicroBatch& b) const override {
    StageTime t;
    t.compute_ns = per_token_ns_ * b.extend_tokens();
    for (const BatchEntry& e : b.entries) t.compute_ns += per_ctx_ns_ * e.prefix_tokens;
    return t;
  }
  bool DecodeStepGrowth(int stage, const MicroBatch& b, DecodeGrowth* growth) const override {
    DecodeGrowth& g = *growth;
    g.at_start = StageCost(stage, b);
    int64_t context = 0;
    for (const BatchEntry& e : b.entries) context += e.prefix_tokens;
    g.fixed_compute_ns = static_cast<double>(per_token_ns_ * b.extend_tokens());
    g.group_ns = {static_cast<double>(per_ctx_ns_ * context)};
    g.group_growth_ns = {static_cast<double>(per_ctx_ns_) * static_cast<double>(b.entries.size())};
    return true;
  }
  int64_t HopNs(int, const MicroBatch&) const override { return 0; }
  int64_t OutputReturnNs(const MicroBatch&) const override { return 0; }
  int64_t ScheduleNs(const MicroBatch&) const override { return 0; }
  int64_t IngestNs(int64_t) const override { return 0; }
  int64_t StreamOutNs() const override { return 0; }

 private:
  int64_t per_token_ns_, per_ctx_ns_;
};

SchedulerConfig PdServer(int max_running, int64_t kv_tokens) {
  SchedulerConfig c;
  c.chunked_prefill_size = 8192;
  c.max_running_requests = max_running;
  c.max_total_tokens = kv_tokens;
  return c;
}

DisaggregatedConfig PdDeployment(int prefill, int decode) {
  DisaggregatedConfig c;
  c.prefill = PdServer(64, 1 << 20);
  c.prefill_instances = prefill;
  c.decode = PdServer(64, 1 << 20);
  c.decode_instances = decode;
  c.transfer.kv_bytes_per_token = 1000;
  c.transfer.bytes_per_ns = 10;
  c.transfer.latency_ns = 500;
  c.transfer.handshake_ns = 2000;
  return c;
}

// `output_ratio` < 1: output lengths uniform on [output x ratio, output].
std::vector<workload::PlannedRequest> PdRequests(int n, int64_t input, int64_t output,
                                                 double rate = 0, double output_ratio = 1) {
  workload::WorkloadParams p;
  p.num_requests = n;
  p.input_tokens = input;
  p.output_tokens = output;
  p.output_range_ratio = output_ratio;
  p.request_rate = rate;
  p.seed = 7;
  return workload::PlanRequests(p);
}

TEST(Disaggregated, ARequestsFirstTokenComesAfterHandshakePrefillTransferAndTheDecodeLoop) {
  const PdContextCost prefill(1000, 0), decode(1000, 0);
  const DisaggregatedResult r =
      SimulateDisaggregated(PdDeployment(1, 1), prefill, decode, PdRequests(1, 100, 5), 1);
  ASSERT_EQ(r.records.size(), 1u);
  const workload::RequestRecord& rec = r.records[0];
  EXPECT_EQ(rec.status, workload::RequestStatus::kOk);
  // Preallocated at once; the handshake (2,000 ns) lets the prompt in; its
  // 100 tokens take 100,000 ns; 100 x 1,000 bytes at 10 bytes/ns take
  // 10,000 ns on the wire and 500 ns to be noticed; the idle decode loop
  // admits it at once and streams the first token.
  EXPECT_EQ(rec.first_token_ns, 2000 + 100000 + 10000 + 500);
  // Then four decode steps of one sequence, 1,000 ns each.
  EXPECT_EQ(rec.end_ns, rec.first_token_ns + 4 * 1000);
  EXPECT_EQ(rec.output_tokens, 5);
  EXPECT_EQ(rec.chunk_ns.size(), 5u);
  const RequestPhases& ph = r.phases[0];
  EXPECT_EQ(ph.prealloc_wait_ns, 0);
  EXPECT_EQ(ph.prefill_ns, 100000);
  EXPECT_EQ(ph.transfer_ns, 10500);
  EXPECT_EQ(ph.decode_join_ns, 0);
  EXPECT_EQ(r.transfer_bytes, 100 * 1000);
  EXPECT_EQ(r.transfer_busy_ns, 10000);
  EXPECT_EQ(r.prefill.micro_batches, 1);  // the prefill server never decodes
  EXPECT_EQ(r.decode.micro_batches, 4);   // nor the decode server prefills
}

TEST(Disaggregated, ThePrefillServersLinkSendsOneTransferAfterAnother) {
  // Two prompts in one prefill batch end together; the second's KV waits
  // for the first's on the wire.
  const PdContextCost prefill(1000, 0), decode(1000, 0);
  const DisaggregatedResult r =
      SimulateDisaggregated(PdDeployment(1, 1), prefill, decode, PdRequests(2, 100, 2), 2);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.phases[0].prefill_ns, r.phases[1].prefill_ns);
  EXPECT_EQ(r.phases[0].transfer_ns, 10500);
  EXPECT_EQ(r.phases[1].transfer_ns, 20500);
}

TEST(Disaggregated, TheDecodeServersPoolHoldsBackPreallocationUntilARequestFinishes) {
  // A decode pool of 1,500 tokens: 100 + 512 reserved fit once the first
  // request is active (its 512 reserved), not a third time.
  DisaggregatedConfig c = PdDeployment(1, 1);
  c.decode = PdServer(64, 1500);
  const PdContextCost prefill(1000, 0), decode(1000, 0);
  const DisaggregatedResult r =
      SimulateDisaggregated(c, prefill, decode, PdRequests(3, 100, 20), 3);
  for (const auto& rec : r.records) EXPECT_EQ(rec.status, workload::RequestStatus::kOk);
  EXPECT_EQ(r.phases[0].prealloc_wait_ns, 0);
  EXPECT_EQ(r.phases[1].prealloc_wait_ns, 0);
  // The third waits for the first to finish.
  EXPECT_GT(r.phases[2].prealloc_wait_ns, 0);
  EXPECT_EQ(r.records[2].send_ns + r.phases[2].prealloc_wait_ns,
            std::min(r.records[0].end_ns, r.records[1].end_ns));
  EXPECT_LE(r.decode.peak_kv_tokens, 1500);
}

TEST(Disaggregated, APromptNoDecodeServerCouldHoldFailsAndTheOthersGoOn) {
  DisaggregatedConfig c = PdDeployment(1, 1);
  c.decode = PdServer(64, 1000);  // 900 + 512 reserved never fit
  const PdContextCost prefill(1000, 0), decode(1000, 0);
  std::vector<workload::PlannedRequest> planned = PdRequests(3, 100, 4);
  planned[1].input_tokens = 900;
  const DisaggregatedResult r = SimulateDisaggregated(c, prefill, decode, planned, 1);
  EXPECT_EQ(r.records[0].status, workload::RequestStatus::kOk);
  EXPECT_EQ(r.records[1].status, workload::RequestStatus::kHttpError);
  EXPECT_EQ(r.records[1].http_status, 400);
  EXPECT_NE(r.records[1].error.find("decode server"), std::string::npos);
  EXPECT_EQ(r.records[2].status, workload::RequestStatus::kOk);
}

TEST(Disaggregated, TheRouterSpreadsRequestsOverEveryServerOfEachPool) {
  for (RouterPolicy policy : {RouterPolicy::kRoundRobin, RouterPolicy::kLeastLoaded}) {
    DisaggregatedConfig c = PdDeployment(2, 3);
    c.router = policy;
    const PdContextCost prefill(1000, 0), decode(1000, 1);
    const DisaggregatedResult r =
        SimulateDisaggregated(c, prefill, decode, PdRequests(60, 200, 30), 12);
    std::vector<int> p(2), d(3);
    for (const RequestPhases& ph : r.phases) {
      ++p[static_cast<size_t>(ph.prefill_instance)];
      ++d[static_cast<size_t>(ph.decode_instance)];
    }
    EXPECT_EQ(p[0] + p[1], 60);
    for (int n : p) EXPECT_GE(n, 25) << static_cast<int>(policy);
    for (int n : d) EXPECT_GE(n, 15) << static_cast<int>(policy);
    EXPECT_EQ(r.prefill.servers, 2);
    EXPECT_EQ(r.decode.servers, 3);
  }
}

// Decode stretches (several servers advanced side by side, each up to the
// next event of any other) give the figures of every step played alone.
TEST(Disaggregated, StretchesGiveTheFiguresOfStepByStep) {
  // Round robin with uneven answers sends a finished client's next request
  // to another decode server than the one it left: what a stretch running
  // past the other servers' events without the lookahead gets wrong.
  struct Case {
    int prefill, decode, dp, concurrency;
    double rate;
    RouterPolicy router;
    double output_ratio;
  };
  const RouterPolicy least = RouterPolicy::kLeastLoaded, rr = RouterPolicy::kRoundRobin;
  for (const Case& k : {Case{1, 1, 1, 8, 0, least, 1}, Case{2, 3, 1, 16, 0, least, 1},
                        Case{1, 2, 2, 12, 0, least, 1}, Case{2, 2, 1, 0, 40.0, least, 1},
                        Case{1, 3, 1, 12, 0, rr, 0.25}, Case{2, 2, 2, 10, 0, rr, 0.25},
                        Case{1, 2, 1, 6, 30.0, rr, 0.5}, Case{2, 2, 8, 16, 0, least, 1},
                        Case{2, 2, 2, 16, 0, least, 1}}) {
    DisaggregatedConfig c = PdDeployment(k.prefill, k.decode);
    c.decode.dp_size = k.dp;
    c.decode.overlap_schedule = true;
    c.router = k.router;
    const PdContextCost prefill(2000, 0), decode(3000, 20);
    const auto planned = PdRequests(48, 300, 64, k.rate, k.output_ratio);
    SimOptions stepped;
    stepped.step_by_step = true;
    const DisaggregatedResult a = SimulateDisaggregated(c, prefill, decode, planned, k.concurrency);
    const DisaggregatedResult b =
        SimulateDisaggregated(c, prefill, decode, planned, k.concurrency, stepped);
    // Without every token's time (what `simulate` and `search` ask for) the
    // stretches run further; the times they give are the same.
    SimOptions untimed;
    untimed.token_times = false;
    const DisaggregatedResult u =
        SimulateDisaggregated(c, prefill, decode, planned, k.concurrency, untimed);
    ASSERT_EQ(a.records.size(), b.records.size());
    ASSERT_EQ(a.records.size(), u.records.size());
    for (size_t i = 0; i < a.records.size(); ++i) {
      EXPECT_EQ(a.records[i].first_token_ns, b.records[i].first_token_ns) << i;
      EXPECT_EQ(a.records[i].end_ns, b.records[i].end_ns) << i;
      EXPECT_EQ(a.records[i].chunk_ns, b.records[i].chunk_ns) << i;
      EXPECT_EQ(u.records[i].first_token_ns, b.records[i].first_token_ns)
          << i << " of case " << k.prefill << "P" << k.decode << "D";
      EXPECT_EQ(u.records[i].end_ns, b.records[i].end_ns) << i;
    }
    EXPECT_EQ(a.window_ns, b.window_ns);
    EXPECT_EQ(a.decode.micro_batches, b.decode.micro_batches);
    EXPECT_GT(a.decode.stretched_batches, a.decode.micro_batches / 3);
    EXPECT_EQ(b.decode.stretched_batches, 0);
  }
}

// A decode server alone with a long answer would run ahead to its finish;
// the other server's short answer finishes first, and its client's next
// request (round robin: to the busy server) must join the long one's batch
// when its KV arrives, not when that server next looks up.
TEST(Disaggregated, ARequestJoinsADecodeServerThatIsMidStretchOnTime) {
  DisaggregatedConfig c = PdDeployment(1, 2);
  c.router = RouterPolicy::kRoundRobin;
  const PdContextCost prefill(1000, 0), decode(1000, 0);
  const std::vector<workload::PlannedRequest> planned = {
      {0, 100, 200, 0}, {1, 100, 5, 0}, {2, 100, 5, 0}};
  SimOptions stepped;
  stepped.step_by_step = true;
  const DisaggregatedResult a = SimulateDisaggregated(c, prefill, decode, planned, 2);
  const DisaggregatedResult b = SimulateDisaggregated(c, prefill, decode, planned, 2, stepped);
  // Request 2 goes to the first decode server, where request 0 decodes.
  EXPECT_EQ(a.phases[0].decode_instance, 0);
  EXPECT_EQ(a.phases[2].decode_instance, 0);
  for (size_t i = 0; i < planned.size(); ++i) {
    EXPECT_EQ(a.records[i].first_token_ns, b.records[i].first_token_ns) << i;
    EXPECT_EQ(a.records[i].end_ns, b.records[i].end_ns) << i;
  }
  // It joined within a step of its KV's arrival, long before request 0 ends.
  EXPECT_LE(a.phases[2].decode_join_ns, 2 * 1000);
  EXPECT_LT(a.records[2].end_ns, a.records[0].end_ns);
  EXPECT_GT(a.decode.stretched_batches, 100);
}

TEST(Disaggregated, DeterministicForTheSameInputs) {
  const PdContextCost prefill(1000, 0), decode(1000, 5);
  const auto planned = PdRequests(40, 500, 50, 100.0);
  const DisaggregatedResult a =
      SimulateDisaggregated(PdDeployment(2, 2), prefill, decode, planned, 0);
  const DisaggregatedResult b =
      SimulateDisaggregated(PdDeployment(2, 2), prefill, decode, planned, 0);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(a.records[i].send_ns, b.records[i].send_ns);
    EXPECT_EQ(a.records[i].end_ns, b.records[i].end_ns);
  }
}

}  // namespace
}  // namespace ppsearch::sim
