#include "sim/dynamic_chunk.h"

#include <algorithm>
#include <cmath>

#include "util/matrix.h"

namespace ppsearch::sim {
namespace {

constexpr int kProfileSamples = 128;
// max_allowed keeps this many tokens of the context free (predict_next_chunk_size).
constexpr int64_t kContextReserveTokens = 100;

}  // namespace

std::vector<int64_t> ProfileLengths(int64_t chunked_prefill_size) {
  const int64_t top = static_cast<int64_t>(static_cast<double>(chunked_prefill_size) * 1.25);
  const int64_t step = top / kProfileSamples;  // C*1.25 // 128
  std::vector<int64_t> lengths;
  for (int i = 0; i < kProfileSamples; ++i) lengths.push_back(top - i * step);
  return lengths;
}

std::optional<PrefillCurve> FitPrefillCurve(const std::vector<int64_t>& lengths,
                                            const std::vector<double>& times_ns) {
  if (lengths.size() != times_ns.size() || lengths.size() < 4) return std::nullopt;
  // Normal equations in u = l / scale, which keeps the 3 x 3 system well
  // conditioned for lengths of tens of thousands of tokens.
  double scale = 1;
  for (int64_t l : lengths) scale = std::max(scale, static_cast<double>(l));
  std::vector<double> ata(9, 0.0), atb(3, 0.0);
  for (size_t i = 1; i < lengths.size(); ++i) {  // the first sample is dropped
    const double u = static_cast<double>(lengths[i]) / scale;
    const double row[3] = {u * u, u, 1.0};
    for (int r = 0; r < 3; ++r) {
      atb[r] += row[r] * times_ns[i];
      for (int c = 0; c < 3; ++c) ata[r * 3 + c] += row[r] * row[c];
    }
  }
  std::optional<std::vector<double>> x = SolveSpd(ata, 3, atb);
  if (!x) return std::nullopt;
  PrefillCurve curve;
  curve.a = (*x)[0] / (scale * scale);
  curve.b = std::max((*x)[1] / scale, 0.0);
  curve.c = (*x)[2];
  // a > 0 as SGLang requires, beyond the normal equations' rounding: a
  // curvature worth less than 1e-9 of the top sample is a straight line.
  const double top = curve(scale);
  if (!(curve.a * scale * scale > 1e-9 * std::fabs(top))) return std::nullopt;
  return curve;
}

std::optional<ChunkSizePredictor> MakeChunkSizePredictor(const CostModel& cost, int64_t base_chunk,
                                                         const DynamicChunkingConfig& config,
                                                         int page_size, int64_t context_len,
                                                         int64_t max_prefill_tokens) {
  if (base_chunk <= 0) return std::nullopt;
  const std::vector<int64_t> lengths = ProfileLengths(base_chunk);
  std::vector<double> times;
  for (int64_t l : lengths) {
    MicroBatch batch;
    batch.is_prefill = true;
    batch.entries.push_back({0, l, 0, true});
    times.push_back(static_cast<double>(cost.StageCost(0, batch).total_ns()));
  }
  std::optional<PrefillCurve> curve = FitPrefillCurve(lengths, times);
  if (!curve) return std::nullopt;
  ChunkSizePredictor p;
  p.curve = *curve;
  p.base_chunk = base_chunk;
  p.target_ns = (*curve)(static_cast<double>(base_chunk)) - (*curve)(0);
  p.smooth_factor = config.smooth_factor;
  p.alignment = std::max<int64_t>(page_size, 64);
  p.context_len = context_len;
  p.max_prefill_tokens = max_prefill_tokens;
  return p;
}

int64_t NextChunkSize(const ChunkSizePredictor& p, int64_t history_tokens) {
  const double a = p.curve.a;
  const double b_eff = 2 * a * static_cast<double>(history_tokens) + p.curve.b;
  // The positive root of a x^2 + b_eff x - T = 0, in the form without
  // cancellation: 2T / (b_eff + sqrt(b_eff^2 + 4aT)).
  const double ideal = 2 * p.target_ns / (b_eff + std::sqrt(b_eff * b_eff + 4 * a * p.target_ns));
  const double base = static_cast<double>(p.base_chunk);
  const double smoothed = base + p.smooth_factor * (ideal - base);
  int64_t size = std::max(static_cast<int64_t>(smoothed), p.base_chunk / 4);
  size = std::max(size / p.alignment * p.alignment, p.alignment);
  int64_t max_allowed = INT64_MAX;
  if (p.context_len > 0) max_allowed = p.context_len - history_tokens - kContextReserveTokens;
  if (p.max_prefill_tokens > 0) max_allowed = std::min(max_allowed, p.max_prefill_tokens);
  // The clip can leave a size off the alignment: SGLang aligns it again, and
  // a size under one alignment unit is no prediction (the fixed chunk runs).
  size = std::min(size, max_allowed);
  size = size / p.alignment * p.alignment;
  return size >= p.alignment ? size : p.base_chunk;
}

}  // namespace ppsearch::sim
