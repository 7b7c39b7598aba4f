#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <filesystem>
#include <fstream>

#include "hardware/hardware.h"
#include "model/hf_config.h"
#include "ppsearch_source_dir.h"
#include "probe/figures.h"
#include "probe/node_result.h"
#include "probe/overlay.h"
#include "probe/request.h"

namespace ppsearch::probe {
namespace {

namespace fs = std::filesystem;

// A node's output as probe_script.py prints it (shortened): progress first,
// the JSON object on the last line.
const char* kRecorded = R"(
{"probe_version": 1, "host": "gpu-601", "torch": "2.8.0", "device": "cuda",
 "device_name": "NVIDIA H200", "device_count": 8, "sm_count": 132, "memory_mib": 143771.0,
 "cuda": "12.8", "skipped": [{"what": "gemm fp8 64x64x64", "why": "bf16 only"}],
 "gemm": [{"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16", "iterations": 100, "seconds": 0.1442},
          {"m": 16, "n": 7168, "k": 2048, "dtype": "bf16", "iterations": 1000, "seconds": 0.02}],
 "burst": {"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16", "idle_s": 2,
           "call_seconds": [0.0011, 0.0011, 0.0018, 0.0015, 0.0015, 0.0015, 0.0015, 0.0015,
                            0.0015, 0.0015],
           "refills": [{"idle_s": 0.001, "call_seconds": [0.0013, 0.0015, 0.0015]}]},
 "memory": {"bytes": 1073741824, "iterations": 100, "seconds": 0.05},
 "launch": {"kernels": 200, "iterations": 50, "seconds": 0.02},
 "collectives": [
   {"op": "all_reduce", "ranks": 8, "bytes": 4096, "iterations": 100, "seconds": 0.0016},
   {"op": "all_reduce", "ranks": 8, "bytes": 268435456, "iterations": 10, "seconds": 0.01021},
   {"op": "all_to_all", "ranks": 8, "bytes": 268435456, "iterations": 10, "seconds": 0.0075},
   {"op": "all_to_all", "ranks": 8, "bytes": 4096, "iterations": 10, "seconds": 0.00008},
   {"op": "send_recv", "ranks": 2, "bytes": 4096, "iterations": 40, "seconds": 0.0002},
   {"op": "send_recv", "ranks": 2, "bytes": 268435456, "iterations": 40, "seconds": 0.0283}],
 "cross": []}
)";

std::string OneLine(std::string s) {
  std::string out;
  for (char c : s)
    if (c != '\n') out += c;
  return "loading...\n" + out + "\n";
}

TEST(ProbeOutput, ReadsEveryTiming) {
  Result<NodeResult> r = ParseNodeOutput("601", OneLine(kRecorded));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->node, "601");
  EXPECT_EQ(r->hostname, "gpu-601");
  EXPECT_TRUE(r->on_gpu());
  EXPECT_EQ(r->device_count, 8);
  ASSERT_EQ(r->gemm.size(), 2u);
  EXPECT_EQ(r->gemm[0].shape.k, 8192);
  EXPECT_EQ(r->gemm[0].run.iterations, 100);
  ASSERT_TRUE(r->burst.has_value());
  EXPECT_EQ(r->burst->call_seconds.size(), 10u);
  ASSERT_EQ(r->burst->refills.size(), 1u);
  EXPECT_DOUBLE_EQ(r->burst->refills[0].idle_s, 0.001);
  ASSERT_TRUE(r->copy && r->launch);
  EXPECT_EQ(r->collectives.size(), 6u);
  ASSERT_EQ(r->skipped.size(), 1u);
}

TEST(ProbeOutput, ErrorsNameTheNodeAndTheKey) {
  Result<NodeResult> empty = ParseNodeOutput("602", "\n\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("probe output of 602: the probe printed nothing"),
            std::string::npos);
  Result<NodeResult> text = ParseNodeOutput("602", "Traceback: no module named torch\n");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.error().message.find("expected a JSON object on its last line"),
            std::string::npos);
  std::string bad = OneLine(kRecorded);
  bad.replace(bad.find("\"seconds\": 0.1442"), 17, "\"seconds\": -1");
  Result<NodeResult> negative = ParseNodeOutput("603", bad);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("probe output of 603"), std::string::npos);
  EXPECT_NE(negative.error().message.find("gemm[0].seconds"), std::string::npos)
      << negative.error().message;
  std::string version = OneLine(kRecorded);
  version.replace(version.find("\"probe_version\": 1"), 18, "\"probe_version\": 2");
  EXPECT_FALSE(ParseNodeOutput("604", version).ok());
}

