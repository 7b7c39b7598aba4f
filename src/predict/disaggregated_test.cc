// A disaggregated deployment predicted on the real cost model: the shipped
// DeepSeek-V3 1P3D example (one prefill server, three decode servers with
// DP attention, Mooncake between them).

#include "predict/disaggregated.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "inputs/search_inputs.h"
#include "ppsearch_source_dir.h"

namespace ppsearch::predict {
namespace {

inputs::DisaggregatedInputs PdExample(const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = {"workload.requests=96"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  Result<std::optional<inputs::DisaggregatedInputs>> in = inputs::LoadDisaggregatedInputs(
      std::string(PPSEARCH_SOURCE_DIR) + "/examples/deepseek-v3-1p3d.toml", overrides);
  EXPECT_TRUE(in.ok() && in->has_value()) << (in.ok() ? "not disaggregated" : in.error().message);
  return **in;
}

DisaggregatedPrediction PredictPd(const inputs::DisaggregatedInputs& in, int concurrency,
                                  bool step_by_step = false) {
  PointOptions o;
  o.concurrency = concurrency;
  o.seed = in.spec.workload.seed;
  o.step_by_step = step_by_step;
  return PredictDisaggregated(in.plan, in.spec, in.model, in.hardware, cost::Calibration{}, o);
}

TEST(PredictDisaggregated, TheExampleCompletesAndItsTtftIsTheSumOfItsParts) {
  const inputs::DisaggregatedInputs in = PdExample();
  ASSERT_FALSE(DisaggregatedNotModelled(in.plan).has_value());
  const DisaggregatedPrediction p = PredictPd(in, 32);
  EXPECT_EQ(p.metrics.requests_completed, 96);
  EXPECT_GT(p.metrics.output_tps, 0);
  // Every completed request's TTFT is its parts' sum, so the means agree.
  EXPECT_NEAR(p.ttft_parts.total(), p.metrics.ttft_s.mean, 1e-6 * p.metrics.ttft_s.mean);
  EXPECT_GT(p.ttft_parts.prefill_s, 0);
  EXPECT_GT(p.ttft_parts.transfer_s, 0);
  // Each prompt's KV crossed once: DeepSeek-V3's 61 MLA layers x 576 bf16
  // values per token.
  EXPECT_EQ(TransferFor(in.plan, in.model, in.hardware).kv_bytes_per_token, 61 * 576 * 2);
  EXPECT_EQ(p.sim.transfer_bytes, int64_t{61 * 576 * 2} * 2000 * 96);
  EXPECT_EQ(p.prefill.gpus, 8);
  EXPECT_EQ(p.decode.gpus, 24);
  EXPECT_EQ(p.decode.servers, 3);
  EXPECT_GT(p.decode.busy_share, p.prefill.busy_share);  // chat: decode works longest
}

TEST(PredictDisaggregated, DecodeStretchesAcrossBothPoolsMatchStepByStep) {
  const inputs::DisaggregatedInputs in = PdExample({"workload.output_tokens=200"});
  const DisaggregatedPrediction a = PredictPd(in, 48, /*step_by_step=*/true);
  const DisaggregatedPrediction b = PredictPd(in, 48);
  EXPECT_EQ(a.sim.decode.stretched_batches, 0);
  EXPECT_GT(b.sim.decode.stretched_batches, b.sim.decode.micro_batches / 2);
  auto near = [](int64_t x, int64_t y) {
    return std::llabs(x - y) <= 1 + std::max(std::llabs(x), std::llabs(y)) / 10000;
  };
  ASSERT_EQ(a.sim.records.size(), b.sim.records.size());
  for (size_t i = 0; i < a.sim.records.size(); ++i) {
    ASSERT_PRED2(near, a.sim.records[i].first_token_ns, b.sim.records[i].first_token_ns) << i;
    ASSERT_PRED2(near, a.sim.records[i].end_ns, b.sim.records[i].end_ns) << i;
  }
}

// Two prefill and two decode servers, equal requests: the requests sent
// together end together on both decode servers, and the least-loaded
// router's ties pick where the next ones go, so a ns between two finishes
// changes the whole course (TTFT p50 0.075 s or 0.258 s). A run's samples,
// which want every token's time, must take the course of the prediction
// of the same point, which does not.
TEST(PredictDisaggregated, EveryTokensTimeLeavesTheCourseAsThePredictionsIs) {
  const inputs::DisaggregatedInputs in = PdExample(
      {"workload.requests=128", "sweep.prefill.hosts=[\"n0\", \"n1\"]", "sweep.prefill.instances=2",
       "sweep.decode.hosts=[\"n2\", \"n3\"]", "sweep.decode.instances=2"});
  PointOptions o;
  o.concurrency = 16;
  o.seed = in.spec.workload.seed;
  o.token_times = true;
  const DisaggregatedPrediction timed =
      PredictDisaggregated(in.plan, in.spec, in.model, in.hardware, cost::Calibration{}, o);
  o.token_times = false;
  const DisaggregatedPrediction lean =
      PredictDisaggregated(in.plan, in.spec, in.model, in.hardware, cost::Calibration{}, o);
  ASSERT_EQ(timed.metrics.requests_completed, 128);
  ASSERT_EQ(timed.sim.records.size(), lean.sim.records.size());
  for (size_t i = 0; i < timed.sim.records.size(); ++i) {
    const workload::RequestRecord &a = timed.sim.records[i], &b = lean.sim.records[i];
    ASSERT_EQ(a.send_ns, b.send_ns) << "request " << i;
    ASSERT_EQ(a.first_token_ns, b.first_token_ns) << "request " << i;
    ASSERT_EQ(a.end_ns, b.end_ns) << "request " << i;
    ASSERT_EQ(a.chunk_ns.size(), static_cast<size_t>(a.output_tokens)) << "request " << i;
    EXPECT_TRUE(b.chunk_ns.empty());
  }
  EXPECT_EQ(timed.metrics.ttft_s.p50, lean.metrics.ttft_s.p50);
}

TEST(PredictDisaggregated, TheBottleneckIsThePoolTheLoadFills) {
  // Long prompts, a single output token: the prefill server works, the
  // decode servers only stream the first token.
  const DisaggregatedPrediction prefill_bound =
      PredictPd(PdExample({"workload.input_tokens=16000", "workload.output_tokens=2"}), 64);
  EXPECT_EQ(prefill_bound.bottleneck, "prefill")
      << prefill_bound.prefill.busy_share << " " << prefill_bound.decode.batch_fill;
  EXPECT_GT(prefill_bound.prefill.busy_share, 0.9);
  // Short prompts, long answers, decode servers that run 8 requests per DP
  // rank (max-running-requests 64 over DP 8; 192 over the pool) under 400
  // in flight: the decode batches run full, and the transferred requests
  // wait their turn to join them.
  const DisaggregatedPrediction decode_bound = PredictPd(
      PdExample({"workload.requests=800", "workload.input_tokens=200", "workload.output_tokens=400",
                 "sweep.decode.args.max-running-requests=64"}),
      400);
  EXPECT_EQ(decode_bound.bottleneck, "decode")
      << decode_bound.prefill.busy_share << " " << decode_bound.decode.batch_fill;
  EXPECT_GT(decode_bound.decode.batch_fill, 0.8);  // less the ramps at either end
  EXPECT_GT(decode_bound.ttft_parts.decode_join_s, decode_bound.ttft_parts.prefill_s);
  // A light load fills neither.
  const DisaggregatedPrediction light = PredictPd(PdExample(), 4);
  EXPECT_EQ(light.bottleneck, "neither");
}

TEST(PredictDisaggregated, ItsIntervalsAddTheNeverCalibratedTransferToThePoolsOwnError) {
  const inputs::DisaggregatedInputs in = PdExample();
  const DisaggregatedPrediction p = PredictPd(in, 32);
  cost::ModelFormScales scales;
  scales.s0 = 0.03;
  scales.pp_depth = 0.05;
  scales.uncalibrated = 0.2;
  scales.hardware = 0.1;
  const DisaggregatedIntervals v =
      ModelFormIntervals(p, in.plan, in.spec, in.hardware, cost::Calibration{}, scales);
  // Uncalibrated: each pool is the uncalibrated distance alone.
  EXPECT_EQ(v.prefill_distance.uncalibrated, 1);
  EXPECT_EQ(v.decode_distance.uncalibrated, 1);
  EXPECT_NEAR(v.pool_sigma, std::hypot(0.03, 0.2), 1e-12);
  EXPECT_NEAR(v.transfer_sigma, 0.2, 1e-12);  // the largest per-unit scale
  EXPECT_NEAR(v.sigma, std::hypot(v.pool_sigma, v.transfer_sigma), 1e-12);
  const double half = std::exp(uncertainty::kZ90 * v.sigma);
  EXPECT_NEAR(v.output_tps.high, p.metrics.output_tps * half, 1e-6 * p.metrics.output_tps);
  EXPECT_NEAR(v.output_tps.low, p.metrics.output_tps / half, 1e-6 * p.metrics.output_tps);
  EXPECT_LT(v.ttft_p50_s.low, p.metrics.ttft_s.p50);
  EXPECT_GT(v.tpot_p50_s.high, p.metrics.tpot_s.p50);
}

TEST(PredictDisaggregated, ARoundRobinRouterSpreadsAsEvenlyAsTheBalancingOne) {
  const DisaggregatedPrediction rr =
      PredictPd(PdExample({"engine.disaggregation.router_policy=\"round_robin\""}), 24);
  std::vector<int> per_decode(3);
  for (const sim::RequestPhases& ph : rr.sim.phases)
    ++per_decode[static_cast<size_t>(ph.decode_instance)];
  EXPECT_EQ(per_decode, (std::vector<int>{32, 32, 32}));
}

}  // namespace
}  // namespace ppsearch::predict
