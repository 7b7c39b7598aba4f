// The simulator's decode stretches (sim/decode_stretch.cc) against its
// step-by-step reference, on the real cost model: MLA (DeepSeek-V3), GQA
// (Qwen3) and the hybrid KDA + MLA stack (Kimi K3), at PP 1, 2 and 4 and
// with DP attention. Output lengths are uniform so that requests finish,
// and new ones are admitted, in the middle of other requests' decode.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "inputs/search_inputs.h"
#include "ppsearch_source_dir.h"
#include "predict/predict.h"
#include "testkit/example_search.h"

namespace ppsearch::predict {
namespace {

const std::string kSource = PPSEARCH_SOURCE_DIR;

// The chat example on two of its nodes (16 GPUs: DeepSeek-V3's block-FP8
// weights do not split 32 ways), with `model_config` instead of its model.
inputs::SearchInputs ChatInputs(const std::string& model_config = "",
                                const std::string& chunk_override = "") {
  inputs::InputsOptions o;
  o.spec_path = kSource + "/examples/deepseek-v3-chat-search.toml";
  o.overrides.push_back("cluster.hosts=[\"n0\", \"n1\"]");
  o.overrides.push_back("sweep.pp=[1]");
  if (!chunk_override.empty()) o.overrides.push_back(chunk_override);
  if (!model_config.empty())
    o.overrides.push_back("engine.model_config=\"" + kSource + "/data/models/" + model_config +
                          "/config.json\"");
  Result<inputs::SearchInputs> in = inputs::LoadSearchInputs(o);
  EXPECT_TRUE(in.ok()) << in.error().message;
  return *in;
}

// A short chat load: 300-token prompts, 20 to 60 tokens out.
void ChatLoad(spec::Spec& spec, int requests) {
  spec.workload.requests = requests;
  spec.workload.input_tokens = 300;
  spec.workload.output_tokens = 60;
  spec.workload.output_distribution = "uniform";
  spec.workload.output_range_ratio = 0.33;
}

struct Case {
  PointPrediction stepped, stretched;
  PointPrediction lean;  // stretched without token times: lone slots jump whole cycles
};

Case Both(const inputs::SearchInputs& in, const spec::LayoutSpec& layout, int concurrency) {
  const plan::LayoutPlan lp = plan::PlanLayout(layout, in.spec, in.model, in.hardware);
  EXPECT_TRUE(lp.valid) << layout.Label() << ": "
                        << (lp.errors.empty() ? "" : lp.errors.front().message);
  PointOptions po;
  po.concurrency = concurrency;
  po.seed = 7;
  Case c;
  po.step_by_step = true;
  c.stepped = PredictPoint(lp, in.spec, in.model, in.hardware, cost::Calibration{}, po);
  po.step_by_step = false;
  c.stretched = PredictPoint(lp, in.spec, in.model, in.hardware, cost::Calibration{}, po);
  po.token_times = false;
  c.lean = PredictPoint(lp, in.spec, in.model, in.hardware, cost::Calibration{}, po);
  return c;
}

// Every request's times and tokens, the engine's counters and the
// figures: equal, the times to within 1 ns per 10 us (rounding of the
// stage times' closed form), far inside the 0.5% the figures may differ.
void ExpectSame(const Case& c, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_GT(c.stepped.metrics.requests_completed, 0);
  const sim::SimResult& a = c.stepped.sim;
  const sim::SimResult& b = c.stretched.sim;
  EXPECT_EQ(a.stretched_batches, 0);
  EXPECT_GT(b.stretched_batches, b.decode_batches / 2) << "the stretches advanced few steps";
  EXPECT_EQ(a.micro_batches, b.micro_batches);
  EXPECT_EQ(a.prefill_batches, b.prefill_batches);
  EXPECT_EQ(a.decode_batches, b.decode_batches);
  EXPECT_EQ(a.peak_kv_tokens, b.peak_kv_tokens);
  EXPECT_EQ(a.peak_running_requests, b.peak_running_requests);
  auto near = [](int64_t x, int64_t y) {
    return std::llabs(x - y) <= 1 + std::max(std::llabs(x), std::llabs(y)) / 10000;
  };
  EXPECT_PRED2(near, a.window_ns, b.window_ns);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    const workload::RequestRecord& x = a.records[i];
    const workload::RequestRecord& y = b.records[i];
    ASSERT_EQ(x.output_tokens, y.output_tokens) << "request " << i;
    ASSERT_EQ(x.chunk_ns.size(), y.chunk_ns.size()) << "request " << i;
    ASSERT_PRED2(near, x.send_ns, y.send_ns) << "request " << i;
    ASSERT_PRED2(near, x.first_token_ns, y.first_token_ns) << "request " << i;
    ASSERT_PRED2(near, x.end_ns, y.end_ns) << "request " << i;
    for (size_t k = 0; k < x.chunk_ns.size(); ++k)
      ASSERT_PRED2(near, x.chunk_ns[k], y.chunk_ns[k]) << "request " << i << " token " << k;
  }
  ASSERT_EQ(a.stages.size(), b.stages.size());
  for (size_t s = 0; s < a.stages.size(); ++s) {
    EXPECT_EQ(a.stages[s].micro_batches, b.stages[s].micro_batches);
    EXPECT_PRED2(near, a.stages[s].compute_ns, b.stages[s].compute_ns);
    const sim::StageStats &x = a.stages[s], &y = b.stages[s];
    // The compute's classes: a stretch pays its first launch's GEMM and MoE
    // time at every launch, and attention the rest, as the steps do.
    EXPECT_PRED2(near, a.stages[s].gemm_ns, b.stages[s].gemm_ns);
    EXPECT_PRED2(near, a.stages[s].moe_ns, b.stages[s].moe_ns);
    // Attention is what the stretch's compute leaves: it carries the
    // compute's own difference (the closed form's rounding) and each
    // launch's rounding of its parts (under 2 ns a launch).
    EXPECT_LE(std::llabs(x.attention_ns - y.attention_ns),
              std::llabs(x.compute_ns - y.compute_ns) + std::llabs(x.gemm_ns - y.gemm_ns) +
                  std::llabs(x.moe_ns - y.moe_ns) + 2 * x.micro_batches + 1);
    for (const sim::StageStats* z : {&x, &y, &c.lean.sim.stages[s]}) {
      EXPECT_GT(z->gemm_ns, 0);
      EXPECT_GT(z->moe_ns, 0);  // every model here is an MoE
      EXPECT_GT(z->attention_ns, 0);
      EXPECT_LE(z->gemm_ns + z->moe_ns + z->attention_ns, z->compute_ns);
    }
    EXPECT_EQ(a.stages[s].comm_ns, b.stages[s].comm_ns);
    EXPECT_EQ(a.stages[s].overhead_ns, b.stages[s].overhead_ns);
  }
  const stats::SampleMetrics& m = c.stepped.metrics;
  const stats::SampleMetrics& n = c.stretched.metrics;
  EXPECT_EQ(m.requests_completed, n.requests_completed);
  EXPECT_EQ(m.output_tokens, n.output_tokens);
  EXPECT_NEAR(n.output_tps, m.output_tps, 1e-4 * m.output_tps);
  EXPECT_NEAR(n.ttft_s.p99, m.ttft_s.p99, 1e-4 * m.ttft_s.p99);
  EXPECT_NEAR(n.tpot_s.p50, m.tpot_s.p50, 1e-4 * m.tpot_s.p50);
  EXPECT_NEAR(n.itl_s.p99, m.itl_s.p99, 1e-4 * m.itl_s.p99);