TEST(ProbeFigures, BusBandwidthIsNcclTestsDefinition) {
  // 1 GB in 10 ms is 100 GB/s of algorithm bandwidth.
  EXPECT_DOUBLE_EQ(BusBandwidthGbps("all_reduce", 8, 1000000000, 0.01), 100 * 2 * 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthGbps("all_gather", 4, 1000000000, 0.01), 100 * 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBandwidthGbps("reduce_scatter", 2, 1000000000, 0.01), 50);
  EXPECT_DOUBLE_EQ(BusBandwidthGbps("all_to_all", 8, 1000000000, 0.01), 100 * 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBandwidthGbps("send_recv", 2, 1000000000, 0.01), 100);
  EXPECT_EQ(BusBandwidthGbps("all_reduce", 8, 1000, 0), 0);
}

TEST(ProbeFigures, TheLeadingFastCallsAreTheBurst) {
  BurstTiming b;
  b.shape = {1000, 1000, 1000, "bf16", ""};  // 2 GFLOP a call
  b.call_seconds = {0.001, 0.001, 0.002, 0.002, 0.002, 0.002, 0.002, 0.002};
  BurstFigure f = BurstOf(b);
  EXPECT_DOUBLE_EQ(f.sustained_tflops, 1.0);
  EXPECT_DOUBLE_EQ(f.burst_tflops, 2.0);
  EXPECT_DOUBLE_EQ(f.window_ms, 2.0);
  EXPECT_DOUBLE_EQ(f.series_ms, 14.0);
  b.call_seconds = {0.002, 0.002, 0.002, 0.002};
  f = BurstOf(b);
  EXPECT_EQ(f.burst_tflops, 0);
  EXPECT_EQ(f.window_ms, 0);
}

TEST(ProbeFigures, TheSlowCallsAfterTheBurstAreItsPaybackAndGapsTimeTheRefill) {
  BurstTiming b;
  b.shape = {1000, 1000, 1000, "bf16", ""};  // 2 GFLOP a call: 2 ms at 1 TFLOPS
  // 2 ms of burst at 2 TFLOPS, then 3 calls of 4 ms at 0.5 (12 ms of
  // payback), then sustained.
  b.call_seconds = {0.001, 0.001, 0.004, 0.004, 0.004, 0.002, 0.002, 0.002,
                    0.002, 0.002, 0.002, 0.002, 0.002, 0.002, 0.002, 0.002};
  // After a 1 ms gap the first call took 1.5 ms: 0.5 ms of it sooner than
  // sustained, which at twice the rate is 0.5 ms of burst: 0.5 ms a ms.
  // After a 10 ms gap the whole 2 ms window came back (a lower bound only).
  b.refills = {{0.001, {0.0015, 0.002, 0.002}}, {0.010, {0.001, 0.001, 0.002, 0.002}}};
  BurstFigure f = BurstOf(b);
  EXPECT_DOUBLE_EQ(f.burst_tflops, 2.0);
  EXPECT_DOUBLE_EQ(f.window_ms, 2.0);
  EXPECT_DOUBLE_EQ(f.payback_tflops, 0.5);
  EXPECT_DOUBLE_EQ(f.payback_ms, 12.0);
  ASSERT_TRUE(f.refill_ratio.has_value());
  EXPECT_DOUBLE_EQ(*f.refill_ratio, 0.5) << "from the gap that did not refill it all";
  EXPECT_FALSE(f.refill_at_least);
  EXPECT_DOUBLE_EQ(f.longest_gap_ms, 10.0);
  EXPECT_EQ(f.gaps, 2);
  // Only whole windows: the ratio is at least what the shortest such gap bought.
  b.refills = {{0.010, {0.001, 0.001, 0.002}}, {0.004, {0.001, 0.001, 0.002}}};
  f = BurstOf(b);
  EXPECT_DOUBLE_EQ(*f.refill_ratio, 0.5);
  EXPECT_TRUE(f.refill_at_least);
  // No burst: nothing to pay back or refill.
  b.call_seconds = {0.002, 0.002, 0.002, 0.004, 0.002, 0.002};
  f = BurstOf(b);
  EXPECT_EQ(f.payback_tflops, 0);
  EXPECT_FALSE(f.refill_ratio.has_value());
}

