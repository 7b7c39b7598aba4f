#include "hardware/hardware.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/files.h"

namespace ppsearch::hardware {
namespace {

// A valid profile whose top-level keys sit one per line from line 1, so a test
// that replaces a line knows the position its message must name.
constexpr const char* kValidProfile = R"(name = "x"
gpu_name = "Test GPU"
sm_count = 100
memory_mib = 1000
memory_bw_gbps = 1500
bf16_tflops = 100
fp8_tflops = 200
fp4_tflops = 400
w4a8_tflops = 150
attention_tflops = 60
attention_backend = "fa3"
fp4_tensor_cores = true
gpus_per_node = 4
nvlink = false
pcie_gen = 5
p2p_gbps = 50
p2p_latency_us = 5
nic_gbps_per_gpu = 50
inter_latency_us = 10

[[intra_allreduce]]
group_size = 2
busbw_gbps = 40
latency_us = 6

[[intra_allreduce]]
group_size = 4
busbw_gbps = 25
latency_us = 13

[[intra_alltoall]]
group_size = 4
busbw_gbps = 20
latency_us = 9
)";

// `text` with the whole line `line` replaced (by an empty line when removing a
// key, which keeps every other line where it was).
std::string Replace(const std::string& line, const std::string& replacement,
                    std::string text = kValidProfile) {
  size_t at = text.find(line + "\n");
  EXPECT_NE(at, std::string::npos) << line;
  if (at == std::string::npos) return text;
  return text.replace(at, line.size(), replacement);
}

class HardwareFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ppsearch_hardware_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `text` to <tmp>/<file_name> and returns the path.
  std::string Write(const std::string& text, const std::string& file_name = "x.toml") {
    std::string path = dir_ + "/" + file_name;
    EXPECT_TRUE(WriteFileAtomic(path, text).ok());
    return path;
  }

  // The error message loading `text` gives; "" when it loads.
  std::string ErrorFor(const std::string& text) {
    auto loaded = LoadHardwareProfile(Write(text));
    return loaded.ok() ? "" : loaded.error().message;
  }

  std::string dir_;
};

TEST(ShippedProfilesTest, ListsTheShippedProfiles) {
  EXPECT_EQ(ListHardwareProfiles(),
            (std::vector<std::string>{"b200", "h100", "h20", "h20-141g", "h200", "rtx-6000d",
                                      "rtx-pro-6000-server"}));
}

TEST(ShippedProfilesTest, EveryShippedProfileLoadsAndIsPlausible) {
  for (const std::string& name : ListHardwareProfiles()) {
    SCOPED_TRACE(name);
    auto hw = LoadHardwareProfile(name);
    ASSERT_TRUE(hw.ok()) << hw.error().message;
    EXPECT_EQ(hw->name, name);
    EXPECT_EQ(hw->source_path, DataDir() + "/hardware/" + name + ".toml");
    EXPECT_EQ(hw->gpu_name.rfind("NVIDIA ", 0), 0u);
    EXPECT_EQ(hw->gpus_per_node, 8);
    EXPECT_GE(hw->pcie_gen, 5);
    EXPECT_LE(hw->pcie_gen, 6);
    // Data-centre GPUs of 2024-2026: 80-190 GB, 1-8 TB/s.
    EXPECT_GT(hw->memory_mib, 80000);
    EXPECT_LT(hw->memory_mib, 190000);
    EXPECT_GE(hw->memory_bw_gbps, 1000);
    EXPECT_LE(hw->memory_bw_gbps, 8000);
    // Narrower formats never run slower than wider ones on the same GPU.
    EXPECT_GE(hw->fp8_tflops, hw->bf16_tflops);
    EXPECT_GE(hw->fp4_tflops, hw->fp8_tflops);
    EXPECT_LE(hw->w4a8_tflops, hw->fp8_tflops);
    EXPECT_EQ(hw->intra_allreduce.back().group_size, hw->gpus_per_node);
    EXPECT_EQ(hw->intra_alltoall.back().group_size, hw->gpus_per_node);
    // NVLink moves an order of magnitude more than the NIC; PCIe does not.
    double node_busbw = hw->IntraFor(8).busbw_gbps;
    if (hw->nvlink) {
      EXPECT_GT(node_busbw, 5 * hw->nic_gbps_per_gpu);
    } else {
      EXPECT_LT(node_busbw, hw->nic_gbps_per_gpu);
    }
  }
}

