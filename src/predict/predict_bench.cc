// Speed of the simulator (reported in the README): the whole example search,
// and a long PP8 run whose memory must stay flat beyond the kept records.

#include <benchmark/benchmark.h>

#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "plan/plan.h"
#include "predict/predict.h"
#include "spec/spec_parser.h"

namespace ppsearch {
namespace {

struct Inputs {
  spec::Spec spec;
  model::ModelDesc model;
  hardware::HardwareProfile hw;
  plan::Plan plan;
};

const Inputs& Example() {
  static const Inputs in = [] {
    Inputs i;
    i.spec = *spec::LoadSpec(std::string(PPSEARCH_SOURCE_DIR) + "/examples/kimi-k3-pp-search.toml");
    i.model = *model::LoadModel(i.spec.engine.model_config);
    i.hw = *hardware::LoadHardwareProfile(i.spec.cluster.hardware);
    i.plan = plan::PlanSearch(i.spec, i.model, i.hw);
    return i;
  }();
  return in;
}

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
          sum += predict::PredictPoint(lp, in.spec, in.model, in.hw, cal, po).metrics.input_tps;
        }
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_ExampleSearch)->Unit(benchmark::kMillisecond);

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
    auto p = predict::PredictPoint(*pp8, in.spec, in.model, in.hw, cal, po);
    benchmark::DoNotOptimize(p.metrics.input_tps);
    state.counters["micro_batches"] = static_cast<double>(p.sim.micro_batches);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Pp8LongRun)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace ppsearch
