// The MLA prefill form through the planner: the prefill attention backend,
// SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD and SGLang's two flags reach the
// cost model's shape.

#include <gtest/gtest.h>

#include "plan/plan_testing.h"
#include "predict/point_parts.h"
#include "predict/predict.h"
#include "testkit/example_search.h"

namespace ppsearch::predict {
namespace {

using plan::testing::Layout;
using plan::testing::SetArg;
using testkit::Example;

cost::LayoutShape Shape(const spec::Spec& spec, const std::string& backend) {
  hardware::HardwareProfile hw = Example().hardware;
  hw.attention_backend = backend;
  return ShapeFromPlan(plan::PlanLayout(Layout(8, 4, 4), spec, Example().model, hw));
}

spec::ArgValue Flag() {
  spec::ArgValue a;
  a.kind = spec::ArgValue::Kind::kBool;
  a.text = "true";
  a.bool_value = true;
  return a;
}

TEST(PredictMlaPrefill, TheBackendTheThresholdAndTheFlagsReachTheShape) {
  // The example runs flashinfer, SGLang's 8,192 threshold.
  spec::Spec spec = Example().spec;
  const cost::LayoutShape plain = Shape(spec, Example().hardware.attention_backend);
  EXPECT_EQ(Example().hardware.attention_backend, "flashinfer");
  EXPECT_TRUE(cost::AbsorbedPrefill(plain.mla_prefill, 384));
  EXPECT_FALSE(cost::AbsorbedPrefill(plain.mla_prefill, 8192));
  EXPECT_FALSE(cost::AbsorbedPrefill(plain.mla_prefill, 0));
  EXPECT_FALSE(cost::AbsorbedPrefill(Shape(spec, "fa4").mla_prefill, 384));
  EXPECT_TRUE(cost::AbsorbedPrefill(Shape(spec, "triton").mla_prefill, 8192));

  spec.engine.env.emplace_back("SGLANG_CHUNKED_PREFIX_CACHE_THRESHOLD", "256");
  EXPECT_FALSE(cost::AbsorbedPrefill(Shape(spec, "flashinfer").mla_prefill, 384));
  SetArg(spec, "disable-chunked-prefix-cache", Flag());
  EXPECT_TRUE(cost::AbsorbedPrefill(Shape(spec, "flashinfer").mla_prefill, 100000));
  SetArg(spec, "flashinfer-mla-disable-ragged", Flag());
  EXPECT_TRUE(cost::AbsorbedPrefill(Shape(spec, "flashinfer").mla_prefill, 0));
}

}  // namespace
}  // namespace ppsearch::predict