TEST(ShippedProfilesTest, TargetClusterProfileHasTheReferenceNumbers) {
  auto hw = LoadHardwareProfile("rtx-6000d");
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_EQ(hw->gpu_name, "NVIDIA RTX 6000D");
  EXPECT_EQ(hw->memory_mib, 85651);
  EXPECT_EQ(hw->sm_count, 156);
  EXPECT_EQ(hw->gpus_per_node, 8);
  EXPECT_FALSE(hw->nvlink);
  EXPECT_DOUBLE_EQ(hw->bf16_tflops, 143.1);  // measured at 10240^3
  EXPECT_EQ(hw->bf16_measured_at.m, 10240);
  EXPECT_EQ(hw->bf16_measured_at.n, 10240);
  EXPECT_EQ(hw->bf16_measured_at.k, 10240);
  EXPECT_DOUBLE_EQ(hw->fp8_tflops, 280);
  EXPECT_DOUBLE_EQ(hw->burst_bf16_tflops, 241);
  EXPECT_DOUBLE_EQ(hw->burst_window_ms, 2.5);
  EXPECT_DOUBLE_EQ(hw->nic_gbps_per_gpu, 50);
  // The 8-GPU busbw is the middle of the RTX PRO 6000 hosts' range.
  EXPECT_DOUBLE_EQ(hw->IntraFor(8).busbw_gbps, 30.2);
  EXPECT_DOUBLE_EQ(hw->IntraFor(8).busbw_lo_gbps, 22.2);
  EXPECT_DOUBLE_EQ(hw->IntraFor(8).busbw_hi_gbps, 41.1);
  EXPECT_DOUBLE_EQ(hw->IntraFor(8).latency_us, 24.2);
  EXPECT_DOUBLE_EQ(hw->IntraFor(2).busbw_gbps, 38.6);
}

TEST(ShippedProfilesTest, OtherProfilesHaveTheirNvidiaSmiMemory) {
  EXPECT_EQ(LoadHardwareProfile("rtx-pro-6000-server")->memory_mib, 97887);
  EXPECT_EQ(LoadHardwareProfile("h20")->memory_mib, 97871);
  EXPECT_EQ(LoadHardwareProfile("h200")->memory_mib, 143771);
  EXPECT_TRUE(LoadHardwareProfile("h200")->nvlink);
  EXPECT_FALSE(LoadHardwareProfile("h200")->fp4_tensor_cores);
  EXPECT_EQ(LoadHardwareProfile("b200")->memory_mib, 183359);
  EXPECT_TRUE(LoadHardwareProfile("b200")->fp4_tensor_cores);
  EXPECT_EQ(LoadHardwareProfile("b200")->attention_backend, "trtllm_mla");
}

TEST(ShippedProfilesTest, LoadsByPathToo) {
  auto hw = LoadHardwareProfile(DataDir() + "/hardware/h20.toml");
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_EQ(hw->name, "h20");
}

