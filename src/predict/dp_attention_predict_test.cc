// DP attention at PP 1 is predicted (one scheduler per DP rank, each with
// SGLang's per-rank share of the engine limits); with PP it is refused.

#include <gtest/gtest.h>

#include "plan/plan_testing.h"
#include "predict/point_parts.h"
#include "predict/predict.h"
#include "testkit/example_search.h"

namespace ppsearch::predict {
namespace {

using testkit::Example;

spec::LayoutSpec DpLayout(int pp, int tp, int ep, int dp) {
  return {.pp = pp, .tp = tp, .ep = ep, .origin = {}, .dp = dp};
}

plan::LayoutPlan DpPlan(const spec::LayoutSpec& layout, const spec::Spec& spec) {
  return plan::PlanLayout(layout, spec, Example().model, Example().hardware);
}

TEST(PredictDpAttention, ModelledAtPp1AndRefusedWithPp) {
  const spec::Spec& spec = Example().spec;
  EXPECT_EQ(NotModelled(DpPlan(DpLayout(1, 32, 4, 2), spec)), std::nullopt);
  EXPECT_EQ(NotModelled(DpPlan(DpLayout(2, 16, 4, 2), spec)).value_or(""),
            "PP2/TP16/EP4/DP2 runs DP attention with pipeline parallelism, which the simulator "
            "does not model (its DP ranks step together at PP 1 only; SGLang itself crashes on "
            "this combination's warm-up request); plan it, or measure it with --engine sglang");
}

TEST(PredictDpAttention, EachRankGetsItsShareOfTheChunkAndTheRequestCap) {
  spec::Spec spec = Example().spec;
  plan::testing::SetArg(spec, "chunked-prefill-size", plan::testing::IntArg(8192, {}));
  plan::testing::SetArg(spec, "max-running-requests", plan::testing::IntArg(64, {}));
  const plan::LayoutPlan lp = DpPlan(DpLayout(1, 32, 4, 4), spec);
  memory::MemoryPlan memory;
  memory.max_running_requests = 4096;
  const sim::SchedulerConfig c = SchedulerConfigFor(lp, Example().model, memory, 0);
  EXPECT_EQ(c.dp_size, 4);
  EXPECT_EQ(c.chunked_prefill_size, 2048);  // server_args.py: chunked_prefill_size // dp
  EXPECT_EQ(c.max_running_requests, 16);    // pool_configurator.py: 64 // 4 per worker
  const sim::SchedulerConfig one =
      SchedulerConfigFor(DpPlan(DpLayout(1, 32, 4, 1), spec), Example().model, memory, 0);
  EXPECT_EQ(one.dp_size, 1);
  EXPECT_EQ(one.chunked_prefill_size, 8192);
  EXPECT_EQ(one.max_running_requests, 4096);
}

TEST(PredictDpAttention, APointRunsEveryRequestAndIsDeterministic) {
  spec::Spec spec = Example().spec;
  spec.workload.requests = 6;
  spec.workload.output_tokens = 4;
  // At the example's 8192-token chunk the embedding, whole on every DP
  // rank, leaves no KV room; 4096 leaves some.
  for (auto& [flag, value] : spec.engine.args)
    if (flag == "chunked-prefill-size") {
      value.int_value = 4096;
      value.text = "4096";
    }
  const plan::LayoutPlan lp = DpPlan(DpLayout(1, 32, 4, 2), spec);
  ASSERT_TRUE(lp.valid) << lp.errors.front().message;
  PointOptions po;
  po.concurrency = 3;
  const PointPrediction a =
      PredictPoint(lp, spec, Example().model, Example().hardware, cost::Calibration{}, po);
  EXPECT_EQ(a.metrics.requests_completed, 6);
  EXPECT_GT(a.metrics.input_tps, 0);
  const PointPrediction b =
      PredictPoint(lp, spec, Example().model, Example().hardware, cost::Calibration{}, po);
  EXPECT_EQ(a.sim.window_ns, b.sim.window_ns);
}

}  // namespace
}  // namespace ppsearch::predict
