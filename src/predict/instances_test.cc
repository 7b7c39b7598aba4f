// A layout of several instances is predicted as its instances, each at its
// share of the load: throughputs summed, latency figures one instance's.

#include <gtest/gtest.h>

#include "predict/predict.h"
#include "testkit/example_search.h"

namespace ppsearch::predict {
namespace {

using testkit::Example;

// The example's cluster cut to its first `hosts` hosts, `requests` a sample.
spec::Spec FirstHosts(int hosts, int requests) {
  spec::Spec s = Example().spec;
  s.cluster.hosts.resize(static_cast<size_t>(hosts));
  s.workload.requests = requests;
  return s;
}

spec::LayoutSpec InstancesLayout(int instances, int pp, int tp, int ep) {
  spec::LayoutSpec l;
  l.instances = instances;
  l.pp = pp;
  l.tp = tp;
  l.ep = ep;
  return l;
}

PointPrediction At(const spec::LayoutSpec& layout, const spec::Spec& spec, int concurrency) {
  const auto& in = Example();
  const plan::LayoutPlan lp = plan::PlanLayout(layout, spec, in.model, in.hardware);
  PointOptions po;
  po.concurrency = concurrency;
  po.seed = spec.workload.seed;
  return PredictPoint(lp, spec, in.model, in.hardware, cost::Calibration{}, po);
}

TEST(PredictInstances, AnEvenSplitIsTwiceOneInstanceAtHalfTheLoad) {
  const PointPrediction two = At(InstancesLayout(2, 2, 8, 8), FirstHosts(4, 32), 16);
  const PointPrediction one = At(InstancesLayout(1, 2, 8, 8), FirstHosts(2, 16), 8);
  ASSERT_GT(one.metrics.input_tps, 0);
  EXPECT_DOUBLE_EQ(two.metrics.input_tps, 2 * one.metrics.input_tps);
  EXPECT_DOUBLE_EQ(two.metrics.output_tps, 2 * one.metrics.output_tps);
  EXPECT_EQ(two.metrics.requests_completed, 2 * one.metrics.requests_completed);
  EXPECT_DOUBLE_EQ(two.metrics.ttft_s.p50, one.metrics.ttft_s.p50);
  EXPECT_DOUBLE_EQ(two.metrics.ttft_s.p99, one.metrics.ttft_s.p99);
  EXPECT_DOUBLE_EQ(two.metrics.duration_s, one.metrics.duration_s);
  EXPECT_DOUBLE_EQ(two.memory.peak_mib_max, one.memory.peak_mib_max);
  EXPECT_EQ(two.concurrency, 16);
}

TEST(PredictInstances, AnUnevenSplitSumsBothSharesWithTheBusierLatency) {
  // C = 5 over 2 instances: 3 and 2 in flight, 18 and 12 of the 30 requests.
  const PointPrediction busier = At(InstancesLayout(1, 2, 8, 8), FirstHosts(2, 18), 3);
  const PointPrediction lighter = At(InstancesLayout(1, 2, 8, 8), FirstHosts(2, 12), 2);
  const PointPrediction two = At(InstancesLayout(2, 2, 8, 8), FirstHosts(4, 30), 5);
  EXPECT_DOUBLE_EQ(two.metrics.input_tps, busier.metrics.input_tps + lighter.metrics.input_tps);
  EXPECT_EQ(two.metrics.requests_completed, 30);
  EXPECT_DOUBLE_EQ(two.metrics.ttft_s.p50, busier.metrics.ttft_s.p50);
  // C = 1 over 2 instances: one serves every request, the other is idle.
  const PointPrediction alone = At(InstancesLayout(1, 2, 8, 8), FirstHosts(2, 30), 1);
  const PointPrediction idle = At(InstancesLayout(2, 2, 8, 8), FirstHosts(4, 30), 1);
  EXPECT_DOUBLE_EQ(idle.metrics.input_tps, alone.metrics.input_tps);
}

TEST(SplitOverInstances, GroupsEqualShares) {
  workload::WorkloadParams w;
  w.concurrency = 10;
  w.num_requests = 40;
  w.request_rate = 4;
  const InstanceShares even = SplitOverInstances(w, 2);
  ASSERT_EQ(even.shares.size(), 1u);
  EXPECT_EQ(even.copies, (std::vector<int>{2}));
  EXPECT_EQ(even.shares[0].concurrency, 5);
  EXPECT_EQ(even.shares[0].num_requests, 20);
  EXPECT_DOUBLE_EQ(even.shares[0].request_rate, 2);
  const InstanceShares three = SplitOverInstances(w, 4);  // 3, 3, 2, 2 in flight
  ASSERT_EQ(three.shares.size(), 2u);
  EXPECT_EQ(three.copies, (std::vector<int>{2, 2}));
  EXPECT_EQ(three.shares[0].concurrency, 3);
  EXPECT_EQ(three.shares[0].num_requests, 12);
  EXPECT_EQ(three.shares[1].num_requests, 8);
}

// Poisson arrivals without a cap on requests in flight: the router spreads
// the requests, each instance uncapped at its share of the rate (before,
// nothing was split and one instance served every request, its throughput
// then counted over every instance's GPUs).
TEST(SplitOverInstances, WithoutACapTheRequestsAndTheRateAreSplit) {
  workload::WorkloadParams w;
  w.concurrency = 0;
  w.num_requests = 42;
  w.request_rate = 4.2;
  const InstanceShares four = SplitOverInstances(w, 4);  // 11, 11, 10, 10 requests
  ASSERT_EQ(four.shares.size(), 2u);
  EXPECT_EQ(four.copies, (std::vector<int>{2, 2}));
  EXPECT_EQ(four.shares[0].concurrency, 0);
  EXPECT_EQ(four.shares[0].num_requests, 11);
  EXPECT_DOUBLE_EQ(four.shares[0].request_rate, 1.1);
  EXPECT_EQ(four.shares[1].num_requests, 10);

  spec::Spec two_spec = FirstHosts(4, 32), one_spec = FirstHosts(2, 16);
  two_spec.workload.request_rate = 0.2;
  one_spec.workload.request_rate = 0.1;
  const PointPrediction two = At(InstancesLayout(2, 2, 8, 8), two_spec, 0);
  const PointPrediction one = At(InstancesLayout(1, 2, 8, 8), one_spec, 0);
  ASSERT_GT(one.metrics.input_tps, 0);
  EXPECT_DOUBLE_EQ(two.metrics.input_tps, 2 * one.metrics.input_tps);
  EXPECT_EQ(two.metrics.requests_completed, 32);
  EXPECT_DOUBLE_EQ(two.metrics.ttft_s.p50, one.metrics.ttft_s.p50);
}

}  // namespace
}  // namespace ppsearch::predict