TEST_F(HardwareFileTest, ValidProfileLoadsEveryField) {
  auto hw = LoadHardwareProfile(Write(kValidProfile));
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_EQ(hw->name, "x");
  EXPECT_EQ(hw->gpu_name, "Test GPU");
  EXPECT_EQ(hw->source_path, dir_ + "/x.toml");
  EXPECT_EQ(hw->sm_count, 100);
  EXPECT_EQ(hw->memory_mib, 1000);
  EXPECT_EQ(hw->memory_bw_gbps, 1500);
  EXPECT_EQ(hw->bf16_tflops, 100);
  EXPECT_EQ(hw->fp8_tflops, 200);
  EXPECT_EQ(hw->fp4_tflops, 400);
  EXPECT_EQ(hw->w4a8_tflops, 150);
  EXPECT_EQ(hw->attention_tflops, 60);
  EXPECT_EQ(hw->attention_backend, "fa3");
  EXPECT_TRUE(hw->attention_backends.empty());
  EXPECT_TRUE(hw->fp4_tensor_cores);
  EXPECT_EQ(hw->gpus_per_node, 4);
  EXPECT_FALSE(hw->nvlink);
  EXPECT_EQ(hw->pcie_gen, 5);
  EXPECT_EQ(hw->p2p_gbps, 50);
  EXPECT_EQ(hw->p2p_latency_us, 5);
  EXPECT_EQ(hw->nic_gbps_per_gpu, 50);
  EXPECT_EQ(hw->inter_latency_us, 10);
  ASSERT_EQ(hw->intra_allreduce.size(), 2u);
  EXPECT_EQ(hw->intra_allreduce[1].group_size, 4);
  EXPECT_EQ(hw->intra_allreduce[1].busbw_gbps, 25);
  EXPECT_EQ(hw->intra_allreduce[1].latency_us, 13);
  ASSERT_EQ(hw->intra_alltoall.size(), 1u);
  EXPECT_EQ(hw->intra_alltoall[0].busbw_gbps, 20);
}

// An all-reduce entry borrowed from other hosts may state the busbw they
// spanned; the range must hold the entry's own figure, and an all-to-all
// entry has no such key.
TEST_F(HardwareFileTest, AllReduceEntryStatesTheHostsBusBwRange) {
  auto with = [](const std::string& range) {
    return Replace("busbw_gbps = 25", "busbw_gbps = 25\nbusbw_range_gbps = " + range);
  };
  auto hw = LoadHardwareProfile(Write(with("[20, 35.5]")));
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->IntraFor(4).busbw_lo_gbps, 20);
  EXPECT_DOUBLE_EQ(hw->IntraFor(4).busbw_hi_gbps, 35.5);
  EXPECT_DOUBLE_EQ(hw->IntraFor(2).busbw_hi_gbps, 0);  // none stated
  const std::string key = dir_ + "/x.toml:29:1: key 'intra_allreduce[1].busbw_range_gbps': ";
  EXPECT_EQ(ErrorFor(with("3")),
            key + "expected [lowest, highest], two positive GB/s figures, got 3");
  EXPECT_EQ(ErrorFor(with("[35, 20]")), key + "expected the lowest figure first, got [35, 20]");
  EXPECT_EQ(ErrorFor(with("[0, 30]")),
            key + "expected two positive, finite GB/s figures, got [0, 30]");
  EXPECT_EQ(ErrorFor(with("[20, inf]")),
            key + "expected two positive, finite GB/s figures, got [20, inf]");
  EXPECT_EQ(ErrorFor(with("[nan, 30]")),
            key + "expected two positive, finite GB/s figures, got [nan, 30]");
  EXPECT_EQ(ErrorFor(with("[20, 30, 40]")),
            key + "expected [lowest, highest], two positive GB/s figures, got an array");
  EXPECT_EQ(ErrorFor(with("[20, \"x\"]")),
            key + "expected [lowest, highest], two positive GB/s figures, got an array");
  EXPECT_EQ(ErrorFor(with("[26, 35]")),
            key + "expected a range holding busbw_gbps (25), got [26, 35]");
  EXPECT_NE(ErrorFor(Replace("busbw_gbps = 20", "busbw_gbps = 20\nbusbw_range_gbps = [10, 30]"))
                .find("unknown key 'intra_alltoall[0].busbw_range_gbps'"),
            std::string::npos);
}

TEST_F(HardwareFileTest, SyntaxErrorGivesPositionAndTomlDescription) {
  EXPECT_EQ(ErrorFor(Replace("memory_mib = 1000", "memory_mib = ")),
            dir_ + "/x.toml:4:14: Error while parsing key-value pair: expected value, saw '\\n'");
}

