#include "nvidia_smi/gpu_memory.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "nvidia_smi/snapshot_testing.h"

namespace ppsearch::nvidia_smi {
namespace {

TEST(GpuMemoryCsvTest, ParsesRealShapedOutput) {
  const std::string text =
      "0, GPU-5d2c1a7e-3f4b-8c9d-0e1f-2a3b4c5d6e7f, NVIDIA RTX 6000D, 81355, 85651\n"
      "1, GPU-9a8b7c6d-5e4f-3a2b-1c0d-ef0123456789, NVIDIA RTX 6000D, 4, 85651   \n"
      "\n";
  auto gpus = ParseGpuMemoryCsv(text);
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 0);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-5d2c1a7e-3f4b-8c9d-0e1f-2a3b4c5d6e7f");
  EXPECT_EQ((*gpus)[0].name, "NVIDIA RTX 6000D");
  EXPECT_DOUBLE_EQ(*(*gpus)[0].used_mib, 81355);
  EXPECT_DOUBLE_EQ(*(*gpus)[0].total_mib, 85651);
  EXPECT_DOUBLE_EQ(*(*gpus)[1].used_mib, 4);
}

TEST(GpuMemoryCsvTest, NotAvailableValuesAndCrlf) {
  auto gpus = ParseGpuMemoryCsv("3, GPU-abc, NVIDIA H200, [N/A], N/A\r\n");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  EXPECT_EQ((*gpus)[0].index, 3);
  EXPECT_FALSE((*gpus)[0].used_mib.has_value());
  EXPECT_FALSE((*gpus)[0].total_mib.has_value());
}

TEST(GpuMemoryCsvTest, UnitsSuffixIsAccepted) {
  auto gpus = ParseGpuMemoryCsv("0, GPU-a, NVIDIA H20, 1024 MiB, 97871 MiB\n");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  EXPECT_DOUBLE_EQ(*(*gpus)[0].total_mib, 97871);
}

TEST(GpuMemoryCsvTest, NameWithCommaIsJoined) {
  auto gpus = ParseGpuMemoryCsv("0, GPU-a, Weird, Name, 1, 2\n");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  EXPECT_EQ((*gpus)[0].name, "Weird, Name");
  EXPECT_DOUBLE_EQ(*(*gpus)[0].used_mib, 1);
}

TEST(GpuMemoryCsvTest, DriverVersionColumn) {
  auto gpus = ParseGpuMemoryCsv(
      "0, GPU-a, NVIDIA RTX 6000D, 81355, 85651, 575.57.08\n"
      "1, GPU-b, Weird, Name, 1, 2, [N/A]\n"
      "2, GPU-c, NVIDIA H200, 5, 6\n");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  EXPECT_EQ((*gpus)[0].driver_version, "575.57.08");
  EXPECT_EQ((*gpus)[0].name, "NVIDIA RTX 6000D");
  EXPECT_DOUBLE_EQ(*(*gpus)[0].total_mib, 85651);
  EXPECT_EQ((*gpus)[1].name, "Weird, Name");
  EXPECT_EQ((*gpus)[1].driver_version, "");
  EXPECT_DOUBLE_EQ(*(*gpus)[1].used_mib, 1);
  EXPECT_EQ((*gpus)[2].driver_version, "");  // a five-column snapshot of an older run
  GpuMemory g;
  g.uuid = "GPU-d";
  g.name = "NVIDIA H20";
  g.used_mib = 1;
  g.total_mib = 2;
  g.driver_version = "570.124.06";
  auto back = ParseGpuMemoryCsv(FormatGpuMemoryCsv({g}));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ((*back)[0].driver_version, "570.124.06");
}

TEST(GpuMemoryCsvTest, ErrorsNameTheLine) {
  auto short_line = ParseGpuMemoryCsv("0, GPU-a, NVIDIA H200, 5, 6\n\n1, GPU-b, 5\n", "node1");
  ASSERT_FALSE(short_line.ok());
  EXPECT_EQ(short_line.error().message,
            "node1:3: expected 5 comma-separated fields (index, uuid, name, memory.used, "
            "memory.total), got 3: '1, GPU-b, 5'");

  auto bad_index = ParseGpuMemoryCsv("x, GPU-a, NVIDIA H200, 1, 6\n", "n");
  ASSERT_FALSE(bad_index.ok());
  EXPECT_EQ(bad_index.error().message,
            "n:1: index 'x' is not a non-negative integer: 'x, GPU-a, NVIDIA H200, 1, 6'");

  auto empty = ParseGpuMemoryCsv("\n  \n", "n");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "n: no GPU lines in the output");
}