TEST(ProbeFigures, ACallTheBurstRanOutInsideCountsOnlyItsBurstPart) {
  BurstTiming b;
  b.shape = {1000, 1000, 1000, "bf16", ""};  // 2 ms a call at 1 TFLOPS sustained
  // A 1 ms call at 2 TFLOPS, then a 1.5 ms call the budget ran out inside:
  // 0.5 ms sooner than sustained at twice the rate is 0.5 ms of burst. Then
  // a 2.05 ms call inside the margin (the payback starts inside it), two 4
  // ms calls at half the rate, and the sustained rate.
  b.call_seconds = {0.001, 0.0015, 0.00205, 0.004, 0.004, 0.002, 0.002,
                    0.002, 0.002,  0.002,   0.002, 0.002, 0.002, 0.002};
  // Gaps: 0.5 ms bought back nothing that shows (no call above the margin),
  // 1 ms bought 0.25 ms, 20 ms the whole 1.5 ms window (0.075 a ms at least).
  b.refills = {
      {0.0005, {0.00199, 0.002}}, {0.001, {0.00175, 0.002}}, {0.02, {0.001, 0.0015, 0.002}}};
  const BurstFigure f = BurstOf(b);
  EXPECT_DOUBLE_EQ(f.burst_tflops, 2.0) << "from the call wholly inside the burst";
  EXPECT_DOUBLE_EQ(f.window_ms, 1.5);
  EXPECT_DOUBLE_EQ(f.payback_tflops, 0.5) << "past the call the payback started inside";
  EXPECT_DOUBLE_EQ(f.payback_ms, 8.0);
  ASSERT_TRUE(f.refill_ratio.has_value());
  EXPECT_DOUBLE_EQ(*f.refill_ratio, 0.25) << "the gap that showed nothing is left out";
  EXPECT_FALSE(f.refill_at_least);
  // Gaps that bought back nothing that shows: a refill ratio of 0.
  b.refills = {{0.0005, {0.002}}, {0.001, {0.002}}};
  EXPECT_EQ(BurstOf(b).refill_ratio, 0.0);
}

TEST(ProbeFigures, AShapeImpliesTheRateOverItsGemmEfficiency) {
  Result<hardware::HardwareProfile> h200 = hardware::LoadHardwareProfile("h200");
  ASSERT_TRUE(h200.ok());
  Result<NodeResult> r = ParseNodeOutput("601", OneLine(kRecorded));
  ASSERT_TRUE(r.ok());
  NodeFigures f = FiguresOf(*r, *h200);
  ASSERT_EQ(f.shapes.size(), 2u);
  // 8192^3 x 2 FLOPs x 100 in 0.1442 s: 762.5 TFLOPS, on 132 SMs at about
  // full tile and wave efficiency.
  EXPECT_NEAR(f.shapes[0].measured_tflops, 762.5, 0.5);
  EXPECT_FALSE(f.shapes[0].memory_bound);
  EXPECT_NEAR(f.shapes[0].implied_tflops, f.shapes[0].measured_tflops / f.shapes[0].efficiency,
              1e-9);
  // 16 rows are below the ridge: they say nothing of the tensor rate.
  EXPECT_TRUE(f.shapes[1].memory_bound);
  ASSERT_TRUE(f.bf16_tflops);
  EXPECT_DOUBLE_EQ(*f.bf16_tflops, f.shapes[0].implied_tflops);
  ASSERT_TRUE(f.copy_gbps);
  EXPECT_NEAR(*f.copy_gbps, 2.0 * 1073741824 / 0.0005 / 1e9, 1e-6);
  ASSERT_TRUE(f.launch_us);
  EXPECT_NEAR(*f.launch_us, 0.02 / 50 / 200 * 1e6, 1e-9);
  // One-way send: 256 MiB in 28.3 ms / 40.
  ASSERT_TRUE(f.p2p_gbps && f.p2p_latency_us);
  EXPECT_NEAR(*f.p2p_gbps, 268435456 / (0.0283 / 40) / 1e9, 1e-6);
  EXPECT_NEAR(*f.p2p_latency_us, 5.0, 1e-9);
  bool all_reduce = false;
  for (const CollectiveFigure& c : f.collectives) {
    if (c.op != "all_reduce") continue;
    all_reduce = true;
    EXPECT_EQ(c.group_size, 8);
    EXPECT_NEAR(c.busbw_gbps, 268435456 / 0.001021 / 1e9 * 2 * 7 / 8, 1e-6);
    EXPECT_NEAR(c.latency_us, 16.0, 1e-9);
  }
  EXPECT_TRUE(all_reduce);
}