  // Without token times: the same requests, tokens and batches, the times
  // as near, no inter-token latencies.
  const sim::SimResult& l = c.lean.sim;
  // And the very course of the stretched run with them: the same jumps, so
  // the same times to the ns (a ns of rounding between the two can reorder
  // equal events, and then a deployment's routing; sim/decode_stretch.cc).
  EXPECT_EQ(b.stretched_batches, l.stretched_batches);
  EXPECT_EQ(b.round_batches, l.round_batches);
  for (size_t i = 0; i < b.records.size(); ++i) {
    ASSERT_EQ(b.records[i].first_token_ns, l.records[i].first_token_ns) << "request " << i;
    ASSERT_EQ(b.records[i].end_ns, l.records[i].end_ns) << "request " << i;
    ASSERT_TRUE(std::is_sorted(b.records[i].chunk_ns.begin(), b.records[i].chunk_ns.end()))
        << "request " << i;
    if (!b.records[i].chunk_ns.empty()) {
      ASSERT_EQ(b.records[i].chunk_ns.back(), l.records[i].end_ns) << "request " << i;
    }
  }
  EXPECT_EQ(a.decode_batches, l.decode_batches);
  EXPECT_EQ(a.stretched_batches, 0);
  EXPECT_GT(l.stretched_batches, l.decode_batches / 2);
  EXPECT_PRED2(near, a.window_ns, l.window_ns);
  for (size_t i = 0; i < a.records.size(); ++i) {
    const workload::RequestRecord& x = a.records[i];
    const workload::RequestRecord& z = l.records[i];
    ASSERT_EQ(x.output_tokens, z.output_tokens) << "request " << i;
    ASSERT_PRED2(near, x.first_token_ns, z.first_token_ns) << "request " << i;
    ASSERT_PRED2(near, x.end_ns, z.end_ns) << "request " << i;
    ASSERT_TRUE(z.chunk_ns.empty());
  }
  for (size_t s = 0; s < a.stages.size(); ++s) {
    EXPECT_EQ(a.stages[s].micro_batches, l.stages[s].micro_batches);
    EXPECT_PRED2(near, a.stages[s].compute_ns, l.stages[s].compute_ns);
    EXPECT_PRED2(near, a.stages[s].gemm_ns, l.stages[s].gemm_ns);
    EXPECT_PRED2(near, a.stages[s].moe_ns, l.stages[s].moe_ns);
  }
  const stats::SampleMetrics& o = c.lean.metrics;
  EXPECT_NEAR(o.output_tps, m.output_tps, 1e-4 * m.output_tps);
  EXPECT_NEAR(o.ttft_s.p99, m.ttft_s.p99, 1e-4 * m.ttft_s.p99);
  EXPECT_NEAR(o.tpot_s.p50, m.tpot_s.p50, 1e-4 * m.tpot_s.p50);
  EXPECT_NEAR(o.tpot_s.p99, m.tpot_s.p99, 1e-4 * m.tpot_s.p99);
  EXPECT_EQ(o.itl_values, 0);
}

spec::LayoutSpec StretchLayout(int pp, int tp, int ep, int dp = 1) {
  return {.pp = pp, .tp = tp, .ep = ep, .origin = {}, .dp = dp};
}

TEST(DecodeStretch, MlaAtPp124) {
  inputs::SearchInputs in = ChatInputs();
  ChatLoad(in.spec, 24);
  for (int pp : {1, 2, 4})
    for (int c : {1, 5, 16})
      ExpectSame(Both(in, StretchLayout(pp, 16 / pp, 1), c),
                 "DeepSeek-V3 PP" + std::to_string(pp) + " C=" + std::to_string(c));
}

TEST(DecodeStretch, MlaWithDpAttention) {
  inputs::SearchInputs in = ChatInputs();
  ChatLoad(in.spec, 24);
  for (int dp : {2, 4})
    for (int c : {3, 16})
      ExpectSame(Both(in, StretchLayout(1, 16, 1, dp), c),
                 "DeepSeek-V3 DP" + std::to_string(dp) + " C=" + std::to_string(c));
}

TEST(DecodeStretch, GqaAtPp124) {
  inputs::SearchInputs in = ChatInputs("qwen3-235b-a22b");
  ChatLoad(in.spec, 24);
  for (int pp : {1, 2, 4})
    for (int c : {2, 16})
      ExpectSame(Both(in, StretchLayout(pp, 16 / pp, 1), c),
                 "Qwen3 PP" + std::to_string(pp) + " C=" + std::to_string(c));
}

TEST(DecodeStretch, HybridKdaAtPp124) {
  inputs::SearchInputs in = testkit::Example();
  ChatLoad(in.spec, 16);
  for (int pp : {1, 2, 4})
    for (int c : {1, 8})
      ExpectSame(Both(in, StretchLayout(pp, 32 / pp, 4), c),
                 "Kimi K3 PP" + std::to_string(pp) + " C=" + std::to_string(c));
}

// Long answers keep every slot of a pipeline decoding for hundreds of
// rounds (prompts prefilled in small chunks land in different slots):
// those rounds are jumped in closed form, each token's time read off it,
// with the same figures as step by step.
TEST(DecodeStretch, PipelineRoundsJumpWithTheSteppedFigures) {
  inputs::SearchInputs in = ChatInputs("", "engine.args.chunked-prefill-size=512");
  ChatLoad(in.spec, 16);
  in.spec.workload.output_tokens = 400;
  in.spec.workload.output_range_ratio = 0.8;
  for (const spec::LayoutSpec& layout :
       {StretchLayout(2, 8, 1), StretchLayout(4, 4, 1), StretchLayout(2, 8, 1, 2)})
    for (int c : {4, 16}) {
      const std::string what = "DeepSeek-V3 " + layout.Label() + " C=" + std::to_string(c);
      const Case both = Both(in, layout, c);
      ExpectSame(both, what);
      EXPECT_GT(both.stretched.sim.round_batches, both.stretched.sim.decode_batches / 2) << what;
    }
}

// 2,000-token prompts and answers of 133 to 400 tokens at PP 4: after
// requests finish and others join, the pipeline's first rounds are not yet
// in their pattern (a slot's batch waits on another's once, then no more),
// so the trial's fit starts at a later round. Those rounds are jumped too
// (late_fit_jumps), with the figures of step by step.
TEST(DecodeStretch, APipelineThatSettlesDuringTheTrialStillJumps) {
  inputs::SearchInputs in = ChatInputs();
  ChatLoad(in.spec, 64);
  in.spec.workload.input_tokens = 2000;
  in.spec.workload.output_tokens = 400;
  for (const spec::LayoutSpec& layout : {StretchLayout(4, 4, 1), StretchLayout(2, 8, 1, 2)}) {
    const std::string what = "DeepSeek-V3 " + layout.Label() + " C=16";
    const Case both = Both(in, layout, 16);
    ExpectSame(both, what);
    EXPECT_GT(both.lean.sim.late_fit_jumps, 0) << what;
    EXPECT_EQ(both.stepped.sim.late_fit_jumps, 0) << what;
  }
}

// An open loop whose requests come faster than a pool of four serves
// them: arrivals end stretches while every slot keeps its sequences (what
// arrives waits), and the next stretch prices those slots from the last
// one's, their growth shifted by the steps between. Step by step, each
// step is priced afresh.
TEST(DecodeStretch, ASlotThatKeepsItsSequencesCarriesItsPriceToTheNextStretch) {
  inputs::SearchInputs in = ChatInputs("", "engine.args.max-running-requests=4");
  ChatLoad(in.spec, 24);
  in.spec.workload.output_tokens = 200;
  in.spec.workload.request_rate = 10;
  for (const spec::LayoutSpec& layout :
       {StretchLayout(1, 16, 1), StretchLayout(2, 8, 1), StretchLayout(1, 16, 1, 2)}) {
    const std::string what = "DeepSeek-V3 " + layout.Label() + " at 10 requests/s";
    const Case both = Both(in, layout, 0);
    ExpectSame(both, what);
    EXPECT_GT(both.stretched.sim.carried_prices, 10) << what;
    EXPECT_EQ(both.stepped.sim.carried_prices, 0) << what;
  }
}

// More clients than max-running-requests admits: requests wait for a slot
// the whole run. A stretch still runs while none of them could be admitted
// before a finish (the pool or a pipeline slot's micro-batch is full), with
// the figures of step by step; before, every such step was an event.
TEST(DecodeStretch, RequestsWaitingBehindAFullPoolDoNotStopTheStretch) {
  inputs::SearchInputs in = ChatInputs("", "engine.args.max-running-requests=4");
  ChatLoad(in.spec, 24);
  for (const spec::LayoutSpec& layout :
       {StretchLayout(1, 16, 1), StretchLayout(2, 8, 1), StretchLayout(1, 16, 1, 2)})
    for (int c : {6, 16})
      ExpectSame(Both(in, layout, c), "DeepSeek-V3 " + layout.Label() +
                                          " max-running-requests 4 C=" + std::to_string(c));
}

}  // namespace
}  // namespace ppsearch::predict
