#pragma once
// Predicting a disaggregated deployment (plan/disaggregation.h) at one load
// point: each pool's server modelled as BuildPointModel models an
// aggregated one (its memory as SGLang sizes a PD server of its mode), the
// two joined by the KV transfer and driven by the router and the benchmark
// client (sim/disaggregated_engine.h). Pure: the same inputs give the same
// prediction.

#include <optional>
#include <string>

#include "cost/calibration.h"
#include "hardware/hardware.h"
#include "memory/memory_model.h"
#include "model/model.h"
#include "plan/disaggregation.h"
#include "predict/predict.h"
#include "sim/disaggregated_engine.h"
#include "spec/spec.h"
#include "stats/stats.h"
#include "uncertainty/model_error.h"

namespace ppsearch::predict {

// One pool at the point.
struct PoolPrediction {
  std::string role;  // "prefill" | "decode"
  int servers = 0;
  int gpus = 0;               // all of the pool's servers
  memory::MemoryPlan memory;  // one server's
  // One server's once the point's batches have run (PointPrediction's).
  memory::MemoryPlan served_memory;
  sim::SchedulerConfig scheduler;  // one server's (one DP rank's)
  // Busy share of the pool's GPUs over the window (mean over servers and
  // stages): how much of the pool the load keeps at work.
  double busy_share = 0;
  // Requests the pool holds on average (Little's law over the window: a
  // prefill server's from handshake to its prompt's end, queue included; a
  // decode server's from first token to last) against what its servers
  // admit at once (max_running_requests per DP rank): how full it runs.
  double batch_fill = 0;
};

// Where the completed requests' time to first token went, seconds (means).
struct TtftParts {
  double prealloc_wait_s = 0;  // waiting for the decode server's room
  double handshake_s = 0;      // bootstrap: the preallocation reaching the prefill server
  double prefill_s = 0;        // the prefill server's queue and compute
  double transfer_s = 0;       // the KV over the prefill server's link (queue and wire)
  double decode_join_s = 0;    // the KV there to the first token (the decode loop's turn)
  double total() const {
    return prealloc_wait_s + handshake_s + prefill_s + transfer_s + decode_join_s;
  }
};

struct DisaggregatedPrediction {
  int concurrency = 0;
  stats::SampleMetrics metrics;  // as the benchmark client sees the router
  sim::DisaggregatedResult sim;
  PoolPrediction prefill;
  PoolPrediction decode;
  TtftParts ttft_parts;
  double transfer_share_of_ttft = 0;  // ttft_parts.transfer_s / ttft_parts.total()
  // Which pool holds the throughput back: "prefill" when its GPUs are the
  // busier (busy_share) of the prefill pool's busy share and the decode
  // pool's batch fill, "decode" when the decode batches are the fuller;
  // "neither" when both are below half (the load, not a pool, sets the pace).
  std::string bottleneck;
};

// The model-form intervals (10th-90th percentile) of a disaggregated
// prediction. Its discrepancy adds, to the larger of the two pools' own
// (each pool's server at its distances from the calibration, as an
// aggregated point's), a distance of 1 for the parts no measurement has
// calibrated: the KV transfer, the preallocation between the pools and the
// router. The backtest's disaggregated cases are predicted uncalibrated and
// kept out of the model-form fit (backtest::FigureResult::deployment), so
// its scale is what the fit gives a distance it cannot identify: the
// largest fitted per-unit scale (uncertainty::FitModelForm).
//   sigma^2 = max(sigma_prefill, sigma_decode)^2 + (largest per-unit scale)^2
// `compared_*`: what a search compares candidates by, the pools' distances
// that every candidate of one search shares left out (uncertainty::Compared),
// the transfer's kept (no aggregated candidate has it).
struct DisaggregatedIntervals {
  double sigma = 0;
  double pool_sigma = 0;      // max(sigma_prefill, sigma_decode)
  double transfer_sigma = 0;  // the never-calibrated parts' scale x 1
  double compared_sigma = 0;
  uncertainty::Extrapolation prefill_distance, decode_distance;
  uncertainty::Interval input_tps, output_tps, ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s;
  uncertainty::Interval compared_input_tps, compared_output_tps, compared_ttft_p50_s;
};
DisaggregatedIntervals ModelFormIntervals(const DisaggregatedPrediction& p,
                                          const plan::DisaggregatedPlan& plan,
                                          const spec::Spec& spec,
                                          const hardware::HardwareProfile& hw,
                                          const cost::Calibration& calibration,
                                          const cost::ModelFormScales& scales);

// The transfer each request's KV makes: the model's KV per token (one copy,
// every layer) over the smaller of the two servers' NIC shares
// (hardware nic_gbps_per_gpu x GPUs), one inter-node latency for the write's
// notice and one for the bootstrap handshake.
sim::KvTransferConfig TransferFor(const plan::DisaggregatedPlan& plan,
                                  const model::ModelDesc& model,
                                  const hardware::HardwareProfile& hw);
// The same between a prefill server of `prefill_gpus` GPUs and a decode
// server of `decode_gpus` (serve-sim's prefill server learns the second from
// the decode server's handshake).
sim::KvTransferConfig TransferBetween(int prefill_gpus, int decode_gpus,
                                      const model::ModelDesc& model,
                                      const hardware::HardwareProfile& hw);

// Why the simulator cannot predict this deployment (a pool's layout it does
// not model, or a plan with errors), or nullopt when it can.
std::optional<std::string> DisaggregatedNotModelled(const plan::DisaggregatedPlan& plan);

// The deployment at `options.concurrency` with the spec's workload.
DisaggregatedPrediction PredictDisaggregated(const plan::DisaggregatedPlan& plan,
                                             const spec::Spec& spec, const model::ModelDesc& model,
                                             const hardware::HardwareProfile& hw,
                                             const cost::Calibration& calibration,
                                             const PointOptions& options);

}  // namespace ppsearch::predict