TEST(ProbeFigures, TheClusterFigureIsTheMedianNode) {
  Result<hardware::HardwareProfile> h200 = hardware::LoadHardwareProfile("h200");
  ASSERT_TRUE(h200.ok());
  std::vector<NodeResult> nodes;
  for (const char* seconds : {"0.1442", "0.1500", "0.2884"}) {
    std::string text = OneLine(kRecorded);
    text.replace(text.find("0.1442"), 6, seconds);
    Result<NodeResult> r = ParseNodeOutput(seconds, text);
    ASSERT_TRUE(r.ok());
    nodes.push_back(*r);
  }
  ProbeFigures p = Summarize(nodes, {}, *h200);
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_DOUBLE_EQ(*p.bf16_tflops, *p.nodes[1].bf16_tflops);
  EXPECT_NEAR(p.bf16_spread, 1.0, 1e-9);  // the slow node runs at half
  EXPECT_FALSE(p.nic_gbps);
  std::vector<CollectiveTiming> cross = {{"send_recv", 2, 4096, {20, 0.0002}},
                                         {"send_recv", 2, 1 << 30, {20, 0.5}}};
  p = Summarize(nodes, cross, *h200);
  ASSERT_TRUE(p.nic_gbps && p.inter_latency_us);
  EXPECT_NEAR(*p.nic_gbps, (1 << 30) / 0.025 / 1e9, 1e-9);
  EXPECT_NEAR(*p.inter_latency_us, 10.0, 1e-9);
}

TEST(ProbeRequest, ModelShapesAreEachLayoutsPerRankGemmsOnce) {
  Result<model::ModelDesc> m =
      model::LoadModel(std::string(PPSEARCH_SOURCE_DIR) + "/data/models/deepseek-v3/config.json");
  ASSERT_TRUE(m.ok()) << m.error().message;
  spec::LayoutSpec tp8;
  tp8.pp = 1;
  tp8.tp = 8;
  tp8.ep = 1;
  std::vector<GemmShape> one = ModelGemmShapes(*m, {tp8}, 8192, 64);
  ASSERT_FALSE(one.empty());
  // Largest first, no shape twice, every one at the chunk's rows or an
  // expert's share of them.
  for (size_t i = 1; i < one.size(); ++i) EXPECT_GE(one[i - 1].flops(), one[i].flops());
  for (size_t i = 0; i < one.size(); ++i)
    for (size_t j = i + 1; j < one.size(); ++j)
      EXPECT_FALSE(one[i].m == one[j].m && one[i].n == one[j].n && one[i].k == one[j].k);
  // The dense MLP's gate_up is column-split over TP 8: 2 x 18,432 / 8 outputs.
  bool gate_up = false;
  for (const GemmShape& g : one)
    gate_up = gate_up || (g.m == 8192 && g.k == 7168 && g.n == 2 * 18432 / 8);
  EXPECT_TRUE(gate_up);
  spec::LayoutSpec tp4 = tp8;
  tp4.tp = 4;
  std::vector<GemmShape> two = ModelGemmShapes(*m, {tp8, tp4}, 8192, 64);
  EXPECT_GT(two.size(), one.size());
  EXPECT_EQ(ModelGemmShapes(*m, {tp8, tp4}, 8192, 3).size(), 3u);
}