TEST_F(HardwareFileTest, MissingKeyIsNamed) {
  EXPECT_EQ(ErrorFor(Replace("sm_count = 100", "")),
            dir_ + "/x.toml: missing required key 'sm_count'");
}

TEST_F(HardwareFileTest, MissingKeyInCollectiveEntryPointsAtItsHeader) {
  EXPECT_EQ(ErrorFor(Replace("latency_us = 13", "")),
            dir_ + "/x.toml:26:1: missing required key 'intra_allreduce[1].latency_us'");
}

TEST_F(HardwareFileTest, WrongTypeShowsTheValue) {
  EXPECT_EQ(ErrorFor(Replace("memory_mib = 1000", "memory_mib = \"lots\"")),
            dir_ + "/x.toml:4:1: key 'memory_mib': expected a positive number, got \"lots\"");
  EXPECT_EQ(ErrorFor(Replace("sm_count = 100", "sm_count = 2.5")),
            dir_ + "/x.toml:3:1: key 'sm_count': expected a positive integer, got 2.5");
  EXPECT_EQ(ErrorFor(Replace("nvlink = false", "nvlink = \"no\"")),
            dir_ + "/x.toml:14:1: key 'nvlink': expected true or false, got \"no\"");
  EXPECT_EQ(ErrorFor(Replace("gpu_name = \"Test GPU\"", "gpu_name = 3")),
            dir_ + "/x.toml:2:1: key 'gpu_name': expected a non-empty string, got 3");
  std::string scalar_alltoall =
      Replace("[[intra_alltoall]]\ngroup_size = 4\nbusbw_gbps = 20\nlatency_us = 9", "");
  EXPECT_EQ(ErrorFor(Replace("inter_latency_us = 10", "inter_latency_us = 10\nintra_alltoall = 3",
                             scalar_alltoall)),
            dir_ +
                "/x.toml:20:1: key 'intra_alltoall': expected one or more [[intra_alltoall]] "
                "tables, got 3");
}

TEST_F(HardwareFileTest, NonPositiveValuesAreRejected) {
  EXPECT_EQ(ErrorFor(Replace("bf16_tflops = 100", "bf16_tflops = 0")),
            dir_ + "/x.toml:6:1: key 'bf16_tflops': expected a positive number, got 0");
  EXPECT_EQ(ErrorFor(Replace("nic_gbps_per_gpu = 50", "nic_gbps_per_gpu = -2.5")),
            dir_ + "/x.toml:18:1: key 'nic_gbps_per_gpu': expected a positive number, got -2.5");
  EXPECT_EQ(ErrorFor(Replace("gpus_per_node = 4", "gpus_per_node = 0")),
            dir_ + "/x.toml:13:1: key 'gpus_per_node': expected a positive integer, got 0");
  EXPECT_EQ(ErrorFor(Replace("busbw_gbps = 40", "busbw_gbps = 0.0")),
            dir_ +
                "/x.toml:23:1: key 'intra_allreduce[0].busbw_gbps': expected a positive "
                "number, got 0");
  EXPECT_EQ(ErrorFor(Replace("group_size = 2", "group_size = 1")),
            dir_ +
                "/x.toml:22:1: key 'intra_allreduce[0].group_size': expected an integer >= 2, "
                "got 1");
}

