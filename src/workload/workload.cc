#include "workload/workload.h"

#include <algorithm>
#include <cmath>

namespace ppsearch::workload {

uint64_t SplitMix64::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::NextUnit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

int64_t SplitMix64::UniformInt(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(Next() % span);
}

double SplitMix64::Exponential(double rate) { return -std::log1p(-NextUnit()) / rate; }

std::vector<PlannedRequest> PlanRequests(const WorkloadParams& params) {
  SplitMix64 rng(params.seed);
  std::vector<PlannedRequest> out;
  out.reserve(params.num_requests);
  // bench_serving's compute_random_lens: randint(max(L * ratio, 1), L + 1).
  // A draw happens only for what varies, in a fixed order (row, or input
  // then output; then arrival), so fixed lengths plan as they always did.
  auto min_len = [](int64_t len, double ratio) {
    return std::max<int64_t>(static_cast<int64_t>(len * ratio), 1);
  };
  const int64_t min_input = min_len(params.input_tokens, params.range_ratio);
  const int64_t min_output = min_len(params.output_tokens, params.output_range_ratio);
  const int64_t rows = static_cast<int64_t>(params.lengths.size());
  double t_s = 0;
  for (int i = 0; i < params.num_requests; ++i) {
    PlannedRequest r;
    r.id = i;
    if (rows > 0) {
      const LengthPair& row = params.lengths[static_cast<size_t>(rng.UniformInt(0, rows - 1))];
      r.input_tokens = row.input_tokens;
      r.output_tokens = row.output_tokens;
    } else {
      r.input_tokens = params.range_ratio >= 1.0 ? params.input_tokens
                                                 : rng.UniformInt(min_input, params.input_tokens);
      r.output_tokens = params.output_range_ratio >= 1.0
                            ? params.output_tokens
                            : rng.UniformInt(min_output, params.output_tokens);
    }
    if (params.request_rate > 0) {
      // bench_serving yields a request, then sleeps an exponential interval.
      r.arrival_ns = static_cast<int64_t>(std::llround(t_s * 1e9));
      t_s += rng.Exponential(params.request_rate);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace ppsearch::workload