TEST(ProbeRequest, GroupsAndMessagesCoverTheRange) {
  EXPECT_EQ(GroupSizes(8), (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(GroupSizes(6), (std::vector<int>{2, 4, 6}));
  EXPECT_TRUE(GroupSizes(1).empty());
  EXPECT_EQ(MessageSizes(4096, 1 << 20), (std::vector<int64_t>{4096, 65536, 1 << 20}));
}

class OverlayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ppsearch_overlay_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(OverlayTest, TheOverlayLoadsAsAProfileWithTheMeasuredKeysAndTheBasesOthers) {
  Result<hardware::HardwareProfile> h200 = hardware::LoadHardwareProfile("h200");
  ASSERT_TRUE(h200.ok());
  Result<NodeResult> r = ParseNodeOutput("601", OneLine(kRecorded));
  ASSERT_TRUE(r.ok());
  std::vector<CollectiveTiming> cross = {{"send_recv", 2, 4096, {20, 0.0002}},
                                         {"send_recv", 2, 1 << 30, {20, 0.5}}};
  const ProbeFigures f = Summarize({*r}, cross, *h200);
  Provenance p;
  p.command = "ppsearch probe spec.toml -o measured.toml";
  p.date_utc = "2026-12-05T19:40:00Z";
  p.version = "ppsearch test";
  p.model_name = "deepseek-v3";
  p.tokens = 8192;
  const std::string text = OverlayToml("measured", "h200", *h200, f, {*r}, p);
  std::ofstream(dir_ / "measured.toml") << text;
  Result<hardware::HardwareProfile> hw =
      hardware::LoadHardwareProfile((dir_ / "measured.toml").string());
  ASSERT_TRUE(hw.ok()) << hw.error().message << "\n" << text;
  EXPECT_EQ(hw->name, "measured");
  EXPECT_NEAR(hw->bf16_tflops, *f.bf16_tflops, *f.bf16_tflops * 1e-3);
  EXPECT_NEAR(hw->memory_bw_gbps, *f.memory_bw_gbps, *f.memory_bw_gbps * 1e-3);
  EXPECT_NEAR(hw->nic_gbps_per_gpu, *f.nic_gbps, *f.nic_gbps * 1e-3);
  EXPECT_NEAR(hw->intra_allreduce.back().busbw_gbps, f.collectives.front().busbw_gbps,
              f.collectives.front().busbw_gbps * 1e-3);
  // The burst: 1.1 ms calls before 1.5 ms ones, 1.36x for 2.2 ms; then one
  // 1.8 ms call (1.5 / 1.8 of the rate) as its payback; after a 1 ms gap a
  // 1.3 ms call, 0.2 ms sooner, at 1.36x: 0.2 / 0.364 = 0.55 ms of burst.
  EXPECT_NEAR(hw->TensorBurstRatio(), 1.5 / 1.1, 1e-3);
  EXPECT_NEAR(hw->burst_window_ms, 2.2, 1e-3);
  EXPECT_NEAR(hw->TensorPaybackRatio(), 1.5 / 1.8, 1e-3);
  EXPECT_NEAR(hw->burst_payback_ms, 1.8, 1e-3);
  EXPECT_NEAR(hw->burst_refill_ratio, 0.2 / (1.5 / 1.1 - 1), 1e-3);
  // Not measured: the base's.
  EXPECT_EQ(hw->fp8_tflops, h200->fp8_tflops);
  EXPECT_EQ(hw->gpu_name, h200->gpu_name);
  EXPECT_EQ(hw->intra_allreduce.size(), h200->intra_allreduce.size());
  EXPECT_EQ(hw->intra_allreduce.front().busbw_gbps, h200->intra_allreduce.front().busbw_gbps);
  EXPECT_NE(text.find("# Measured by `ppsearch probe spec.toml -o measured.toml`"),
            std::string::npos);
  EXPECT_EQ(text.find("MEASURED ON THE CPU"), std::string::npos);
}

// Over a base whose all-reduce table is borrowed (rtx-6000d states the
// hosts' busbw range), a measured group size drops the range and the
// others keep theirs: the prior widens only where nothing was measured.
TEST_F(OverlayTest, AMeasuredAllReduceEntryDropsTheBorrowedRange) {
  Result<hardware::HardwareProfile> base = hardware::LoadHardwareProfile("rtx-6000d");
  ASSERT_TRUE(base.ok());
  ASSERT_GT(base->IntraFor(8).busbw_hi_gbps, 0);
  ASSERT_GT(base->IntraFor(4).busbw_hi_gbps, 0);
  ProbeFigures f;
  CollectiveFigure c;
  c.op = "all_reduce";
  c.group_size = 8;
  c.busbw_gbps = 39.5;
  c.latency_us = 22;
  c.largest_bytes = int64_t{1} << 30;
  f.collectives = {c};
  const std::string text = OverlayToml("switched", "rtx-6000d", *base, f, {}, {});
  std::ofstream(dir_ / "switched.toml") << text;
  Result<hardware::HardwareProfile> hw =
      hardware::LoadHardwareProfile((dir_ / "switched.toml").string());
  ASSERT_TRUE(hw.ok()) << hw.error().message << "\n" << text;
  EXPECT_DOUBLE_EQ(hw->IntraFor(8).busbw_gbps, 39.5);
  EXPECT_DOUBLE_EQ(hw->IntraFor(8).busbw_hi_gbps, 0);
  EXPECT_DOUBLE_EQ(hw->IntraFor(4).busbw_lo_gbps, base->IntraFor(4).busbw_lo_gbps);
  EXPECT_DOUBLE_EQ(hw->IntraFor(4).busbw_hi_gbps, base->IntraFor(4).busbw_hi_gbps);
}

TEST_F(OverlayTest, TheBudgetsRefillIsWrittenAsMeasuredOrBounded) {
  Result<hardware::HardwareProfile> h200 = hardware::LoadHardwareProfile("h200");
  ASSERT_TRUE(h200.ok());
  ProbeFigures f;
  f.bf16_tflops = 800;
  BurstFigure b;
  b.sustained_tflops = 1;
  b.burst_tflops = 1.5;
  b.window_ms = 2;
  b.series_ms = 500;
  b.payback_tflops = 0.8;
  b.payback_ms = 30;
  b.refill_ratio = 0.4;
  b.refill_at_least = true;
  b.longest_gap_ms = 32;
  f.burst = b;
  Provenance p;
  auto load = [&](const std::string& text) {
    std::ofstream(dir_ / "burst.toml") << text;
    return hardware::LoadHardwareProfile((dir_ / "burst.toml").string());
  };
  std::string text = OverlayToml("burst", "h200", *h200, f, {}, p);
  EXPECT_NE(text.find("each ms of idle bought back at least 0.4 ms of burst (every gap refilled "
                      "the whole window)"),
            std::string::npos)
      << text;
  Result<hardware::HardwareProfile> hw = load(text);
  ASSERT_TRUE(hw.ok()) << hw.error().message << "\n" << text;
  EXPECT_DOUBLE_EQ(hw->burst_bf16_tflops, 1200);
  EXPECT_DOUBLE_EQ(hw->burst_payback_bf16_tflops, 640);
  EXPECT_DOUBLE_EQ(hw->burst_payback_ms, 30);
  EXPECT_DOUBLE_EQ(hw->burst_refill_ratio, 0.4);

  f.burst->refill_ratio = 0;
  f.burst->refill_at_least = false;
  text = OverlayToml("burst", "h200", *h200, f, {}, p);
  EXPECT_NE(text.find("No gap up to 32.0 ms bought back a burst that shows"), std::string::npos);
  hw = load(text);
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->burst_refill_ratio, 0);

  f.burst->refill_ratio.reset();
  text = OverlayToml("burst", "h200", *h200, f, {}, p);
  EXPECT_NE(text.find("No gap was timed"), std::string::npos);
  hw = load(text);
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->burst_refill_ratio, 1) << "the default stands";
}

