#include "server/sglang_log.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace ppsearch::server {
namespace {

constexpr double kMibPerGib = 1024.0;

std::string Timestamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// "DeepseekV3ForCausalLM" style class name from the family.
std::string ModelClass(const model::ModelDesc& m) {
  if (m.family == "deepseek_v3") return "DeepseekV3ForCausalLM";
  if (m.family == "kimi_linear") return "KimiLinearForCausalLM";
  if (m.family == "qwen3_moe") return "Qwen3MoeForCausalLM";
  if (m.family == "llama") return "LlamaForCausalLM";
  return m.model_type.empty() ? "ForCausalLM" : m.model_type + "ForCausalLM";
}

}  // namespace

ServerLog::ServerLog(std::FILE* out) : out_(out ? out : stdout) {}

ServerLog::~ServerLog() {
  if (owned_) std::fclose(out_);
}

Result<std::unique_ptr<ServerLog>> ServerLog::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return MakeError("cannot open --log-file '" + path + "' for appending");
  auto log = std::make_unique<ServerLog>(f);
  log->owned_ = true;
  return log;
}

void ServerLog::Info(const std::string& message, const std::string& prefix) {
  std::lock_guard lock(mu_);
  std::fprintf(out_, "[%s%s] %s\n", Timestamp().c_str(), prefix.c_str(), message.c_str());
  std::fflush(out_);
}

void ServerLog::Raw(const std::string& text) {
  std::lock_guard lock(mu_);
  std::fputs(text.c_str(), out_);
  std::fflush(out_);
}

std::string ScopePrefix(int pp_rank, int pp_size, int tp_rank, int tp_size) {
  std::string p;
  if (pp_size > 1) p += fmt::format(" PP{}", pp_rank);
  if (tp_size > 1) p += fmt::format(" TP{}", tp_rank);
  return p;
}

std::vector<LogLine> StartupLines(const ServerArgs& args, const Deployment& d, int node) {
  std::vector<LogLine> lines;
  const auto& mem = d.memory;
  const double total_gib = d.hw.memory_mib / kMibPerGib;
  const double pre_load_gib =
      (mem.pre_load_free_mib > 0 ? mem.pre_load_free_mib : d.hw.memory_mib - memory::kRuntimeMib) /
      kMibPerGib;
  const bool mla = d.model.mla.kv_lora_rank > 0;
  for (int stage : StagesOnNode(d, node)) {
    const std::string prefix = ScopePrefix(stage, args.pp_size, 0, args.tp_size);
    const memory::StageMemory& s = mem.stages[stage];
    const double weight_gib = s.weight_mib / kMibPerGib;
    const double kv_gib = s.kv_pool_mib / kMibPerGib;
    const double after_weights = pre_load_gib - weight_gib;
    const double after_pool = after_weights - kv_gib - s.state_pool_mib / kMibPerGib;
    const double after_graph = after_pool - s.graph_mib / kMibPerGib;
    lines.push_back({prefix, "Init torch distributed begin."});
    lines.push_back(
        {prefix, fmt::format("Init torch distributed ends. elapsed=0.50 s, mem usage={:.2f} GB",
                             total_gib - pre_load_gib)});
    lines.push_back({prefix, fmt::format("Load weight begin. avail mem={:.2f} GB", pre_load_gib)});
    lines.push_back(
        {prefix, fmt::format("Load weight end. elapsed=1.00 s, type={}, avail mem={:.2f} GB, "
                             "mem usage={:.2f} GB.",
                             ModelClass(d.model), after_weights, weight_gib)});
    if (mla) {
      lines.push_back(
          {prefix,
           fmt::format("KV Cache is allocated. dtype: torch.bfloat16, #tokens: {}, KV size: "
                       "{:.2f} GB",
                       mem.max_total_tokens, kv_gib)});
    } else {
      lines.push_back(
          {prefix, fmt::format("KV Cache is allocated. dtype: torch.bfloat16, #tokens: {}, K size: "
                               "{:.2f} GB, V size: {:.2f} GB",
                               mem.max_total_tokens, kv_gib / 2, kv_gib / 2)});
    }
    lines.push_back({prefix, fmt::format("Memory pool end. avail mem={:.2f} GB", after_pool)});
    lines.push_back(
        {prefix,
         fmt::format("max_total_num_tokens={}, chunked_prefill_size={}, max_prefill_tokens={}, "
                     "max_running_requests={}, context_len={}, available_gpu_mem={:.2f} GB",
                     mem.max_total_tokens, d.scheduler.chunked_prefill_size,
                     d.scheduler.max_prefill_tokens, mem.max_running_requests, d.model.max_context,
                     after_graph)});
  }
  return lines;
}

