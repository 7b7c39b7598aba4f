#pragma once
// `ppsearch simulate` of a disaggregated deployment: its text tables and
// its --json document (the one owner of that document's keys).

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "plan/disaggregation.h"
#include "predict/disaggregated.h"
#include "sim/disaggregated_engine.h"

namespace ppsearch::report {

struct DisaggregatedPage {
  std::string spec_path;
  std::string calibration_source;
  std::string model_name;
  std::string gpu_name;
  double gpu_total_mib = 0;  // one GPU's memory: what a pool's batches may outgrow
  int workload_requests = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  const plan::DisaggregatedPlan* plan = nullptr;
  sim::KvTransferConfig transfer;
  std::vector<predict::DisaggregatedPrediction> points;  // one per load point
  // Parallel to points; empty: no intervals (--samples 0).
  std::vector<predict::DisaggregatedIntervals> intervals;
};

// The header, then per load point the client's figures (throughput per
// GPU of both pools, TTFT and TPOT percentiles), where TTFT went, and each
// pool's load with the bottleneck; the intervals when there are any; last
// each pool's server memory.
std::string RenderDisaggregatedPrediction(const DisaggregatedPage& page);

// {"simulated": true, "disaggregated": true, "calibration", "transfer":
// {kv_bytes_per_token, link_gbps, latency_us, handshake_us, backend,
// router_policy}, "points": [{concurrency, requests_completed,
// request_errors, input_tps, output_tps, output_tps_per_gpu, ttft_p50_s,
// ttft_p99_s, tpot_p50_ms, tpot_p99_ms, ttft_parts {prealloc_wait_s,
// handshake_s, prefill_s, transfer_s, decode_join_s}, transfer_share_of_ttft,
// bottleneck, pools {prefill, decode: {servers, gpus, busy_share,
// batch_fill, peak_mib, max_total_tokens, max_running_requests}},
// "intervals" (with intervals only): {sigma, pool_sigma, transfer_sigma,
// input_tps, output_tps, output_tps_per_gpu, ttft_p50_s, ttft_p99_s,
// tpot_p50_ms, tpot_p99_ms: [low, high]}}]}. Key names are a contract.
nlohmann::json DisaggregatedPredictionJson(const DisaggregatedPage& page);

}  // namespace ppsearch::report