// `-o 'ünï"cödé.toml'` wrote `name = "ünï"cödé"` (no TOML); a quote or a
// backslash in the base's path broke `base =`; a newline in -o's path
// started a line of its own in the header comment (`sm_count = 7`).
TEST_F(OverlayTest, EveryStringIsEscapedAndNoCommentLineBreaksOut) {
  Result<hardware::HardwareProfile> h200 = hardware::LoadHardwareProfile("h200");
  ASSERT_TRUE(h200.ok());
  std::string recorded = OneLine(kRecorded);
  // JSON's escape: the name the node printed holds a newline.
  recorded.replace(recorded.find("NVIDIA H200"), 11, "NVIDIA H200\\nsm_count = 5");
  Result<NodeResult> r = ParseNodeOutput("601", recorded);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->device_name, "NVIDIA H200\nsm_count = 5");
  Provenance p;
  p.command = "ppsearch probe spec.toml -o 'nl\nsm_count = 7\n#.toml'";
  p.model_name = "m\nsm_count = 9";
  const std::string name = "ünï\"cödé\\x\nsm_count = 8";
  const std::string text = OverlayToml(name, "h200", *h200, Summarize({*r}, {}, *h200), {*r}, p);
  // The loader wants the name to be the file's stem: the file is named so.
  std::ofstream(dir_ / (name + ".toml")) << text;
  Result<hardware::HardwareProfile> hw =
      hardware::LoadHardwareProfile((dir_ / (name + ".toml")).string());
  ASSERT_TRUE(hw.ok()) << hw.error().message << "\n" << text;
  EXPECT_EQ(hw->name, name);
  EXPECT_EQ(hw->sm_count, h200->sm_count) << "no injected key took effect";
  EXPECT_NE(text.find("# Measured by `ppsearch probe spec.toml -o 'nl\\nsm_count = 7\\n#.toml'`"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("NVIDIA H200\\nsm_count = 5"), std::string::npos) << text;
  // A base given by a path with a quote and a backslash reads back as that path.
  const std::string base_ref = "/profiles/a\"b\\c.toml";
  const toml::table parsed =
      toml::parse(OverlayToml("x", base_ref, *h200, Summarize({*r}, {}, *h200), {*r}, p));
  EXPECT_EQ(parsed["base"].value<std::string>(), base_ref);
  EXPECT_EQ(parsed["name"].value<std::string>(), "x");
  EXPECT_FALSE(parsed.contains("sm_count"));
}

