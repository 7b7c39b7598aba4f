// Speed of the simulator (reported in docs/model.md): the whole example search,
// the example's 8 points with their intervals as `ppsearch simulate` makes
// them (central + 32 ensemble members, 2 threads), and a long PP8 run whose memory must stay flat
// beyond the kept records.

#include <benchmark/benchmark.h>

#include <string>

#include "inputs/search_inputs.h"
#include "plan/disaggregation.h"
#include "ppsearch_source_dir.h"
#include "predict/disaggregated.h"
#include "predict/predict.h"
#include "predict/search_points.h"
#include "testkit/example_search.h"

namespace ppsearch {
namespace {

using testkit::Example;
using Inputs = testkit::ExampleInputs;

// 4 layouts x 2 concurrencies x 3 repeats, as `ppsearch run` on the simulated engine does.
void BM_ExampleSearch(benchmark::State& state) {
  const Inputs& in = Example();
  cost::Calibration cal;
  for (auto _ : state) {
    double sum = 0;
    for (const auto& lp : in.plan.layouts)
      for (int c : in.spec.sweep.concurrency)
        for (int r = 0; r < in.spec.sweep.repeats; ++r) {
          predict::PointOptions po;
          po.concurrency = c;
          po.seed = in.spec.workload.seed + r;
          sum +=
              predict::PredictPoint(lp, in.spec, in.model, in.hardware, cal, po).metrics.input_tps;
        }
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_ExampleSearch)->Unit(benchmark::kMillisecond);

// `ppsearch simulate` of the example with intervals: each point's central
// prediction and its 32 members (no pp-max-micro-batch-size = 1 check).
void BM_ExampleIntervals(benchmark::State& state) {
  const Inputs& in = Example();
  const cost::Calibration cal;
  predict::SearchOptions options;
  options.threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    const predict::SearchPrediction p = predict::PredictSearch(in, cal, options);
    benchmark::DoNotOptimize(p.intervals.front().input_tps.low);
  }
}
BENCHMARK(BM_ExampleIntervals)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// One load point of the chat example (DeepSeek-V3, 512 requests of 2,000
// tokens in and 1,000 out) at PP4/TP8 and concurrency C, as the search
// predicts it (no per-token times): a low concurrency has the most decode
// steps, one token each.
void BM_ChatPoint(benchmark::State& state) {
  static const inputs::SearchInputs in = *inputs::LoadSpecFileInputs(
      std::string(PPSEARCH_SOURCE_DIR) + "/examples/deepseek-v3-chat-search.toml");
  const plan::LayoutPlan* pp4 = nullptr;
  for (const auto& lp : in.plan.layouts)
    if (lp.layout.pp == 4) pp4 = &lp;
  predict::PointOptions po;
  po.concurrency = static_cast<int>(state.range(0));
  po.token_times = false;
  for (auto _ : state) {
    auto p = predict::PredictPoint(*pp4, in.spec, in.model, in.hardware, cost::Calibration{}, po);
    benchmark::DoNotOptimize(p.metrics.output_tps);
    state.counters["decode_batches"] = static_cast<double>(p.sim.decode_batches);
  }
}
BENCHMARK(BM_ChatPoint)->Arg(1)->Arg(2)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);

// One load point of the disaggregated example (DeepSeek-V3 1P3D, the decode
// servers with DP attention; 512 requests of 2,000 tokens in and 1,000
// out) at concurrency C, as `simulate` and the search predict it.
void BM_DisaggregatedPoint(benchmark::State& state) {
  static const inputs::DisaggregatedInputs in = **inputs::LoadDisaggregatedInputs(
      std::string(PPSEARCH_SOURCE_DIR) + "/examples/deepseek-v3-1p3d.toml", {});
  predict::PointOptions po;
  po.concurrency = static_cast<int>(state.range(0));
  po.seed = in.spec.workload.seed;
  po.token_times = false;
  for (auto _ : state) {
    auto p = predict::PredictDisaggregated(in.plan, in.spec, in.model, in.hardware,
                                           cost::Calibration{}, po);
    benchmark::DoNotOptimize(p.metrics.output_tps);
    state.counters["decode_batches"] = static_cast<double>(p.sim.decode.micro_batches);
    state.counters["stretched"] = static_cast<double>(p.sim.decode.stretched_batches);
  }
}
BENCHMARK(BM_DisaggregatedPoint)->Arg(1)->Arg(16)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

// N requests of 16K prefill at PP8/TP4/EP4, closed loop C = 16.
void BM_Pp8LongRun(benchmark::State& state) {
  Inputs in = Example();
  in.spec.workload.requests = static_cast<int>(state.range(0));
  const plan::LayoutPlan* pp8 = nullptr;
  for (const auto& lp : in.plan.layouts)
    if (lp.layout.pp == 8) pp8 = &lp;
  cost::Calibration cal;
  for (auto _ : state) {
    predict::PointOptions po;
    po.concurrency = 16;
    auto p = predict::PredictPoint(*pp8, in.spec, in.model, in.hardware, cal, po);
    benchmark::DoNotOptimize(p.metrics.input_tps);
    state.counters["micro_batches"] = static_cast<double>(p.sim.micro_batches);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Pp8LongRun)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace ppsearch
