#pragma once
// A disaggregated deployment simulated as SGLang runs it: prefill servers
// and decode servers, each an OnlineEngine, joined by the KV transfer, with
// the router and the benchmark client in front. Facts about SGLang are from
// python/sglang/srt/disaggregation/ (v0.5.18): a request's life is
//  1. the router sends it to one prefill and one decode server;
//  2. the decode server preallocates its KV (DecodePreallocQueue: FIFO, a
//     request slot and `input + reserved` tokens beyond what the active
//     requests reserve), and only then does the prefill server's bootstrap
//     queue let it into its waiting queue (PrefillBootstrapQueue: "handshake
//     and preallocation");
//  3. the prefill server runs its prompt (chunked prefill, no decode) and
//     sends the KV over RDMA (send_kv_chunk);
//  4. once the transfer is done the decode server's next loop admits it in
//     a prebuilt batch, which streams the first token (computed by the
//     prefill server), and it decodes in the running batch from then on.
// TTFT is therefore the wait for preallocation + handshake + prefill queue
// and compute + transfer + the wait for the decode loop. Deterministic.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost_model.h"
#include "sim/engine.h"
#include "sim/scheduler.h"
#include "workload/request_record.h"
#include "workload/workload.h"

namespace ppsearch::sim {

// How a request's KV goes from its prefill server to its decode server.
// Each prefill server sends over its own NICs, one transfer after another
// (a FIFO link); a transfer starts when the prefill's last chunk is done.
struct KvTransferConfig {
  int64_t kv_bytes_per_token = 0;  // the prompt's KV per token, every layer, one copy
  double bytes_per_ns = 0;         // one prefill server's link rate (GB/s = bytes/ns)
  int64_t latency_ns = 0;          // per transfer: the write's completion notice
  // Bootstrap: the decode server's preallocation reaching the prefill
  // server (a message across nodes) before the prompt may be scheduled.
  int64_t handshake_ns = 0;
};

// The router's choice of servers (sgl-model-gateway's --policy in PD mode).
enum class RouterPolicy {
  kRoundRobin,  // round_robin: each pool's servers in turn
  // cache_aware, random, power_of_two: with prompts that share no prefix
  // they balance the load; modelled as the server with the fewest requests
  // in flight (ties: the lowest index).
  kLeastLoaded,
};

struct DisaggregatedConfig {
  SchedulerConfig prefill;  // one prefill server
  int prefill_instances = 1;
  SchedulerConfig decode;  // one decode server (decode.dp_size DP attention ranks)
  int decode_instances = 1;
  // Request slots per decode DP rank beyond max_running_requests, for
  // requests in transfer (--disaggregation-decode-extra-slots, resolved).
  int decode_extra_slots = 0;
  // --num-reserved-decode-tokens: KV each active request keeps free for its
  // decoding when another is preallocated.
  int64_t reserved_decode_tokens = 512;
  KvTransferConfig transfer;
  RouterPolicy router = RouterPolicy::kLeastLoaded;
};

// A decode server's (one DP rank's) preallocation, SGLang's
// DecodePreallocQueue.pop_preallocated: the head of the queue may take a
// request slot (max_running_requests + the extra slots) and `input +
// reserved` tokens (and its whole length beyond what the running requests
// could give back) within what the pool has free beyond the active
// requests' reserved decode tokens. One definition for the simulator and
// serve-sim's decode server.
struct DecodePool {
  int64_t max_total_tokens = 0;  // the KV pool
  int64_t used_tokens = 0;       // in the running batch now
  int64_t held_tokens = 0;       // preallocated, not yet in the running batch
  int active = 0;                // preallocated and not finished
  int slots = 0;                 // max_running_requests + extra slots
  int64_t reserved_decode_tokens = 512;
};
enum class Preallocation {
  kNow,        // it fits: preallocate it
  kWait,       // not yet: the queue waits for room
  kNeverFits,  // an empty pool could not hold it: SGLang aborts it
};
Preallocation Preallocate(const DecodePool& pool, int64_t input_tokens, int64_t output_tokens);

// Where one request's time to first token went, ns (-1: it never got there).
struct RequestPhases {
  int prefill_instance = -1;
  int decode_instance = -1;
  int64_t prealloc_wait_ns = -1;  // send to preallocation on the decode server
  int64_t prefill_ns = -1;        // handshake done to the prompt's end: queue and compute
  int64_t transfer_ns = -1;       // the prompt's end to the KV on the decode server
  int64_t decode_join_ns = -1;    // the KV there to the first token at the client
};

// One pool's servers together.
struct PoolSim {
  std::vector<StageStats> stages;  // per stage, summed over the pool's servers
  int servers = 0;
  int64_t micro_batches = 0;
  int64_t stretched_batches = 0;  // advanced in decode stretches (engine.h)
  int64_t peak_kv_tokens = 0;     // the fullest DP rank of any server
  int64_t peak_running_requests = 0;
  // The pool's servers' batches (EngineCounters'), for memory/served.h.
  std::vector<BatchShape> prefill_shapes;
  int64_t peak_decode_batch = 0;
};

struct DisaggregatedResult {
  std::vector<workload::RequestRecord> records;  // as the benchmark client sees them
  std::vector<RequestPhases> phases;             // parallel to records
  int64_t window_ns = 0;                         // first send to last completion
  PoolSim prefill;
  PoolSim decode;
  int64_t transfer_bytes = 0;
  int64_t transfer_busy_ns = 0;  // summed over the prefill servers' links
};

// Runs `planned` through the deployment, closed or open loop as Simulate
// does (engine.h): each request is sent at its planned arrival, and
// `concurrency` > 0 caps the requests in flight.
DisaggregatedResult SimulateDisaggregated(const DisaggregatedConfig& config,
                                          const CostModel& prefill_cost,
                                          const CostModel& decode_cost,
                                          const std::vector<workload::PlannedRequest>& planned,
                                          int concurrency, const SimOptions& options = {});

}  // namespace ppsearch::sim