TEST_F(HardwareFileTest, Bf16RateMayNameTheShapeItWasMeasuredAt) {
  Result<HardwareProfile> plain = LoadHardwareProfile(Write(kValidProfile));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->bf16_measured_at.m, 0);  // a number: the model's rate itself

  const std::string measured = Replace(
      "bf16_tflops = 100", "bf16_tflops = { measured = 98.5, m = 8192, n = 4096, k = 2048 }");
  Result<HardwareProfile> hw = LoadHardwareProfile(Write(measured));
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->bf16_tflops, 98.5);
  EXPECT_EQ(hw->bf16_measured_at.m, 8192);
  EXPECT_EQ(hw->bf16_measured_at.n, 4096);
  EXPECT_EQ(hw->bf16_measured_at.k, 2048);

  EXPECT_EQ(ErrorFor(Replace("bf16_tflops = 100", "bf16_tflops = { measured = 98.5, m = 8192 }")),
            dir_ + "/x.toml:6:15: missing required key 'bf16_tflops.n'");
  EXPECT_EQ(ErrorFor(Replace("bf16_tflops = 100",
                             "bf16_tflops = { measured = 98.5, m = 0, n = 1, k = 1 }")),
            dir_ + "/x.toml:6:34: key 'bf16_tflops.m': expected a positive integer, got 0");
  EXPECT_EQ(
      ErrorFor(Replace("bf16_tflops = 100", "bf16_tflops = { rate = 98.5, m = 1, n = 1, k = 1 }")),
      dir_ + "/x.toml:6:17: unknown key 'bf16_tflops.rate'");
  EXPECT_EQ(ErrorFor(Replace("bf16_tflops = 100", "bf16_tflops = \"fast\"")),
            dir_ +
                "/x.toml:6:1: key 'bf16_tflops': expected a positive number, or a table { "
                "measured = .., m = .., n = .., k = .. }, got \"fast\"");
  // 16 x 4096 x 4096 does 15.9 FLOPs per byte, below 98.5 TFLOPS / 1500 GB/s.
  EXPECT_EQ(ErrorFor(Replace("bf16_tflops = 100",
                             "bf16_tflops = { measured = 98.5, m = 16, n = 4096, k = 4096 }")),
            dir_ +
                "/x.toml:6:1: key 'bf16_tflops': a 16 x 4096 x 4096 GEMM does 16 FLOPs per "
                "byte it moves, below the 66 at which 98.5 TFLOPS outruns 1500 GB/s of DRAM: "
                "its time measures the memory, not the tensor rate; give a larger shape");
}

TEST_F(HardwareFileTest, AnOverlaysRateReplacesTheBasesMeasuredShape) {
  // `ppsearch probe` writes the model's rate as a number over a base that
  // gave a measured shape: the shape must not divide the probe's rate again.
  Write(Replace("bf16_tflops = 100",
                "bf16_tflops = { measured = 98.5, m = 8192, n = 4096, k = 2048 }"));
  Result<HardwareProfile> hw =
      LoadHardwareProfile(Write("name = \"y\"\nbase = \"x.toml\"\nbf16_tflops = 120\n", "y.toml"));
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->bf16_tflops, 120);
  EXPECT_EQ(hw->bf16_measured_at.m, 0);
  EXPECT_EQ(hw->sm_count, 100);  // the rest from the base
}

// An overlay's own key is reported in the overlay's file and line, not at
// the line of the base that gave it first.
TEST_F(HardwareFileTest, AnOverlaysBadValueIsReportedWhereTheOverlayWroteIt) {
  Write(kValidProfile);
  Write("name = \"y\"\nbase = \"x.toml\"\nbf16_tflops = nan\n", "y.toml");
  Result<HardwareProfile> hw = LoadHardwareProfile(dir_ + "/y.toml");
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.error().message,
            dir_ + "/y.toml:3:1: key 'bf16_tflops': expected a positive number, got nan");
  Write("name = \"y\"\nbase = \"x.toml\"\nsm_count = 1.5\n", "y.toml");
  EXPECT_EQ(LoadHardwareProfile(dir_ + "/y.toml").error().message,
            dir_ + "/y.toml:3:1: key 'sm_count': expected a positive integer, got 1.5");
}

// Memory past any GPU's is a typo, and its MiB would overflow what prints.
TEST_F(HardwareFileTest, MemoryPastAnyGpusIsRejected) {
  EXPECT_EQ(ErrorFor(Replace("memory_mib = 1000", "memory_mib = 1e300")),
            dir_ +
                "/x.toml:4:1: key 'memory_mib': expected a positive number of MiB up to "
                "1073741824, got 1e+300");
}

