#pragma once
// What a benchmark sample sends: prompt and output lengths and, for an open
// loop, arrival times. Seeded, so a sample is reproducible from its seed.

#include <cstdint>
#include <vector>

#include "workload/lengths_file.h"

namespace ppsearch::workload {

struct WorkloadParams {
  int num_requests = 0;
  int concurrency = 1;  // closed loop: requests in flight
  int64_t input_tokens = 0;
  int64_t output_tokens = 1;
  // Input lengths uniform on [input_tokens * range_ratio, input_tokens];
  // 1.0 gives fixed lengths (bench_serving's --random-range-ratio).
  double range_ratio = 1.0;
  // Output lengths uniform on [output_tokens * output_range_ratio,
  // output_tokens] the same way; 1.0 gives fixed lengths.
  double output_range_ratio = 1.0;
  // A lengths file's rows (lengths_file.h): when given, each request takes
  // both lengths from a row drawn uniformly with the seed, and the lengths
  // and ratios above are not used.
  std::vector<LengthPair> lengths{};
  double request_rate = 0;  // requests/s; 0 = closed loop
  uint64_t seed = 1;
};

struct PlannedRequest {
  int64_t id = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t arrival_ns = 0;  // open loop only: when it is sent
};

// Small, portable generator (splitmix64): the same seed gives the same
// workload on every platform and standard library.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  double NextUnit();                           // uniform in [0, 1)
  int64_t UniformInt(int64_t lo, int64_t hi);  // inclusive
  double Exponential(double rate);

 private:
  uint64_t state_;
};

std::vector<PlannedRequest> PlanRequests(const WorkloadParams& params);

}  // namespace ppsearch::workload
