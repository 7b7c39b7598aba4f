#pragma once
// A run directory written by hand, as the runner writes it: run.json and
// the example spec, then samples of 8 requests with a log, a GPU snapshot
// per node and a benchmark summary. Used by the report's tests of a whole
// run and of damaged evidence.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/analysis_testing.h"
#include "evidence/bench_summary.h"
#include "evidence/evidence.h"
#include "nvidia_smi/gpu_memory.h"
#include "util/files.h"

namespace ppsearch::report::testing {

using analysis::testing::EvenRecords;
using analysis::testing::ExampleSpecPath;
using analysis::testing::Layout;
using analysis::testing::SmallSweepOverrides;

inline const spec::LayoutSpec kPp4 = Layout(4, 8, 4);
inline const spec::LayoutSpec kPp8 = Layout(8, 4, 4);

class RunDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("ppsearch_report_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(dir_ + "_old");
    target_ = dir_;
  }
  void TearDown() override {
    if (HasFailure()) return;
    std::filesystem::remove_all(dir_);
    std::filesystem::remove_all(dir_ + "_old");
  }

  void WriteMetadata(std::vector<std::string> extra_overrides = {}) {
    std::vector<std::string> overrides = SmallSweepOverrides();
    overrides.insert(overrides.end(), extra_overrides.begin(), extra_overrides.end());
    nlohmann::json run = {{"schema", "1"},
                          {"run_id", "test-run"},
                          {"engine", "sim"},
                          {"simulated", true},
                          {"tool_version", "0.1.0"},
                          {"git_sha", "abc"},
                          {"spec_path", ExampleSpecPath()},
                          {"overrides", overrides},
                          {"hosts", {"601", "602", "603", "604"}},
                          {"image", "local/sglang:kimi-k3-sm120-flashinfer-mxfp4-phase5"},
                          {"calibration", nullptr},
                          {"seeds", {{"workload", 20240601}}},
                          {"command_line", "ppsearch run examples/kimi-k3-pp-search.toml --set x"},
                          {"started_at", "2026-01-01T00:00:00Z"}};
    ASSERT_TRUE(WriteFileAtomic(target_ + "/metadata/run.json", run.dump(2)).ok());
    Result<std::string> spec = ReadFile(ExampleSpecPath());
    ASSERT_TRUE(spec.ok());
    ASSERT_TRUE(WriteFileAtomic(target_ + "/metadata/spec.toml", *spec).ok());
  }

  // One sample: 8 requests of 16,000 tokens over `duration_s`; GPU used
  // 80,000 + 100 x stage MiB (stage = global rank / tp on 4 x 8 GPUs).
  void WriteSample(const spec::LayoutSpec& layout, int repeat, double duration_s,
                   const std::string& log_603 = "[2026-01-01 00:00:00] ready\n", int errors = 0,
                   bool completed = true) {
    const evidence::RunPaths paths{target_};
    const evidence::SampleId id{layout, 8, repeat};
    ASSERT_TRUE(evidence::AppendManifest(paths, id, evidence::SampleState::kStarted).ok());
    ASSERT_TRUE(WriteFileAtomic(paths.raw(id),
                                evidence::RecordsToJsonl(EvenRecords(8, 16000, duration_s, errors)))
                    .ok());
    for (int h = 0; h < 4; ++h) {
      const std::string host = std::to_string(601 + h);
      std::vector<nvidia_smi::GpuMemory> gpus;
      for (int g = 0; g < 8; ++g) {
        const int stage = (h * 8 + g) / layout.tp;
        gpus.push_back({g, "GPU-" + host + std::to_string(g), "NVIDIA RTX 6000D",
                        80000.0 + 100 * stage, 85651.0, "575.57.08"});
      }
      ASSERT_TRUE(WriteFileAtomic(paths.gpu(id, host), nvidia_smi::FormatGpuMemoryCsv(gpus)).ok());
      ASSERT_TRUE(WriteFileAtomic(paths.service(id, host),
                                  host == "603" ? log_603 : "[2026-01-01 00:00:00] ready\n")
                      .ok());
    }
    evidence::BenchSummary bench;
    bench.sample = id.str();
    bench.simulated = true;
    ASSERT_TRUE(evidence::WriteBenchSummary(paths, id, bench).ok());
    if (completed) {
      ASSERT_TRUE(evidence::AppendManifest(paths, id, evidence::SampleState::kCompleted).ok());
    }
  }

  void WriteHealthyRun(std::vector<std::string> extra_overrides = {}) {
    WriteMetadata(std::move(extra_overrides));
    WriteSample(kPp4, 1, 10.0);
    WriteSample(kPp4, 2, 10.2);
    WriteSample(kPp8, 1, 8.0);
    WriteSample(kPp8, 2, 8.1);
  }

  std::string dir_;
  std::string target_;  // the run directory WriteMetadata and WriteSample write
};

inline bool Has(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

inline std::vector<std::string> Strings(const nlohmann::json& array) {
  std::vector<std::string> out;
  for (const auto& v : array) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace ppsearch::report::testing
