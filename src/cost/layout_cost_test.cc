// The layout cost model on a small hand-made model and GPU: hand-worked
// stage costs, how a pipeline split divides them, which collectives run, and
// the monotonicity a search relies on.

#include "cost/layout_cost.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "cost/calibration.h"
#include "cost/cost_testing.h"
#include "cost/gemm.h"
#include "model/model_testing.h"
#include "util/files.h"

namespace ppsearch::cost {
namespace {

using model::DType;
using model::OpRole;
using model::Sharding;

using model::testing::MakeLinear;
using testing::Ideal;
using testing::TinyDenseModel;
using testing::TinyGpu;

// `pp` stages of equal layer counts over `layers` layers, TP groups spanning
// `tp_nodes` nodes, no stage hop crossing nodes.
LayoutShape Layout(int pp, int tp, int layers = 4, int tp_nodes = 1, int ep = 1) {
  LayoutShape l;
  l.pp = pp;
  l.tp = tp;
  l.ep = ep;
  for (int s = 0; s < pp; ++s) {
    StageShape st;
    st.first_layer = s * layers / pp;
    st.end_layer = (s + 1) * layers / pp;
    st.has_embedding = s == 0;
    st.has_lm_head = s == pp - 1;
    st.tp_nodes = tp_nodes;
    l.stages.push_back(st);
  }
  return l;
}

sim::MicroBatch Prefill(std::vector<std::pair<int64_t, int64_t>> extend_and_prefix) {
  sim::MicroBatch b;
  b.is_prefill = true;
  int r = 0;
  for (auto [extend, prefix] : extend_and_prefix) b.entries.push_back({r++, extend, prefix, true});
  return b;
}

sim::MicroBatch Decode(int sequences, int64_t prefix) {
  sim::MicroBatch b;
  for (int r = 0; r < sequences; ++r) b.entries.push_back({r, 1, prefix, false});
  return b;
}

// Batches of every kind the scheduler forms.
std::vector<sim::MicroBatch> SampleBatches() {
  return {Prefill({{1024, 0}}),   Prefill({{8192, 0}}),
          Prefill({{512, 4096}}), Prefill({{300, 0}, {700, 2000}}),
          Decode(1, 4095),        Decode(16, 16000)};
}

TEST(LayoutCostModel, Tp1Pp1PrefillHandWorked) {
  const model::ModelDesc m = TinyDenseModel();
  LayoutCostModel cost(m, TinyGpu(), Layout(1, 1), Ideal());
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  StageBreakdown b = cost.Breakdown(0, batch);
  // GEMMs, m = 1024 tokens, 100 SMs, 100 TFLOPS, depth = k / (k + 128):
  //   qkv     n 1536 k 1024: 8 x 12 = 96 tiles, wave 0.96, depth 8/9;
  //           2 x 1024 x 1536 x 1024 = 3.2212e9 FLOP / 85.33 TFLOPS = 37,748.7 -> 37,749
  //   o_proj  n 1024 k 1024: 64 tiles, wave 0.64, depth 8/9;
  //           2.1475e9 / 56.89 TFLOPS = 37,748.7 -> 37,749
  //   gate_up n 8192 k 1024: 512 tiles, 6 waves, wave 512/600, depth 8/9;
  //           1.7180e10 / 75.85 TFLOPS = 226,492.4 -> 226,492
  //   down    n 1024 k 4096: 64 tiles, wave 0.64, depth 32/33;
  //           8.5899e9 / 62.06 TFLOPS = 138,412.0 -> 138,412
  //   per layer 440,402, 4 layers 1,761,608
  //   lm_head m 1 (one sequence's logits) n 32768 k 1024: M tile 16, 256 tiles,
  //           3 waves, tile 1/16, wave 256/300, depth 8/9; 6.7109e7 FLOP / 4.7407
  //           TFLOPS = 14,155.8, but bytes 67,176,448 / 1000 GB/s = 67,176.4 wins
  //           (memory bound) -> 67,176
  //   embedding: gather 2 x 1024 x 1024 x 2 bytes / 1000 GB/s = 4,194.304
  //   total 1,761,608 + 67,176 + 4,194.304 = 1,832,978.304
  EXPECT_DOUBLE_EQ(b.gemm_ns, 1832978.304);
  // Attention: causal ctx = 0 + (1024 + 1) / 2 = 512.5; 4 x 16 heads x 1024 x 512.5
  // x 64 = 2.1496e9 FLOP at 100 TFLOPS x 0.5 = 42,991.616 per layer, x 4 layers.
  EXPECT_NEAR(b.attention_ns, 171966.464, 1e-6);
  // Element-wise: 12 passes x 1024 x 1024 x 2 bytes / 1000 GB/s = 25,165.824, x 4.
  EXPECT_NEAR(b.elementwise_ns, 100663.296, 1e-6);
  // Gaps: (4 GEMMs + 8 other kernels) x 1 us per layer, x 4.
  EXPECT_DOUBLE_EQ(b.gaps_ns, 48000);
  EXPECT_EQ(b.allreduce_calls, 0);
  EXPECT_EQ(b.allreduce_ns, 0);
  EXPECT_EQ(b.recv_allgather_ns, 0);

  sim::StageTime t = cost.StageCost(0, batch);
  // 1,832,978.304 + 171,966.464 + 100,663.296 = 2,105,608.064
  EXPECT_EQ(t.compute_ns, 2105608);
  EXPECT_EQ(t.overhead_ns, 48000);
  EXPECT_EQ(t.comm_ns, 0);
  EXPECT_EQ(t.transfer_ns, 0);
  EXPECT_EQ(t.total_ns(), 2153608);
}

TEST(LayoutCostModel, ShardingFollowsTheLinearsSplit) {
  // TP2: column linears halve n, row linears halve k, the LM head halves the
  // vocabulary; the embedding gather is the same bytes.
  const model::ModelDesc m = TinyDenseModel();
  const hardware::HardwareProfile hw = TinyGpu();
  LayoutCostModel cost(m, hw, Layout(1, 2), Ideal());
  auto ns = [&](int64_t rows, int64_t n, int64_t k) {
    return EstimateGemm({.m = rows, .n = n, .k = k}, 100, 1000, 100, 1.0).ns;
  };
  const double per_layer = static_cast<double>(ns(1024, 768, 1024) + ns(1024, 1024, 512) +
                                               ns(1024, 4096, 1024) + ns(1024, 1024, 2048));
  const double expected = 4 * per_layer + static_cast<double>(ns(1, 16384, 1024)) + 4194.304;
  EXPECT_DOUBLE_EQ(cost.Breakdown(0, Prefill({{1024, 0}})).gemm_ns, expected);
  // GQA heads split too: 8 heads per rank halve the attention FLOPs.
  EXPECT_NEAR(cost.Breakdown(0, Prefill({{1024, 0}})).attention_ns, 171966.464 / 2, 1e-6);
}

TEST(LayoutCostModel, Tp2CollectivesHandWorked) {
  const model::ModelDesc m = TinyDenseModel();
  LayoutCostModel cost(m, TinyGpu(), Layout(1, 2), Ideal());
  StageBreakdown b = cost.Breakdown(0, Prefill({{1024, 0}}));
  // 2 all-reduces per layer x 4 + 1 for the vocab-parallel embedding.
  EXPECT_EQ(b.allreduce_calls, 9);
  // Each: 1024 x 1024 x 2 = 2,097,152 bytes on 2 GPUs of one node:
  //   5 us + 2 x 1/2 x 2,097,152 / 40 GB/s = 5,000 + 52,428.8 -> 57,429 ns.
  // LM head all-gather: 1 x 32768 x 2 = 65,536 bytes: 5,000 + 1/2 x 65,536 / 40
  //   = 5,819.2 -> 5,819 ns.  9 x 57,429 + 5,819 = 522,680.
  EXPECT_DOUBLE_EQ(b.allreduce_ns, 522680);
  EXPECT_EQ(b.recv_allgather_ns, 0);  // stage 0 receives no activations
  sim::StageTime t = cost.StageCost(0, Prefill({{1024, 0}}));
  EXPECT_EQ(t.comm_ns, 522680);
  EXPECT_EQ(t.allreduce_calls, 9);
}

// TinyGpu with a tensor burst: twice the sustained rate for `window_ms`.
hardware::HardwareProfile BurstGpu(double window_ms) {
  hardware::HardwareProfile hw = TinyGpu();
  hw.burst_bf16_tflops = 200;
  hw.burst_window_ms = window_ms;
  return hw;
}

TEST(LayoutCostModel, TensorBurstShortensEachPhaseBetweenCollectives) {
  // TP2, 1,024 tokens, per layer at 100 TFLOPS (ShardingFollowsTheLinearsSplit's
  // GEMMs) and at the burst's 200 (compute-bound, so half; llround each):
  //   attention phase  qkv 20,972 | 10,486   o_proj 20,972 | 10,486
  //   FFN phase        gate_up 113,246 | 56,623   down 71,303
  // Window 30,000 ns; the all-reduce before each phase (57,429 ns,
  // Tp2CollectivesHandWorked) refills it whole.
  //   attention: 10,486 + 10,486 = 20,972 fits the window: saves 20,972
  //   FFN: gate_up runs 30,000 ns at the burst rate (60,000 ns of sustained
  //        work), then 53,246 sustained: 83,246, saves 30,000; down sustained
  // 50,972 per layer, 4 layers: 203,888 less GEMM time.
  const model::ModelDesc m = TinyDenseModel();
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  LayoutCostModel plain(m, TinyGpu(), Layout(1, 2), Ideal());
  LayoutCostModel burst(m, BurstGpu(0.03), Layout(1, 2), Ideal());
  const StageBreakdown a = plain.Breakdown(0, batch), b = burst.Breakdown(0, batch);
  EXPECT_NEAR(a.gemm_ns - b.gemm_ns, 203888, 1e-6);
  EXPECT_DOUBLE_EQ(a.allreduce_ns, b.allreduce_ns);
  EXPECT_DOUBLE_EQ(a.elementwise_ns, b.elementwise_ns);
  EXPECT_DOUBLE_EQ(a.attention_ns, b.attention_ns);  // attention kernels get no burst
}

TEST(LayoutCostModel, ABudgetTheCollectivesKeepFullBurstsEveryGemm) {
  // A 1 ms window, and each phase follows 57,429 ns of all-reduce, which
  // refills more than the phase spends: every GEMM runs at the burst rate
  // (compute-bound, each burst ns saves one): attention 20,972, gate_up
  // 56,623, down 71,303 - 35,652 = 35,651; 113,246 a layer, 4 layers.
  const model::ModelDesc m = TinyDenseModel();
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  LayoutCostModel plain(m, TinyGpu(), Layout(1, 2), Ideal());
  LayoutCostModel burst(m, BurstGpu(1.0), Layout(1, 2), Ideal());
  EXPECT_NEAR(plain.Breakdown(0, batch).gemm_ns - burst.Breakdown(0, batch).gemm_ns, 452984, 1e-6);
}

TEST(LayoutCostModel, ABudgetThatRunsDryBurstsOnlyWhatTheIdleRefills) {
  // The same at refill_ratio 0.5: a layer could spend 113,246 ns of burst
  // but its two all-reduces buy back 0.5 x 2 x 57,429 = 57,429, so however
  // large the window a serving stage drains it and then saves that much a
  // layer: 4 x 57,429.
  const model::ModelDesc m = TinyDenseModel();
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  hardware::HardwareProfile half = BurstGpu(1.0);
  half.burst_refill_ratio = 0.5;
  LayoutCostModel plain(m, TinyGpu(), Layout(1, 2), Ideal());
  LayoutCostModel burst(m, half, Layout(1, 2), Ideal());
  const double plain_ns = plain.Breakdown(0, batch).gemm_ns;
  EXPECT_NEAR(plain_ns - burst.Breakdown(0, batch).gemm_ns, 4 * 57429, 1e-6);
  // Spending it is paid back: 0.05 ms at half the sustained rate for a
  // whole 1 ms window, pro rata for less. Each layer still bursts the
  // 57,429 ns its all-reduces refill and runs dry inside gate_up, whose
  // next 0.05 x 57,429 = 2,871.45 ns then run at the payback rate: half the
  // work the sustained rate would do, 1,435.725 ns lost. A layer saves
  // 57,429 - 1,435.725 = 55,993.275; 4 layers 223,973.1.
  half.burst_payback_bf16_tflops = 50;
  half.burst_payback_ms = 0.05;
  LayoutCostModel payback(m, half, Layout(1, 2), Ideal());
  EXPECT_NEAR(plain_ns - payback.Breakdown(0, batch).gemm_ns, 223973.1, 1e-3);
  // A budget that never runs dry never pays back.
  hardware::HardwareProfile kept = BurstGpu(1.0);
  kept.burst_payback_bf16_tflops = 50;
  kept.burst_payback_ms = 0.05;
  EXPECT_NEAR(
      plain_ns - LayoutCostModel(m, kept, Layout(1, 2), Ideal()).Breakdown(0, batch).gemm_ns,
      452984, 1e-6);
}

TEST(LayoutCostModel, TensorBurstNeedsIdleTensorCores) {
  // TP1 has no collectives to idle through, and decode steps are
  // bandwidth-bound: both cost as without a burst.
  const model::ModelDesc m = TinyDenseModel();
  for (int tp : {1, 2}) {
    LayoutCostModel plain(m, TinyGpu(), Layout(1, tp), Ideal());
    LayoutCostModel burst(m, BurstGpu(1.0), Layout(1, tp), Ideal());
    for (const sim::MicroBatch& batch : SampleBatches()) {
      if (tp == 2 && batch.is_prefill) continue;
      EXPECT_EQ(plain.StageCost(0, batch).compute_ns, burst.StageCost(0, batch).compute_ns)
          << "tp " << tp;
    }
  }
}

// TinyDenseModel with its gate_up replaced by two 1024 -> 256 projections,
// merged into one GEMM in the layers `fused` names.
model::ModelDesc WithGateAndUpHalves(const std::function<bool(int layer)>& fused) {
  model::ModelDesc m = TinyDenseModel();
  for (auto& layer : m.layers) {
    layer.linears[2] = MakeLinear("gate", 1024, 256, Sharding::kColumn, OpRole::kDenseMlp);
    layer.linears.insert(layer.linears.begin() + 3,
                         MakeLinear("up", 1024, 256, Sharding::kColumn, OpRole::kDenseMlp));
    if (fused(layer.index))
      layer.linears[2].fused_gemm = layer.linears[3].fused_gemm = "gate_up_proj";
  }
  return m;
}

TEST(LayoutCostModel, FusedProjectionsRunAtTheMergedGemmsEfficiency) {
  // TinyDenseModel's gate_up replaced by two 1024 -> 256 projections, TP1,
  // 1,024 tokens, 100 SMs: each 2 x 1024 x 256 x 1024 = 536,870,912 FLOP.
  //   alone, n 256: best 64 x 64 tiles, 16 x 4 = 64 of 100 SMs, 0.64 x 0.75,
  //     depth 8/9: 0.426667 -> 12,582.9 -> 12,583 ns
  //   merged, n 512: 128 x 64 tiles, 8 x 8 = 64, 0.64 x 0.9 x 8/9 = 0.512
  //     -> 10,485.76 -> 10,486 ns
  // 2,097 ns less per projection, 2 per layer, 4 layers: 16,776.
  const model::ModelDesc separate = WithGateAndUpHalves([](int) { return false; });
  const model::ModelDesc merged = WithGateAndUpHalves([](int) { return true; });
  LayoutCostModel a(separate, TinyGpu(), Layout(1, 1), Ideal());
  LayoutCostModel b(merged, TinyGpu(), Layout(1, 1), Ideal());
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  EXPECT_DOUBLE_EQ(a.Breakdown(0, batch).gemm_ns - b.Breakdown(0, batch).gemm_ns, 16776);
}

TEST(LayoutCostModel, ALayerUnlikeTheOneBeforeIsPricedAsItself) {
  // Most layers repeat the one before and are priced as it; here only layer
  // 2 of 4 merges its gate and up projections. Its prefill saves what one
  // merged layer saves above (2 x 2,097 ns), and its decode step launches
  // one GEMM fewer (DecodeKernelsPerLayer): layer 3, like layers 0 and 1,
  // must not be priced as layer 2.
  const model::ModelDesc separate = WithGateAndUpHalves([](int) { return false; });
  const model::ModelDesc one_merged = WithGateAndUpHalves([](int layer) { return layer == 2; });
  const Calibration c = Ideal();
  LayoutCostModel a(separate, TinyGpu(), Layout(1, 1), c);
  LayoutCostModel b(one_merged, TinyGpu(), Layout(1, 1), c);
  const sim::MicroBatch prefill = Prefill({{1024, 0}});
  EXPECT_DOUBLE_EQ(a.Breakdown(0, prefill).gemm_ns - b.Breakdown(0, prefill).gemm_ns, 4194);
  const sim::MicroBatch decode = Decode(4, 1000);
  EXPECT_DOUBLE_EQ(a.Breakdown(0, decode).gaps_ns - b.Breakdown(0, decode).gaps_ns,
                   c.Get(Param::kDecodeKernel) * 1e3);
}

TEST(LayoutCostModel, Tp1HasNoCommunication) {
  const model::ModelDesc m = TinyDenseModel();
  for (int pp : {1, 2, 4}) {
    LayoutCostModel cost(m, TinyGpu(), Layout(pp, 1), Ideal());
    for (int s = 0; s < pp; ++s) {
      for (const sim::MicroBatch& batch : SampleBatches()) {
        sim::StageTime t = cost.StageCost(s, batch);
        EXPECT_EQ(t.comm_ns, 0);
        EXPECT_EQ(t.transfer_ns, 0);
        EXPECT_EQ(t.allreduce_calls, 0);
      }
    }
  }
}

TEST(LayoutCostModel, AllReduceCallsAreTwoPerLayerPlusTheEmbeddingStage) {
  const model::ModelDesc m = TinyDenseModel();
  LayoutCostModel pp2(m, TinyGpu(), Layout(2, 2), Ideal());
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  EXPECT_EQ(pp2.StageCost(0, batch).allreduce_calls, 2 * 2 + 1);
  EXPECT_EQ(pp2.StageCost(1, batch).allreduce_calls, 2 * 2);
  LayoutCostModel pp4(m, TinyGpu(), Layout(4, 2), Ideal());
  EXPECT_EQ(pp4.StageCost(0, batch).allreduce_calls, 3);
  for (int s = 1; s < 4; ++s) EXPECT_EQ(pp4.StageCost(s, batch).allreduce_calls, 2);
}

TEST(LayoutCostModel, LaterStagesAllGatherTheirInput) {
  // send-allgather: 2 x 2,097,152 bytes on 2 GPUs: 5,000 + 1/2 x 4,194,304 / 40
  // = 5,000 + 52,428.8 -> 57,429 ns.
  const model::ModelDesc m = TinyDenseModel();
  LayoutCostModel cost(m, TinyGpu(), Layout(2, 2), Ideal());
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  EXPECT_EQ(cost.StageCost(0, batch).transfer_ns, 0);
  EXPECT_EQ(cost.StageCost(1, batch).transfer_ns, 57429);
}

TEST(LayoutCostModel, PipelineStagesSumToTheUnsplitCost) {
  const model::ModelDesc m = TinyDenseModel();
  for (int tp : {1, 2}) {
    LayoutCostModel whole(m, TinyGpu(), Layout(1, tp), Ideal());
    for (int pp : {2, 4}) {
      LayoutCostModel split(m, TinyGpu(), Layout(pp, tp), Ideal());
      for (const sim::MicroBatch& batch : SampleBatches()) {
        SCOPED_TRACE(::testing::Message()
                     << "tp " << tp << " pp " << pp << " tokens " << batch.extend_tokens());
        sim::StageTime one = whole.StageCost(0, batch);
        int64_t compute = 0, comm = 0, overhead = 0;
        int calls = 0;
        for (int s = 0; s < pp; ++s) {
          sim::StageTime t = split.StageCost(s, batch);
          compute += t.compute_ns;
          comm += t.comm_ns;
          overhead += t.overhead_ns;
          calls += t.allreduce_calls;
        }
        // Each stage rounds its own sum to the nanosecond.
        EXPECT_NEAR(static_cast<double>(compute), static_cast<double>(one.compute_ns), pp);
        EXPECT_EQ(comm, one.comm_ns);
        EXPECT_EQ(overhead, one.overhead_ns);
        EXPECT_EQ(calls, one.allreduce_calls);
      }
    }
  }
}

TEST(LayoutCostModel, FasterGpuIsNeverSlower) {
  const model::ModelDesc m = TinyDenseModel();
  const hardware::HardwareProfile base = TinyGpu();
  hardware::HardwareProfile more_flops = base;
  more_flops.bf16_tflops *= 2;
  more_flops.fp8_tflops *= 2;
  more_flops.w4a8_tflops *= 2;
  hardware::HardwareProfile more_bw = base;
  more_bw.memory_bw_gbps *= 2;
  for (const LayoutShape& layout : {Layout(1, 1), Layout(2, 2), Layout(2, 4)}) {
    LayoutCostModel slow(m, base, layout, Ideal());
    LayoutCostModel fast_compute(m, more_flops, layout, Ideal());
    LayoutCostModel fast_memory(m, more_bw, layout, Ideal());
    for (int s = 0; s < slow.num_stages(); ++s) {
      for (const sim::MicroBatch& batch : SampleBatches()) {
        const int64_t t = slow.StageCost(s, batch).total_ns();
        EXPECT_LE(fast_compute.StageCost(s, batch).total_ns(), t);
        EXPECT_LE(fast_memory.StageCost(s, batch).total_ns(), t);
      }
    }
    // A large prefill is compute-bound: twice the FLOPS is strictly faster.
    EXPECT_LT(fast_compute.StageCost(0, Prefill({{8192, 0}})).compute_ns,
              slow.StageCost(0, Prefill({{8192, 0}})).compute_ns);
  }
}

TEST(LayoutCostModel, MoreInterNodeBandwidthIsNeverSlowerForASpanningGroup) {
  // TP8 on 4-GPU nodes: the group spans 2 nodes, 4 ranks on each. busbw =
  // min(30 x scale, 4 x NIC): NIC-bound below 7.5 GB/s per GPU.
  const model::ModelDesc m = TinyDenseModel();
  const sim::MicroBatch batch = Prefill({{2048, 0}});
  int64_t previous = INT64_MAX;
  for (double nic : {0.5, 1.0, 2.0, 5.0, 7.5, 10.0, 25.0}) {
    Calibration c = Ideal();
    c.Set(Param::kInterLink, nic / 25);  // the profile's line rate is 25 GB/s per GPU
    LayoutCostModel cost(m, TinyGpu(), Layout(1, 8, 4, /*tp_nodes=*/2), c);
    const int64_t comm = cost.StageCost(0, batch).comm_ns;
    EXPECT_LE(comm, previous) << nic;
    if (nic <= 7.5) {
      EXPECT_LT(comm, previous) << nic;  // still NIC-bound: strictly faster
    }
    previous = comm;
  }
  // The calibrated efficiency applies to the profile's NIC line rate.
  hardware::HardwareProfile fast_nic = TinyGpu();
  fast_nic.nic_gbps_per_gpu = 1;
  hardware::HardwareProfile slow_nic = TinyGpu();
  slow_nic.nic_gbps_per_gpu = 0.5;
  LayoutCostModel fast(m, fast_nic, Layout(1, 8, 4, 2), Ideal());
  LayoutCostModel slow(m, slow_nic, Layout(1, 8, 4, 2), Ideal());
  EXPECT_LT(fast.StageCost(0, batch).comm_ns, slow.StageCost(0, batch).comm_ns);
}

TEST(LayoutCostModel, HopAcrossNodesOnASlowerNicCostsMore) {
  // Hidden states and residual, 1/tp each: 2 x 1024 x 1024 x 2 / 2 = 2,097,152 bytes.
  //   inside a node: 5 us + 2,097,152 / 50 GB/s = 5,000 + 41,943.04 -> 46,943 ns
  //   across nodes: 10 us + 2,097,152 / 25 GB/s = 10,000 + 83,886.08 -> 93,886 ns
  const model::ModelDesc m = TinyDenseModel();
  LayoutShape local = Layout(2, 2);
  LayoutShape crossing = Layout(2, 2);
  crossing.stages[0].hop_crosses_nodes = true;
  LayoutCostModel inside(m, TinyGpu(), local, Ideal());
  LayoutCostModel across(m, TinyGpu(), crossing, Ideal());
  const sim::MicroBatch batch = Prefill({{1024, 0}});
  EXPECT_EQ(inside.HopNs(0, batch), 46943);
  EXPECT_EQ(across.HopNs(0, batch), 93886);
  EXPECT_GT(across.HopNs(0, batch), inside.HopNs(0, batch));
}

TEST(LayoutCostModel, OutputReturnIsLatencyBound) {
  const model::ModelDesc m = TinyDenseModel();
  const sim::MicroBatch batch = Prefill({{100, 0}, {100, 0}});
  LayoutCostModel pp1(m, TinyGpu(), Layout(1, 2), Ideal());
  EXPECT_EQ(pp1.OutputReturnNs(batch), 0);  // nothing to return with one stage
  // 4 bytes x 2 sequences: 5,000 + 8 / 50 = 5,000.16 -> 5,000 ns inside a node,
  // 10,000 + 8 / 25 = 10,000.32 -> 10,000 ns when any hop crosses nodes.
  LayoutCostModel pp2(m, TinyGpu(), Layout(2, 2), Ideal());
  EXPECT_EQ(pp2.OutputReturnNs(batch), 5000);
  LayoutShape crossing = Layout(2, 2);
  crossing.stages[0].hop_crosses_nodes = true;
  LayoutCostModel pp2x(m, TinyGpu(), crossing, Ideal());
  EXPECT_EQ(pp2x.OutputReturnNs(batch), 10000);
}

TEST(LayoutCostModel, HostTimes) {
  const model::ModelDesc m = TinyDenseModel();
  Calibration c = Ideal();
  c.Set(Param::kHostOverhead, 1500);
  LayoutCostModel cost(m, TinyGpu(), Layout(1, 1), c);
  EXPECT_EQ(cost.ScheduleNs(Prefill({{10, 0}})), 1500000);
  // (1000 us fixed + 0.2 us x 16,000 tokens) = 4,200 us.
  EXPECT_EQ(cost.IngestNs(16000), 4200000);
  EXPECT_EQ(cost.StreamOutNs(), 1000000);
  EXPECT_EQ(cost.num_stages(), 1);
}

TEST(LayoutCostModel, MlaPrefillAbsorbsWhenTheBatchsPrefixIsShort) {
  // TinyDenseModel's layers as MLA: 16 heads, kv_lora 64, nope 32, rope 16,
  // v 32; 1,024 tokens on 4,096 cached, ctx 4,608.5; attention at
  // 100 TFLOPS x 0.5 = 50,000 FLOP/ns, 4 layers. Under flashinfer's rule
  // (absorbed for a batch prefix sum in (0, 8192)):
  //   absorbed: 2 x 16 x 1024 x 4608.5 x (64 + 16 + 64) = 2.1745e10
  //             -> 434,912.62464 per layer, 1,739,650.49856
  //   MHA:      2 x 16 x 1024 x 4608.5 x (48 + 32) + re-expanding 4,096
  //             latents 2 x 4096 x 64 x 16 x 64 = 1.2618e10 -> 1,009,422.17216
  model::ModelDesc m = TinyDenseModel();
  m.mla = {16, 0, 64, 32, 16, 32};
  for (auto& layer : m.layers) layer.attention = model::AttentionKind::kMla;
  LayoutShape flashinfer = Layout(1, 1);
  flashinfer.mla_prefill = MlaPrefillRuleFor("flashinfer", 8192, false, false);
  const LayoutCostModel absorbing(m, TinyGpu(), flashinfer, Ideal());
  const LayoutCostModel mha(m, TinyGpu(), Layout(1, 1), Ideal());
  EXPECT_NEAR(absorbing.Breakdown(0, Prefill({{1024, 4096}})).attention_ns, 1739650.49856, 1e-6);
  EXPECT_NEAR(mha.Breakdown(0, Prefill({{1024, 4096}})).attention_ns, 1009422.17216, 1e-6);
  // The rule reads the batch's sum: two such requests reach 8,192 and go
  // back to the MHA form, as does a batch without a prefix.
  const auto two = Prefill({{1024, 4096}, {1024, 4096}});
  EXPECT_DOUBLE_EQ(absorbing.Breakdown(0, two).attention_ns, mha.Breakdown(0, two).attention_ns);
  const auto fresh = Prefill({{1024, 0}});
  EXPECT_DOUBLE_EQ(absorbing.Breakdown(0, fresh).attention_ns,
                   mha.Breakdown(0, fresh).attention_ns);
}

TEST(LayoutCostModel, LongerPrefixCostsMoreAttention) {
  // Causal ctx = prefix + (1024 + 1) / 2: 512.5 without a prefix, 4608.5 with
  // 4096 cached tokens; attention time is proportional to it.
  const model::ModelDesc m = TinyDenseModel();
  LayoutCostModel cost(m, TinyGpu(), Layout(1, 1), Ideal());
  const StageBreakdown fresh = cost.Breakdown(0, Prefill({{1024, 0}}));
  const StageBreakdown cached = cost.Breakdown(0, Prefill({{1024, 4096}}));
  EXPECT_GT(cached.attention_ns, fresh.attention_ns);
  EXPECT_NEAR(cached.attention_ns, 171966.464 * 4608.5 / 512.5, 1e-3);
  // Token-count work is the same: the prefix only adds attention.
  EXPECT_DOUBLE_EQ(cached.gemm_ns, fresh.gemm_ns);
  EXPECT_DOUBLE_EQ(cached.elementwise_ns, fresh.elementwise_ns);
  EXPECT_GT(cost.StageCost(0, Prefill({{1024, 4096}})).total_ns(),
            cost.StageCost(0, Prefill({{1024, 0}})).total_ns());
}

TEST(LayoutCostModel, GqaDecodeReadsTheKvCache) {
  // One sequence, 4095 cached tokens: compute 4 x 16 x 1 x 4096 x 64 / 50 TFLOPS
  // = 335.5 ns loses to reading K and V: 4096 x 4 KV heads x 64 x 2 x 2 bytes
  // / 1000 GB/s = 4,194.304 ns per layer, x 4 layers.
  const model::ModelDesc m = TinyDenseModel();
  LayoutCostModel cost(m, TinyGpu(), Layout(1, 1), Ideal());
  EXPECT_NEAR(cost.Breakdown(0, Decode(1, 4095)).attention_ns, 16777.216, 1e-6);
}

// One MoE layer: 8 MXFP4 experts, top 2, intermediate 512 on hidden 1024.
model::ModelDesc TinyMoeModel() {
  model::ModelDesc m;
  m.name = "tiny-moe";
  m.hidden = 1024;
  m.vocab = 32768;
  m.num_layers = 1;
  m.moe = {8, 2, 0, 512, 1024, DType::kMxfp4};
  model::LayerDesc layer;
  layer.attention = model::AttentionKind::kNone;
  layer.ffn = model::FfnKind::kMoe;
  layer.linears.push_back(MakeLinear("experts.gate_up_proj", 1024, 1024, Sharding::kExpert,
                                     OpRole::kRoutedExpert, DType::kMxfp4, 8, 2));
  layer.linears.push_back(MakeLinear("experts.down_proj", 512, 1024, Sharding::kExpert,
                                     OpRole::kRoutedExpert, DType::kMxfp4, 8, 2));
  m.layers.push_back(layer);
  m.embedding = MakeLinear("embed_tokens", 32768, 1024, Sharding::kVocab, OpRole::kEmbedding);
  m.lm_head = MakeLinear("lm_head", 1024, 32768, Sharding::kVocab, OpRole::kLmHead);
  return m;
}

TEST(LayoutCostModel, RoutedExpertsHandWorked) {
  // TP4 / EP2 -> MoE-TP 2; 1024 tokens x top 2 / 8 experts = 256 rows per
  // expert, 8 / 2 = 4 local experts, at the W4A8 rate 150 TFLOPS.
  //   gate_up n 1024 / 2 = 512, k 1024: best tile 128 x 64 (per-tile 0.9):
  //     2 x 8 = 16 tiles x 4 = 64, wave 0.64, depth 8/9, total 0.512;
  //     2 x 256 x 512 x 1024 x 4 = 1.0737e9 / 76.8 TFLOPS
  //     = 13,981.0 -> 13,981 (bytes 4,259,840 -> 4,259.8 loses)
  //   down k 512 / 2 = 256, n 1024: 16 tiles x 4 = 64, wave 0.64, depth 2/3;
  //     5.3687e8 / 64 TFLOPS = 8,388.6 -> 8,389 (bytes 3,178,496 -> 3,178.5)
  const model::ModelDesc m = TinyMoeModel();
  LayoutShape layout = Layout(1, 4, 1, 1, /*ep=*/2);
  layout.stages[0].has_embedding = false;
  layout.stages[0].has_lm_head = false;
  LayoutCostModel cost(m, TinyGpu(), layout, Ideal());
  StageBreakdown b = cost.Breakdown(0, Prefill({{1024, 0}}));
  EXPECT_DOUBLE_EQ(b.gemm_ns, 13981 + 8389);
  // Element-wise: 12 x 1024 x 1024 x 2 = 25,165,824 bytes plus permute/unpermute
  // 4 x 1024 x top 2 x 1024 x 2 / EP 2 = 8,388,608 bytes: 33,554,432 / 1000 GB/s.
  EXPECT_NEAR(b.elementwise_ns, 33554.432, 1e-6);
  EXPECT_EQ(b.attention_ns, 0);
}

TEST(LayoutCostModel, IsDeterministic) {
  const model::ModelDesc m = TinyDenseModel();
  LayoutCostModel a(m, TinyGpu(), Layout(2, 2), Ideal());
  LayoutCostModel b(m, TinyGpu(), Layout(2, 2), Ideal());
  for (int s = 0; s < 2; ++s) {
    for (const sim::MicroBatch& batch : SampleBatches()) {
      sim::StageTime first = a.StageCost(s, batch);
      sim::StageTime again = a.StageCost(s, batch);  // from the token-count cache
      sim::StageTime other = b.StageCost(s, batch);
      for (const sim::StageTime& t : {again, other}) {
        EXPECT_EQ(t.compute_ns, first.compute_ns);
        EXPECT_EQ(t.comm_ns, first.comm_ns);
        EXPECT_EQ(t.transfer_ns, first.transfer_ns);
        EXPECT_EQ(t.overhead_ns, first.overhead_ns);
        EXPECT_EQ(t.allreduce_calls, first.allreduce_calls);
      }
      EXPECT_EQ(a.HopNs(0, batch), b.HopNs(0, batch));
    }
  }
}

TEST(LayoutCostModel, CalibrationOverridesTheProfileLinks) {
  const model::ModelDesc m = TinyDenseModel();
  Calibration c = Ideal();
  c.Set(Param::kInterLink, 0.12);
  c.Set(Param::kIntraLink, 0.5);
  c.Set(Param::kRankJitter, 7);
  LayoutCostModel cost(m, TinyGpu(), Layout(1, 2), c);
  EXPECT_DOUBLE_EQ(cost.links().inter_gbps_per_gpu(), 3);  // 0.12 x 25
  EXPECT_DOUBLE_EQ(cost.links().intra_bw_scale, 0.5);
  EXPECT_DOUBLE_EQ(cost.links().rank_jitter_us, 7);
  LayoutCostModel defaults(m, TinyGpu(), Layout(1, 2), Ideal());
  EXPECT_DOUBLE_EQ(defaults.links().inter_gbps_per_gpu(), 25);
  EXPECT_DOUBLE_EQ(defaults.links().intra_bw_scale, 1);
}

TEST(LayoutCostModel, EachOperatorClassHasItsOwnEfficiency) {
  const model::ModelDesc m = TinyDenseModel();
  const sim::MicroBatch batch = Prefill({{8192, 4096}});
  // Without the embedding gather and the one-row LM head (memory-bound).
  LayoutShape layers_only = Layout(1, 1);
  layers_only.stages[0].has_embedding = false;
  layers_only.stages[0].has_lm_head = false;
  LayoutCostModel ideal(m, TinyGpu(), layers_only, Ideal());
  const StageBreakdown base = ideal.Breakdown(0, batch);
  Calibration half_attention = Ideal();
  half_attention.Set(Param::kAttention, 0.5);
  const StageBreakdown a =
      LayoutCostModel(m, TinyGpu(), layers_only, half_attention).Breakdown(0, batch);
  EXPECT_NEAR(a.attention_ns, 2 * base.attention_ns, 1e-6 * base.attention_ns);
  EXPECT_DOUBLE_EQ(a.gemm_ns, base.gemm_ns);  // the GEMMs keep their rate
  Calibration half_memory = Ideal();
  half_memory.Set(Param::kMemory, 0.5);
  const StageBreakdown mem =
      LayoutCostModel(m, TinyGpu(), layers_only, half_memory).Breakdown(0, batch);
  EXPECT_NEAR(mem.elementwise_ns, 2 * base.elementwise_ns, 1e-6 * base.elementwise_ns);
  EXPECT_DOUBLE_EQ(mem.attention_ns, base.attention_ns);  // compute-bound at 8192 tokens
  Calibration half_dense = Ideal();
  half_dense.Set(Param::kDenseGemm, 0.5);
  const StageBreakdown d =
      LayoutCostModel(m, TinyGpu(), layers_only, half_dense).Breakdown(0, batch);
  // Every BF16 GEMM of 8192 rows is compute-bound: twice the time, within
  // the nanosecond rounding of each GEMM.
  EXPECT_NEAR(d.gemm_ns, 2 * base.gemm_ns, 40);
  Calibration half_moe = Ideal();
  half_moe.Set(Param::kMoeGemm, 0.5);
  EXPECT_DOUBLE_EQ(LayoutCostModel(m, TinyGpu(), layers_only, half_moe).Breakdown(0, batch).gemm_ns,
                   base.gemm_ns);  // no experts in a dense model
}

TEST(LayoutCostModel, BusiestExpertRankIsWaitedForHandWorked) {
  // RoutedExpertsHandWorked's experts take 13,981 + 8,389 = 22,370 ns on the
  // mean rank. expert_skew 1.3 at EP8 means 1 + 0.3 x log2(EP) / 3: at EP2
  // 1.1, so the others wait 0.1 x 22,370 = 2,237 ns in the next all-reduce.
  const model::ModelDesc m = TinyMoeModel();
  LayoutShape layout = Layout(1, 4, 1, 1, /*ep=*/2);
  layout.stages[0].has_embedding = false;
  layout.stages[0].has_lm_head = false;
  Calibration c = Ideal();
  c.Set(Param::kExpertSkew, 1.3);
  const StageBreakdown b =
      LayoutCostModel(m, TinyGpu(), layout, c).Breakdown(0, Prefill({{1024, 0}}));
  EXPECT_NEAR(b.imbalance_wait_ns, 2237, 1e-6);
  const sim::StageTime t =
      LayoutCostModel(m, TinyGpu(), layout, c).StageCost(0, Prefill({{1024, 0}}));
  EXPECT_EQ(t.comm_ns, std::llround(b.allreduce_ns + 2237));  // exposed like the collective
  // EP8 (one expert per rank): the full 0.3.
  LayoutShape ep8 = Layout(1, 8, 1, 1, /*ep=*/8);
  ep8.stages[0].has_embedding = false;
  ep8.stages[0].has_lm_head = false;
  LayoutCostModel wide(m, TinyGpu(), ep8, c);
  const StageBreakdown w = wide.Breakdown(0, Prefill({{1024, 0}}));
  EXPECT_NEAR(w.imbalance_wait_ns, 0.3 * w.gemm_ns, 1e-6 * w.gemm_ns);
  // One EP rank has nobody to wait for.
  LayoutShape ep1 = Layout(1, 4, 1, 1, /*ep=*/1);
  ep1.stages[0].has_embedding = false;
  ep1.stages[0].has_lm_head = false;
  EXPECT_EQ(
      LayoutCostModel(m, TinyGpu(), ep1, c).Breakdown(0, Prefill({{1024, 0}})).imbalance_wait_ns,
      0);
}

TEST(LayoutCostModel, EveryCollectiveWaitsForTheLastRankHandWorked) {
  // TP2, 4 layers: 2 all-reduces per layer + the embedding's = 9 calls, each
  // waiting jitter x E[max of 2 normals] (Blom: Phi^-1(1.625 / 2.25) = 0.5895).
  const model::ModelDesc m = TinyDenseModel();
  Calibration c = Ideal();
  c.Set(Param::kRankJitter, 10);
  const StageBreakdown b =
      LayoutCostModel(m, TinyGpu(), Layout(1, 2), c).Breakdown(0, Prefill({{1024, 0}}));
  EXPECT_EQ(b.allreduce_calls, 9);
  EXPECT_NEAR(b.jitter_wait_ns, 9 * 10 * 0.5895 * 1e3, 9 * 10 * 1.0);
  EXPECT_EQ(LayoutCostModel(m, TinyGpu(), Layout(1, 1), c)
                .Breakdown(0, Prefill({{1024, 0}}))
                .jitter_wait_ns,
            0);  // no collectives at TP1
}

TEST(LayoutCostModel, GroupsSharingANodeShareItsFabricHandWorked) {
  // TP2 on 4-GPU nodes: alone 40 GB/s; with the other stage's TP2 group busy
  // on the same node, the node carries 30 GB/s x 4 GPUs = 120 GB/s, 30 each.
  // One all-reduce of 1024 x 1024 x 2 = 2,097,152 bytes:
  //   alone:  5,000 + 2,097,152 / 40 = 57,428.8 ns
  //   shared: 5,000 + 2,097,152 / 30 = 74,905.07 ns
  const model::ModelDesc m = TinyDenseModel();
  LayoutShape alone = Layout(2, 2);
  LayoutShape shared = Layout(2, 2);
  for (auto& st : shared.stages) st.groups_per_node = 2;
  // Stage 1 without the LM head's logit all-gather: only the layers' 4.
  alone.stages[1].has_lm_head = shared.stages[1].has_lm_head = false;
  hardware::HardwareProfile hw = TinyGpu();
  const auto batch = Prefill({{1024, 0}});
  const StageBreakdown a = LayoutCostModel(m, hw, alone, Ideal()).Breakdown(1, batch);
  const StageBreakdown b = LayoutCostModel(m, hw, shared, Ideal()).Breakdown(1, batch);
  ASSERT_EQ(a.allreduce_calls, 4);
  EXPECT_NEAR(a.allreduce_ns, 4 * 57429, 4);
  EXPECT_NEAR(b.allreduce_ns, 4 * 74905, 4);
}

TEST(LayoutCostModel, LatentMoeReducesLatentAndSharedOutputHandWorked) {
  // A latent MoE (experts on 512 of the 1024 hidden) with one shared expert:
  // SGLang reduces the experts' partial sums in latent space and the shared
  // expert's at full width, one buffer of 512 + 1024 per token. TP2, one node:
  //   attention: 1024 x 1024 x 2 = 2,097,152 B: 5,000 + 2,097,152 / 40 = 57,428.8
  //   MoE:       1024 x 1536 x 2 = 3,145,728 B: 5,000 + 3,145,728 / 40 = 83,643.2
  // Without the shared expert only the latent: 1,048,576 B -> 31,214.4 ns.
  model::ModelDesc m = TinyMoeModel();
  m.moe = {8, 2, 1, 512, 512, DType::kMxfp4};
  LayoutShape layout = Layout(1, 2);
  layout.stages[0].has_embedding = false;
  layout.stages[0].has_lm_head = false;
  const auto batch = Prefill({{1024, 0}});
  const StageBreakdown shared = LayoutCostModel(m, TinyGpu(), layout, Ideal()).Breakdown(0, batch);
  EXPECT_EQ(shared.allreduce_calls, 2);
  EXPECT_NEAR(shared.allreduce_ns, 57429 + 83643, 1);
  m.moe.num_shared_experts = 0;
  const StageBreakdown alone = LayoutCostModel(m, TinyGpu(), layout, Ideal()).Breakdown(0, batch);
  EXPECT_NEAR(alone.allreduce_ns, 57429 + 31214, 1);
  // Not latent: one hidden-width all-reduce after the FFN, as after attention.
  const StageBreakdown plain =
      LayoutCostModel(TinyMoeModel(), TinyGpu(), layout, Ideal()).Breakdown(0, batch);
  EXPECT_NEAR(plain.allreduce_ns, 2 * 57429, 1);
}

TEST(LayoutCostModel, BlockAttentionResidualsHandWorked) {
  // attn_res_block_size 2 over 4 layers: layers 0-1 carry 1 residual vector,
  // layers 2-3 carry 2 (one completed block summary + the running sum).
  const model::ModelDesc plain = TinyDenseModel();
  model::ModelDesc m = plain;
  m.attn_res_block_size = 2;
  const auto batch = Prefill({{1024, 0}});
  // Each layer reads its vectors twice (before attention, before the MLP):
  // 2 x (1 + 1 + 2 + 2) x 1024 x 1024 x 2 bytes = 25,165,824 / 1000 GB/s.
  const StageBreakdown b = LayoutCostModel(m, TinyGpu(), Layout(1, 1), Ideal()).Breakdown(0, batch);
  const StageBreakdown p =
      LayoutCostModel(plain, TinyGpu(), Layout(1, 1), Ideal()).Breakdown(0, batch);
  EXPECT_NEAR(b.attn_res_ns, 25165.824, 1e-6);
  EXPECT_NEAR(b.elementwise_ns - p.elementwise_ns, 25165.824, 1e-6);
  EXPECT_EQ(p.attn_res_ns, 0);
  // PP2 boundary before layer 2: hidden + 1 summary + running sum = 3
  // vectors, 1/tp each: 3 x 1024 x 1024 x 2 / 2 = 3,145,728 bytes:
  // 5 us + 3,145,728 / 50 GB/s = 5,000 + 62,914.56 = 67,914.56 ns
  // (plain: hidden + residual, 46,943 ns).
  LayoutCostModel pp2(m, TinyGpu(), Layout(2, 2), Ideal());
  EXPECT_EQ(pp2.HopNs(0, batch), 67915);
  EXPECT_EQ(LayoutCostModel(plain, TinyGpu(), Layout(2, 2), Ideal()).HopNs(0, batch), 46943);
}

// TP4 = EP4 under DeepEP on one stage of MoE layers only (no embedding, no
// LM head).
LayoutShape DeepEpTp4() {
  LayoutShape layout = Layout(1, 4, 1, 1, /*ep=*/4);
  layout.stages[0].has_embedding = false;
  layout.stages[0].has_lm_head = false;
  layout.deepep = true;
  return layout;
}

TEST(LayoutCostModel, DeepEpScattersTheMoeLayerHandWorked) {
  // TP4 = EP4 on one node of the tiny GPU (no NVLink: DeepEP goes through
  // the NICs), 1024 tokens, 8 experts of width 1024, top 2, BF16 dispatch.
  //   reduce-scatter + all-gather of 1024 x 1024 x 2 = 2,097,152 B:
  //     each 10 us + 3/4 x 2,097,152 / 30 GB/s = 62,428.8 -> 62,429
  //   dispatch/combine: 256 rows; ranks hit 4 x (1 - (6/8)(5/7)) = 1.857,
  //     3/4 of them off this rank: 1.393 copies x 524,288 B / 25 GB/s
  //     = 29,210.3 ns + (10 + 10) us = 49,210.3 each way.
  model::ModelDesc m = TinyMoeModel();
  LayoutShape layout = DeepEpTp4();
  const auto batch = Prefill({{1024, 0}});
  const StageBreakdown b = LayoutCostModel(m, TinyGpu(), layout, Ideal()).Breakdown(0, batch);
  EXPECT_EQ(b.allreduce_calls, 2);
  EXPECT_NEAR(b.allreduce_ns, 2 * 62429, 1e-6);
  const double copies = 4.0 * 26 / 56 * 3 / 4;
  EXPECT_NEAR(b.a2a_ns, 2 * (copies * 524288 / 25 + 20000), 1e-6);
  // The same layout without DeepEP all-reduces twice and sends nothing.
  layout.deepep = false;
  const StageBreakdown plain = LayoutCostModel(m, TinyGpu(), layout, Ideal()).Breakdown(0, batch);
  EXPECT_EQ(plain.a2a_ns, 0);
  EXPECT_EQ(plain.allreduce_calls, 2);
}

TEST(LayoutCostModel, DeepEpLowLatencyDispatchIsBf16UnderRunnersThatQuantizeInside) {
  // DeepEpScattersTheMoeLayerHandWorked's layer in low-latency mode: one copy
  // per expert, 2 x 3/4 = 1.5 off this rank, of 256 rows x 1024 values.
  //   FP8 dispatch (the default): 1.5 x 256 x 1024 x (1 + 4/128) B
  //     / 25 GB/s + 20 us = 16,220.16 + 20,000 ns
  //   BF16 dispatch (cutlass, flashinfer_cutedsl runners) and combine:
  //     1.5 x 524,288 B / 25 GB/s + 20 us = 31,457.28 + 20,000 ns
  model::ModelDesc m = TinyMoeModel();
  LayoutShape layout = DeepEpTp4();
  layout.deepep_mode = DeepEpMode::kLowLatency;
  const auto batch = Prefill({{1024, 0}});
  const double fp8 = 1.5 * 256 * 1024 * (1 + 4.0 / 128) / 25 + 20000;
  const double bf16 = 1.5 * 524288 / 25 + 20000;
  EXPECT_NEAR(LayoutCostModel(m, TinyGpu(), layout, Ideal()).Breakdown(0, batch).a2a_ns, fp8 + bf16,
              1e-6);
  layout.deepep_bf16_dispatch = true;
  EXPECT_NEAR(LayoutCostModel(m, TinyGpu(), layout, Ideal()).Breakdown(0, batch).a2a_ns, 2 * bf16,
              1e-6);
}

TEST(LayoutCostModel, DeepEpPhasesBurstForWhatTheirCollectivesRefilled) {
  // DeepEpScattersTheMoeLayerHandWorked's layer on 4,096 tokens with a wide
  // shared expert, so the FFN phase outspends any refill: with a 1 s window
  // a serving stage drains it and then bursts, each step, for exactly the
  // idle DeepEP's collectives (not all-reduces) give it:
  //   reduce-scatter and all-gather of 8,388,608 B, each
  //     10 us + 3/4 x 8,388,608 / 30 GB/s = 219,715.2 -> 219,715
  //   dispatch and combine of 1,024 rows, each
  //     1.393 copies x 2,097,152 B / 25 GB/s + 20 us
  // Every kernel is compute-bound, so each burst ns saves one ns.
  model::ModelDesc m = TinyMoeModel();
  m.layers[0].linears.insert(m.layers[0].linears.begin(),
                             MakeLinear("shared_experts.gate_up_proj", 1024, 65536,
                                        Sharding::kColumn, OpRole::kSharedExpert));
  LayoutShape layout = DeepEpTp4();
  const auto batch = Prefill({{4096, 0}});
  const double plain = LayoutCostModel(m, TinyGpu(), layout, Ideal()).Breakdown(0, batch).gemm_ns;
  const double burst =
      LayoutCostModel(m, BurstGpu(1000.0), layout, Ideal()).Breakdown(0, batch).gemm_ns;
  const double copies = 4.0 * 26 / 56 * 3 / 4;
  EXPECT_NEAR(plain - burst, 2 * (219715 + copies * 2097152 / 25 + 20000), 1e-6);
}

TEST(LayoutCostModel, DeepEpRunsTheSharedExpertsWholeOnTheRanksTokens) {
  // Under DeepEP the shared experts are built whole (tp_size 1) and run on
  // the rank's 1/tp of the tokens: at TP4 on 1024 tokens the same GEMMs as
  // TP1 on 256.
  model::ModelDesc m = TinyMoeModel();
  m.layers[0].linears = {
      MakeLinear("shared_experts.gate_up_proj", 1024, 2048, Sharding::kColumn,
                 OpRole::kSharedExpert),
      MakeLinear("shared_experts.down_proj", 1024, 1024, Sharding::kRow, OpRole::kSharedExpert),
      MakeLinear("gate", 1024, 8, Sharding::kReplicated, OpRole::kRouter)};
  LayoutShape tp4 = Layout(1, 4, 1, 1, /*ep=*/4);
  LayoutShape tp1 = Layout(1, 1);
  for (LayoutShape* l : {&tp4, &tp1}) {
    l->stages[0].has_embedding = false;
    l->stages[0].has_lm_head = false;
  }
  tp4.deepep = true;
  const double scattered =
      LayoutCostModel(m, TinyGpu(), tp4, Ideal()).Breakdown(0, Prefill({{1024, 0}})).gemm_ns;
  const double whole =
      LayoutCostModel(m, TinyGpu(), tp1, Ideal()).Breakdown(0, Prefill({{256, 0}})).gemm_ns;
  EXPECT_GT(scattered, 0);
  EXPECT_DOUBLE_EQ(scattered, whole);
  // A decode step reads weights: whole shared experts on every rank read
  // four times the bytes of a TP4 quarter.
  const double whole_read =
      LayoutCostModel(m, TinyGpu(), tp4, Ideal()).Breakdown(0, Decode(4, 100)).gemm_ns;
  tp4.deepep = false;
  const double quarter_read =
      LayoutCostModel(m, TinyGpu(), tp4, Ideal()).Breakdown(0, Decode(4, 100)).gemm_ns;
  EXPECT_GT(whole_read, 2 * quarter_read);
}

}  // namespace
}  // namespace ppsearch::cost