TEST_F(OverlayTest, CpuFiguresSaySoInTheFile) {
  Result<hardware::HardwareProfile> h200 = hardware::LoadHardwareProfile("h200");
  ASSERT_TRUE(h200.ok());
  std::string text = OneLine(kRecorded);
  text.replace(text.find("\"device\": \"cuda\""), 16, "\"device\": \"cpu\"");
  Result<NodeResult> r = ParseNodeOutput("601", text);
  ASSERT_TRUE(r.ok());
  const std::string toml = OverlayToml("cpu", "h200", *h200, Summarize({*r}, {}, *h200), {*r}, {});
  EXPECT_NE(toml.find("MEASURED ON THE CPU"), std::string::npos);
}

TEST_F(OverlayTest, ABaseThatIsMissingOrCircularIsNamed) {
  std::ofstream(dir_ / "a.toml") << "name = \"a\"\nbase = \"no-such-gpu\"\n";
  Result<hardware::HardwareProfile> a = hardware::LoadHardwareProfile((dir_ / "a.toml").string());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("a.toml:2:8: key 'base'"), std::string::npos)
      << a.error().message;
  EXPECT_NE(a.error().message.find("unknown hardware profile 'no-such-gpu'"), std::string::npos);
  std::ofstream(dir_ / "b.toml") << "name = \"b\"\nbase = \"c.toml\"\n";
  std::ofstream(dir_ / "c.toml") << "name = \"c\"\nbase = \"b.toml\"\n";
  Result<hardware::HardwareProfile> b = hardware::LoadHardwareProfile((dir_ / "b.toml").string());
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("profiles deep"), std::string::npos) << b.error().message;
  // A key the base gave is reported in the base's file.
  std::ofstream(dir_ / "base.toml") << "name = \"base\"\ngpu_name = \"x\"\nsm_count = 1\n"
                                       "memory_mib = 1\nmemory_bw_gbps = 1\nbf16_tflops = -1\n";
  std::ofstream(dir_ / "top.toml") << "name = \"top\"\nbase = \"base.toml\"\n";
  Result<hardware::HardwareProfile> top =
      hardware::LoadHardwareProfile((dir_ / "top.toml").string());
  ASSERT_FALSE(top.ok());
  EXPECT_NE(top.error().message.find("base.toml:6:1: key 'bf16_tflops'"), std::string::npos)
      << top.error().message;
}

}  // namespace
}  // namespace ppsearch::probe