TEST_F(HardwareFileTest, UnknownKeyIsCaughtWithASuggestion) {
  EXPECT_EQ(ErrorFor(Replace("memory_mib = 1000", "memroy_mib = 1000")),
            dir_ + "/x.toml:4:1: unknown key 'memroy_mib' (did you mean 'memory_mib'?)");
  EXPECT_EQ(ErrorFor(Replace("busbw_gbps = 25", "busbw_gbs = 25")),
            dir_ +
                "/x.toml:28:1: unknown key 'intra_allreduce[1].busbw_gbs' (did you mean "
                "'busbw_gbps'?)");
  // Of two unknown keys the first written is reported, though toml++ sorts them.
  EXPECT_EQ(ErrorFor(Replace("nvlink = false", "zeta = 1\nalpha = 2")),
            dir_ + "/x.toml:14:1: unknown key 'zeta'");
}

TEST_F(HardwareFileTest, AttentionBackendsSelectTheirRate) {
  const std::string text = Replace("inter_latency_us = 10",
                                   "inter_latency_us = 10\n[attention_backends]\ntriton = 9.5") +
                           "\n";
  Result<HardwareProfile> hw = LoadHardwareProfile(Write(text));
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->attention_backends.at("triton"), 9.5);
  HardwareProfile chosen = *hw;
  ASSERT_TRUE(SelectAttentionBackend(chosen, "").ok());
  EXPECT_DOUBLE_EQ(chosen.attention_tflops, 60);  // the profile's own backend
  ASSERT_TRUE(SelectAttentionBackend(chosen, "fa3").ok());
  EXPECT_DOUBLE_EQ(chosen.attention_tflops, 60);
  ASSERT_TRUE(SelectAttentionBackend(chosen, "triton").ok());
  EXPECT_DOUBLE_EQ(chosen.attention_tflops, 9.5);
  EXPECT_EQ(chosen.attention_backend, "triton");
  ASSERT_TRUE(SelectAttentionBackend(chosen, "fa3").ok());  // and back
  EXPECT_DOUBLE_EQ(chosen.attention_tflops, 60);
  Status unknown = SelectAttentionBackend(chosen, "flashmla");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "attention backend 'flashmla': hardware profile x (" + chosen.source_path +
                ") has no attention rate for it (known: fa3, triton); add it under "
                "[attention_backends]");
}

TEST_F(HardwareFileTest, TensorBurstIsOptionalAndChecked) {
  Result<HardwareProfile> plain = LoadHardwareProfile(Write(kValidProfile));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_DOUBLE_EQ(plain->TensorBurstRatio(), 1.0);
  EXPECT_EQ(plain->burst_window_ms, 0);

  auto with = [](const std::string& table) {
    return Replace("inter_latency_us = 10", "inter_latency_us = 10\n[tensor_burst]\n" + table) +
           "\n";
  };
  Result<HardwareProfile> hw =
      LoadHardwareProfile(Write(with("bf16_tflops = 170\nwindow_ms = 2.5")));
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->burst_bf16_tflops, 170);
  EXPECT_DOUBLE_EQ(hw->burst_window_ms, 2.5);
  EXPECT_DOUBLE_EQ(hw->TensorBurstRatio(), 1.7);  // 170 / 100

  EXPECT_EQ(ErrorFor(with("bf16_tflops = 170")),
            dir_ + "/x.toml:20:1: missing required key 'tensor_burst.window_ms'");
  EXPECT_EQ(ErrorFor(with("bf16_tflops = 90\nwindow_ms = 2.5")),
            dir_ +
                "/x.toml:21:1: key 'tensor_burst.bf16_tflops': expected at least the sustained "
                "bf16_tflops (100), got 90");
  EXPECT_EQ(ErrorFor(with("bf16_tflops = 170\nwindow_s = 2.5")),
            dir_ + "/x.toml:22:1: unknown key 'tensor_burst.window_s' (did you mean 'window_ms'?)");
  EXPECT_EQ(ErrorFor(Replace("inter_latency_us = 10", "inter_latency_us = 10\ntensor_burst = 2")),
            dir_ +
                "/x.toml:20:1: key 'tensor_burst': expected a table with bf16_tflops and "
                "window_ms, got 2");
}

