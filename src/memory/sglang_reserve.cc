#include "memory/sglang_reserve.h"

#include <algorithm>

namespace ppsearch::memory {
namespace {

constexpr double kGib = 1024;
// _DEFAULT_PP_PREFILL_CUDA_GRAPH_MAX_TOKENS in memory_hook.py.
constexpr int64_t kPpPrefillGraphMaxTokens = 8192;

}  // namespace

int64_t DefaultChunkedPrefillSize(double gpu_total_mib) {
  if (gpu_total_mib < 20 * kGib) return 2048;
  if (gpu_total_mib < 60 * kGib) return 4096;
  if (gpu_total_mib < 160 * kGib) return 8192;
  return 16384;
}

int DefaultDecodeGraphMaxBs(double gpu_total_mib, int tp) {
  if (gpu_total_mib < 20 * kGib) return 8;
  if (gpu_total_mib < 35 * kGib) return tp < 4 ? 48 : 160;
  if (gpu_total_mib < 60 * kGib) return tp < 4 ? 32 : 160;
  if (gpu_total_mib < 160 * kGib) return tp < 4 ? 256 : 512;
  return 512;
}

int DecodeGraphMaxBs(const MemoryInputs& in) {
  return in.cuda_graph_max_bs > 0 ? in.cuda_graph_max_bs
                                  : DefaultDecodeGraphMaxBs(in.gpu_total_mib, in.tp);
}

int64_t PrefillGraphMaxBs(const MemoryInputs& in) {
  if (in.prefill_graph_max_bs > 0) return in.prefill_graph_max_bs;
  // The piecewise graph changes MLA's kernel dispatch, so SGLang captures
  // MLA models only up to 2048 tokens.
  int64_t max_bs = in.mla ? 2048 : in.chunked_prefill_size;
  if (in.pp > 1) max_bs = std::min(max_bs, kPpPrefillGraphMaxTokens);
  return max_bs;
}

int PrefillGraphCaptureCount(int64_t max_bs) {
  struct Run {
    int64_t first, last, step;
  };
  constexpr Run kRuns[] = {{4, 32, 4},      {48, 256, 16},     {288, 512, 32},
                           {576, 1024, 64}, {1280, 4096, 256}, {4608, INT64_MAX, 512}};
  int count = 0;
  for (const Run& r : kRuns) {
    const int64_t last = std::min(r.last, max_bs);
    if (last >= r.first) count += static_cast<int>((last - r.first) / r.step + 1);
  }
  return count;
}

double GraphReserveMib(const MemoryInputs& in) {
  double reserved = 0;
  const int max_bs = DecodeGraphMaxBs(in);
  if (in.decode_graph) reserved += max_bs * 2.0;
  if (in.dp_attention) {
    // "DP attention needs more padding ... much more for large cuda graph max bs".
    reserved += max_bs * in.dp_size * 3.0;
    if (max_bs > 300) reserved += max_bs * in.dp_size * 1.5;
  }
  if (in.prefill_graph) {
    // Non-MLA: only the graphs' non-torch memory (torch memory is reused);
    // MLA: "overhead is much higher than expected with fa3".
    reserved += in.mla ? 1.5 * kGib : PrefillGraphCaptureCount(PrefillGraphMaxBs(in)) * 8.0;
    if (in.deepep) reserved += 1 * kGib;  // the breakable graph's DeepEP bridge pool
  }
  return reserved;
}

double DeepEpReserveMib(const MemoryInputs& in) {
  return in.deepep && in.decode_graph ? 2 * kGib : 0;
}

}  // namespace ppsearch::memory
