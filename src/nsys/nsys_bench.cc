// Speed of `ppsearch nsys` (reported in docs/tools.md): an export of a million
// or more kernel rows, 8 GPUs, a forward pass of 1,000 kernels every 12 ms,
// streamed through the analysis with forward and NVTX windows.

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <map>

#include "nsys/analyze.h"
#include "nsys/export_testing.h"

namespace ppsearch::nsys {
namespace {

constexpr int kGpus = 8;
constexpr int kKernelsPerPass = 1000;

// Written once per process, removed at exit.
const std::string& ExportOf(int64_t rows) {
  static std::map<int64_t, std::string> paths;
  auto it = paths.find(rows);
  if (it != paths.end()) return it->second;
  std::string dir =
      (std::filesystem::temp_directory_path() / "ppsearch_nsys_bench_XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) std::abort();
  const std::string path = dir + "/profile.sqlite";
  auto w = TestExportWriter::Create(path);
  if (!w.ok()) std::abort();
  const int64_t passes = rows / kGpus / kKernelsPerPass;
  for (int g = 0; g < kGpus; ++g) {
    (*w)->AddGpu(g, "NVIDIA RTX 6000D");
    for (int64_t p = 0; p < passes; ++p) {
      const int64_t t0 = p * 12'000'000;
      (*w)->AddNvtxRange(t0, t0 + 10'000'000, "prefill", g + 1);
      for (int k = 0; k < kKernelsPerPass; k += 2) {
        const int64_t t = t0 + k * 10'000;
        (*w)->AddKernel(g, 7, t, t + 12'000, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", g + 1);
        (*w)->AddKernel(g, 8, t + 11'000, t + 20'000, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
                        g + 1);
      }
    }
  }
  if (!(*w)->Close().ok()) std::abort();
  std::atexit([] {
    for (const auto& [n, p] : paths)
      std::filesystem::remove_all(std::filesystem::path(p).parent_path());
  });
  return paths[rows] = path;
}

void Run(benchmark::State& state, const std::string& window) {
  const std::string& path = ExportOf(state.range(0));
  const WindowChoice choice = *ParseWindowChoice(window, 1000);
  int64_t rows = 0;
  for (auto _ : state) {
    auto a = AnalyzeProfiles({path}, choice);
    if (!a.ok()) {
      state.SkipWithError(a.error().message.c_str());
      return;
    }
    rows += a->exports[0].kernel_rows;
    benchmark::DoNotOptimize(a->summary.exposed_share.median);
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}

void BM_NsysForwardWindows(benchmark::State& state) { Run(state, "forward"); }
void BM_NsysNvtxWindows(benchmark::State& state) { Run(state, "nvtx:prefill"); }
BENCHMARK(BM_NsysForwardWindows)->Arg(1'008'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_NsysNvtxWindows)->Arg(1'008'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ppsearch::nsys