TEST_F(HardwareFileTest, TheBurstsPaybackComesAsAPairBelowTheSustainedRate) {
  auto with = [](const std::string& extra) {
    return Replace("inter_latency_us = 10",
                   "inter_latency_us = 10\n[tensor_burst]\n"
                   "bf16_tflops = 170\nwindow_ms = 2.5\n" +
                       extra) +
           "\n";
  };
  Result<HardwareProfile> hw = LoadHardwareProfile(
      Write(with("payback_bf16_tflops = 80\npayback_ms = 35\nrefill_ratio = 0.5")));
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_DOUBLE_EQ(hw->burst_payback_bf16_tflops, 80);
  EXPECT_DOUBLE_EQ(hw->burst_payback_ms, 35);
  EXPECT_DOUBLE_EQ(hw->TensorPaybackRatio(), 0.8);
  EXPECT_DOUBLE_EQ(hw->burst_refill_ratio, 0.5);
  EXPECT_NE(hw->TensorBurstText().find("80 for 35 ms once spent, refilled 0.5 ms per ms idle"),
            std::string::npos)
      << hw->TensorBurstText();

  Result<HardwareProfile> plain = LoadHardwareProfile(Write(with("")));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_DOUBLE_EQ(plain->TensorPaybackRatio(), 1.0) << "no payback unless the profile gives one";
  EXPECT_DOUBLE_EQ(plain->burst_refill_ratio, 1.0) << "refilled as fast as it drains by default";

  EXPECT_EQ(ErrorFor(with("payback_ms = 35")),
            dir_ +
                "/x.toml:23:1: key 'tensor_burst.payback_ms': expected payback_bf16_tflops and "
                "payback_ms together, got no payback_bf16_tflops");
  EXPECT_EQ(ErrorFor(with("payback_bf16_tflops = 120\npayback_ms = 35")),
            dir_ +
                "/x.toml:23:1: key 'tensor_burst.payback_bf16_tflops': expected at most the "
                "sustained bf16_tflops (100): the payback runs below it, got 120");
  EXPECT_EQ(ErrorFor(with("refill_ratio = -1")),
            dir_ + "/x.toml:23:1: key 'tensor_burst.refill_ratio': expected a number >= 0, got -1");
}

TEST_F(HardwareFileTest, CollectiveTablesMustAscendToTheWholeNode) {
  EXPECT_EQ(ErrorFor(Replace("group_size = 4\nbusbw_gbps = 25", "group_size = 2\nbusbw_gbps = 25")),
            dir_ +
                "/x.toml:27:1: key 'intra_allreduce[1].group_size': expected group sizes in "
                "ascending order, got 2 after 2");
  EXPECT_EQ(ErrorFor(Replace("gpus_per_node = 4", "gpus_per_node = 8")),
            dir_ +
                "/x.toml:27:1: key 'intra_allreduce[1].group_size': expected the largest group "
                "to be gpus_per_node (8), got 4");
}

TEST_F(HardwareFileTest, NameMustMatchTheFileName) {
  EXPECT_EQ(ErrorFor(Replace("name = \"x\"", "name = \"rtx-6000d\"")),
            dir_ +
                "/x.toml:1:1: key 'name': expected \"x\" (the file name without .toml), got "
                "\"rtx-6000d\"");
}

TEST_F(HardwareFileTest, MissingFileIsReported) {
  auto hw = LoadHardwareProfile(dir_ + "/absent.toml");
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.error().message, "cannot read " + dir_ + "/absent.toml: No such file or directory");
}