std::string BatchLogger::Line(const sim::BatchLaunch& b) {
  const double usage = max_total_tokens_ > 0 ? static_cast<double>(b.kv_tokens_used) /
                                                   static_cast<double>(max_total_tokens_)
                                             : 0;
  if (b.is_prefill) {
    const double dt_s = last_prefill_ns_ < 0 ? 0 : (b.launch_ns - last_prefill_ns_) * 1e-9;
    last_prefill_ns_ = b.launch_ns;
    const double tps = dt_s > 0 ? static_cast<double>(b.new_tokens) / dt_s : 0;
    return fmt::format(
        "Prefill batch, #new-seq: {}, #new-token: {}, #cached-token: {}, token usage: {:.2f}, "
        "#running-req: {}, #queue-req: {}, #pending-token: 0, cuda graph: False, input throughput "
        "(token/s): {:.2f}",
        b.new_seqs, b.new_tokens, b.cached_tokens, usage, b.running_requests - b.new_seqs,
        b.queued_requests, tps);
  }
  decode_tokens_since_log_ += b.new_tokens;
  if (++decode_batches_ % decode_log_interval_ != 0) return "";
  const double dt_s = last_decode_log_ns_ < 0 ? 0 : (b.launch_ns - last_decode_log_ns_) * 1e-9;
  const double tps = dt_s > 0 ? static_cast<double>(decode_tokens_since_log_) / dt_s : 0;
  last_decode_log_ns_ = b.launch_ns;
  decode_tokens_since_log_ = 0;
  return fmt::format(
      "Decode batch, #running-req: {}, #token: {}, token usage: {:.2f}, cuda graph: True, gen "
      "throughput (token/s): {:.2f}, #queue-req: {}",
      b.running_requests, b.kv_tokens_used, usage, tps, b.queued_requests);
}

std::string FaultLogText(const std::string& kind, const Deployment& d) {
  const double total_gib = d.hw.memory_mib / kMibPerGib;
  if (kind == "oom") {
    return fmt::format(
        "[{}] Scheduler hit an exception: Traceback (most recent call last):\n"
        "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 3046, in "
        "run_scheduler_process\n"
        "    scheduler.event_loop_pp()\n"
        "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler_pp_mixin.py\", line "
        "118, in "
        "event_loop_pp\n"
        "    result = self.run_batch(self.cur_batch)\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity "
        "of {:.2f} GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has "
        "{:.2f} GiB "
        "memory in use. Of the allocated memory {:.2f} GiB is allocated by PyTorch, and 1.31 GiB "
        "is reserved "
        "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n",
        Timestamp(), total_gib, total_gib - 1.12, total_gib - 2.5);
  }
  if (kind == "nccl") {
    return fmt::format(
        "[rank0]:[E{} ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
        "timeout: "
        "WorkNCCL(SeqNum=1187, OpType=ALLREDUCE, NumelIn=7168, NumelOut=7168, Timeout(ms)=600000) "
        "ran for "
        "600041 milliseconds before timing out.\n"
        "[rank0]:[E{} ProcessGroupNCCL.cpp:2168] [PG ID 2 PG GUID 3 Rank 0] Process group watchdog "
        "thread "
        "terminated with exception: NCCL error: remote process exited or there was a network "
        "error, NCCL "
        "version 2.27.3\n"
        "ncclRemoteError: A call failed possibly due to a network error or a remote process "
        "exiting "
        "prematurely.\n",
        Timestamp(), Timestamp());
  }
  return fmt::format(
      "[{}] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 3046, in "
      "run_scheduler_process\n"
      "    scheduler.event_loop_pp()\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler_pp_mixin.py\", line 97, "
      "in "
      "event_loop_pp\n"
      "    self.process_batch_result(mb, result)\n"
      "AssertionError: pp_max_micro_batch_size={} exceeded by running batch\n",
      Timestamp(), d.pp_max_micro_batch_size);
}

}  // namespace ppsearch::server
