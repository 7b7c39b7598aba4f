#pragma once
// The one writer of SGLang's log texts, shared by the simulated sample engine
// (run/sim_sample.cc) and serve-sim (serve_sim/): SGLang's line format
// ("[%Y-%m-%d %H:%M:%S{prefix}] message", utils/common.py configure_logger),
// the startup lines of a pipeline stage, the per-batch lines and the failure
// blocks. Every number comes from the model, the GPU profile and the memory
// plan of the layout; the functions are pure (the caller passes the time).

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "memory/memory_model.h"
#include "model/model.h"
#include "sim/online_engine.h"

namespace ppsearch::sglang_log {

// "YYYY-mm-dd HH:MM:SS" in local time, as SGLang's logger prints it.
std::string FormatTime(std::time_t t);

// SGLang's scheduler prefix (scheduler.py run_scheduler_process): " PP{pp}",
// " TP{tp}" and " EP{moe_ep_rank}", each only when that size > 1, where
// moe_ep_rank = tp_rank / (tp_size / ep_size).
std::string ScopePrefix(int pp_rank, int pp_size, int tp_rank, int tp_size, int ep_size = 1);

// "[<time><prefix>] <message>\n".
std::string Line(std::time_t t, const std::string& prefix, const std::string& message);

// The model class SGLang loads (config.json "architectures"[0]) for a model
// type: "KimiK3ForConditionalGeneration" for kimi_k3, "DeepseekV3ForCausalLM"
// for deepseek_v3 and kimi_k2, "Qwen3MoeForCausalLM" for qwen3_moe, ...;
// an unknown type "foo_bar" reads "FooBarForCausalLM".
std::string ModelClassName(const model::ModelDesc& m);

// What the log texts of one deployment are derived from.
struct LogSetup {
  std::string model_class;
  int64_t context_len = 0;  // the model's max_position_embeddings
  int hidden_size = 0;
  bool mla = false;  // MLA models log one KV size, others K and V sizes
  std::string gpu_name;
  double gpu_total_mib = 0;  // the hardware profile's capacity
  int tp_size = 1;
  int pp_size = 1;
  int ep_size = 1;                      // set by the caller; MakeLogSetup leaves 1
  int64_t chunked_prefill_size = 8192;  // <= 0: chunking disabled
  int64_t max_prefill_tokens = 16384;
  int pp_max_micro_batch_size = 0;
  memory::MemoryPlan memory;
};

LogSetup MakeLogSetup(const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                      const memory::MemoryPlan& memory, int tp_size, int pp_size,
                      int64_t chunked_prefill_size, int64_t max_prefill_tokens,
                      int pp_max_micro_batch_size);

struct LogLine {
  std::string prefix;  // " PP1 TP0 EP0" or ""
  std::string message;
};

// The startup lines pipeline stage `stage` prints after distributed init, in
// SGLang's order: distributed init, weight load, KV pool, memory pool end and
// the scheduler summary. Weight loading is timed at kLoadGibPerS.
inline constexpr double kLoadGibPerS = 2.0;
std::vector<LogLine> StageStartupLines(const LogSetup& s, int stage);

// Tracks throughput between per-batch lines and formats them as SGLang's
// metrics_reporter does.
class BatchLogger {
 public:
  BatchLogger(int64_t max_total_tokens, int decode_log_interval)
      : max_total_tokens_(max_total_tokens), decode_log_interval_(decode_log_interval) {}
  // The line to print for this launch, or "" (decode lines every
  // decode_log_interval decode batches).
  std::string Line(const sim::BatchLaunch& launch);

 private:
  int64_t max_total_tokens_;
  int decode_log_interval_;
  int64_t decode_batches_ = 0;
  int64_t last_prefill_ns_ = -1;
  int64_t last_decode_log_ns_ = -1;
  int64_t decode_tokens_since_log_ = 0;
};

// The all-reduce a hung NCCL watchdog reports: one prefill chunk of hidden
// states, chunk tokens x hidden size (max_prefill_tokens when chunking is off).
int64_t NcclTimeoutNumel(const LogSetup& s);

// A realistic failure block, every line ending in '\n', stamped `t`, raised on
// global rank 0 (GPU 0, stage 0, prefix `prefix`):
//   "oom"        CUDA out of memory in the scheduler (capacity: the GPU profile's)
//   "nccl"       NCCL watchdog timeout of an all-reduce (NcclTimeoutNumel)
//   "traceback"  a scheduler exception in event_loop_pp
//   "engine_exit" the launcher's "Received sigquit from a child process" line
//   "start"      a RuntimeError while loading the weights, then the launcher's sigquit line
//   "kv_transfer" a prefill server's failed KV transfer to its decode server
//                (SGLang's disaggregation/prefill.py warning, the request aborted)
// Unknown kinds give "".
std::string FaultText(const std::string& kind, const LogSetup& s, std::time_t t,
                      const std::string& prefix);

}  // namespace ppsearch::sglang_log