// Points DataDir() at a temporary directory for one test.
class ProfileNameTest : public HardwareFileTest {
 protected:
  void SetUp() override {
    HardwareFileTest::SetUp();
    if (const char* old = getenv("PPSEARCH_DATA_DIR")) saved_ = old;
    setenv("PPSEARCH_DATA_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (saved_) {
      setenv("PPSEARCH_DATA_DIR", saved_->c_str(), 1);
    } else {
      unsetenv("PPSEARCH_DATA_DIR");
    }
    HardwareFileTest::TearDown();
  }
  std::optional<std::string> saved_;
};

TEST_F(ProfileNameTest, UnknownNameListsTheAvailableProfiles) {
  Write("", "hardware/rtx-6000d.toml");
  Write("", "hardware/h20.toml");
  Write("", "hardware/notes.txt");
  EXPECT_EQ(ListHardwareProfiles(), (std::vector<std::string>{"h20", "rtx-6000d"}));
  EXPECT_EQ(LoadHardwareProfile("rtx6000d").error().message,
            "unknown hardware profile 'rtx6000d' (did you mean 'rtx-6000d'?); available in " +
                dir_ + "/hardware: h20, rtx-6000d; or give a path to a .toml file");
  EXPECT_EQ(LoadHardwareProfile("b200").error().message,
            "unknown hardware profile 'b200'; available in " + dir_ +
                "/hardware: h20, rtx-6000d; or give a path to a .toml file");
}

TEST_F(ProfileNameTest, NameWithASlashIsNotAPath) {
  Write(kValidProfile, "x.toml");
  EXPECT_EQ(LoadHardwareProfile("../x").error().message,
            "unknown hardware profile '../x'; no profiles in " + dir_ +
                "/hardware; or give a path to a .toml file");
}

TEST_F(ProfileNameTest, NameLoadsFromTheDataDirectory) {
  Write(kValidProfile, "hardware/x.toml");
  auto hw = LoadHardwareProfile("x");
  ASSERT_TRUE(hw.ok()) << hw.error().message;
  EXPECT_EQ(hw->source_path, dir_ + "/hardware/x.toml");
}

HardwareProfile WithAllReduceGroups(const std::vector<int>& sizes) {
  HardwareProfile hw;
  for (int size : sizes) {
    hw.intra_allreduce.push_back({size, 10.0 * size, 1.0 * size});
    hw.intra_alltoall.push_back({size, 5.0 * size, 2.0 * size});
  }
  return hw;
}

TEST(IntraForTest, PicksExactGroup) {
  HardwareProfile hw = WithAllReduceGroups({2, 4, 8});
  EXPECT_EQ(hw.IntraFor(2).group_size, 2);
  EXPECT_EQ(hw.IntraFor(4).group_size, 4);
  EXPECT_EQ(hw.IntraFor(8).group_size, 8);
  EXPECT_DOUBLE_EQ(hw.IntraFor(4).busbw_gbps, 40);
}

TEST(IntraForTest, PicksNextLargerGroupWhenNoExactMatch) {
  HardwareProfile hw = WithAllReduceGroups({2, 4, 8});
  EXPECT_EQ(hw.IntraFor(3).group_size, 4);
  EXPECT_EQ(hw.IntraFor(5).group_size, 8);
  EXPECT_EQ(hw.IntraFor(1).group_size, 2);
}

TEST(IntraForTest, FallsBackToLargestBeyondTheTable) {
  HardwareProfile hw = WithAllReduceGroups({2, 4, 8});
  EXPECT_EQ(hw.IntraFor(16).group_size, 8);
}

TEST(IntraForTest, AllToAllUsesItsOwnTable) {
  HardwareProfile hw = WithAllReduceGroups({2, 8});
  EXPECT_EQ(hw.IntraAllToAllFor(4).group_size, 8);
  EXPECT_DOUBLE_EQ(hw.IntraAllToAllFor(4).busbw_gbps, 40);
}

TEST(IntraForTest, EmptyTableGivesAZeroEntry) {
  HardwareProfile hw;
  EXPECT_EQ(hw.IntraFor(8).group_size, 0);
}

}  // namespace
}  // namespace ppsearch::hardware