// Each bad reading stays in its own column, whichever column it is in, for
// validation to name; none is read as part of the GPU's name.
TEST(GpuMemoryCsvTest, ImpossibleReadingsAreKeptInTheirColumn) {
  for (const char* bad : {"-5", "nan", "inf", "1e5000", "-inf"}) {
    for (const bool in_total : {false, true}) {
      const std::string line =
          in_total ? std::string("0, GPU-a, NVIDIA H200, 5, ") + bad + ", 550.54.15\n"
                   : std::string("0, GPU-a, NVIDIA H200, ") + bad + ", 143771, 550.54.15\n";
      auto gpus = ParseGpuMemoryCsv(line);
      ASSERT_TRUE(gpus.ok()) << line << gpus.error().message;
      const GpuMemory& g = (*gpus)[0];
      EXPECT_EQ(g.name, "NVIDIA H200") << line;
      EXPECT_EQ(g.driver_version, "550.54.15") << line;
      const double bad_value = *(in_total ? g.total_mib : g.used_mib);
      EXPECT_TRUE(bad_value < 0 || !std::isfinite(bad_value)) << line;
      EXPECT_DOUBLE_EQ(*(in_total ? g.used_mib : g.total_mib), in_total ? 5 : 143771) << line;
      EXPECT_EQ(g.unreadable, "") << line;
    }
  }
}

TEST(GpuMemoryCsvTest, ADriverVersionMayBeAWord) {
  auto gpus = ParseGpuMemoryCsv("0, GPU-a, NVIDIA H200, 0, 85651, smi-sim\n");
  ASSERT_TRUE(gpus.ok()) << gpus.error().message;
  EXPECT_EQ((*gpus)[0].driver_version, "smi-sim");
  EXPECT_EQ((*gpus)[0].unreadable, "");
  EXPECT_DOUBLE_EQ(*(*gpus)[0].total_mib, 85651);
}

TEST(GpuMemoryCsvTest, ReadingsThatAreNoNumberAreNaNAndNamed) {
  auto hex = ParseGpuMemoryCsv("0, GPU-a, NVIDIA H200, 0x10, 143771, 550.54.15\n");
  ASSERT_TRUE(hex.ok()) << hex.error().message;
  EXPECT_TRUE(std::isnan(*(*hex)[0].used_mib));
  EXPECT_DOUBLE_EQ(*(*hex)[0].total_mib, 143771);
  EXPECT_EQ((*hex)[0].unreadable, "memory.used '0x10' is not a number");
  auto total = ParseGpuMemoryCsv("0, GPU-a, NVIDIA H200, 5, lots\n");
  ASSERT_TRUE(total.ok()) << total.error().message;
  EXPECT_EQ((*total)[0].unreadable, "memory.total 'lots' is not a number");
  auto comma = ParseGpuMemoryCsv("0, GPU-a, NVIDIA H200, 1,5, 143771, 550.54.15\n");
  ASSERT_TRUE(comma.ok()) << comma.error().message;
  EXPECT_EQ((*comma)[0].name, "NVIDIA H200");
  EXPECT_TRUE(std::isnan(*(*comma)[0].used_mib));
  EXPECT_TRUE(std::isnan(*(*comma)[0].total_mib));
  EXPECT_EQ((*comma)[0].unreadable,
            "memory.used and memory.total '1,5,143771' are not two numbers");
}

TEST(GpuMemoryCsvTest, FormatRoundTrips) {
  std::vector<GpuMemory> gpus = {{0, "GPU-a", "NVIDIA RTX 6000D", 81355.4, 85651, "575.57.08"},
                                 {1, "GPU-b", "NVIDIA RTX 6000D", std::nullopt, 85651, ""}};
  const std::string text = FormatGpuMemoryCsv(gpus);
  EXPECT_EQ(text,
            "0, GPU-a, NVIDIA RTX 6000D, 81355, 85651, 575.57.08\n"
            "1, GPU-b, NVIDIA RTX 6000D, [N/A], 85651, [N/A]\n");
  auto back = ParseGpuMemoryCsv(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)[1].name, "NVIDIA RTX 6000D");
  EXPECT_FALSE((*back)[1].used_mib.has_value());
}

class FakeRunner : public CommandRunner {
 public:
  std::map<std::string, Result<std::string>> outputs;
  Result<std::string> Run(const std::string& command) override {
    auto it = outputs.find(command);
    if (it == outputs.end()) return MakeError("unknown command " + command);
    return it->second;
  }
};

TEST(SnapshotTest, ParsesTheCommandsOutputAndNamesItInErrors) {
  FakeRunner runner;
  runner.outputs.emplace(kDefaultQueryCommand, std::string("0, GPU-a, NVIDIA RTX 6000D, 10, 20\n"));
  runner.outputs.emplace("bad", std::string("garbage\n"));
  auto ok = TakeSnapshot(runner, kDefaultQueryCommand);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->size(), 1u);
  auto bad = TakeSnapshot(runner, "bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("bad:1: expected 5", 0), 0u) << bad.error().message;
}

TEST(SnapshotTest, ShellRunnerReportsExitStatus) {
  ShellRunner shell;
  auto out = shell.Run("printf '0, GPU-a, X Y, 1, 2\\n'");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "0, GPU-a, X Y, 1, 2\n");
  auto fail = shell.Run("exit 3");
  ASSERT_FALSE(fail.ok());
  EXPECT_NE(fail.error().message.find("exit status 3"), std::string::npos);
}

}  // namespace
}  // namespace ppsearch::nvidia_smi
