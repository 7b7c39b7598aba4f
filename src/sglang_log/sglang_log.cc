#include "sglang_log/sglang_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace ppsearch::sglang_log {
namespace {

constexpr double kMibPerGib = 1024.0;

// "foo_bar" -> "FooBar".
std::string Camel(const std::string& snake) {
  std::string out;
  bool up = true;
  for (char c : snake) {
    if (c == '_' || c == '-') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

constexpr const char* kScheduler = "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py";
constexpr const char* kPpMixin =
    "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler_pp_mixin.py";
constexpr const char* kModelRunner =
    "/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py";
constexpr const char* kLoader = "/sgl-workspace/sglang/python/sglang/srt/model_loader/loader.py";

}  // namespace

std::string FormatTime(std::time_t t) {
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string ScopePrefix(int pp_rank, int pp_size, int tp_rank, int tp_size, int ep_size) {
  std::string p;
  if (pp_size > 1) p += fmt::format(" PP{}", pp_rank);
  if (tp_size > 1) p += fmt::format(" TP{}", tp_rank);
  if (ep_size > 1) p += fmt::format(" EP{}", tp_rank / std::max(tp_size / ep_size, 1));
  return p;
}

std::string Line(std::time_t t, const std::string& prefix, const std::string& message) {
  return fmt::format("[{}{}] {}\n", FormatTime(t), prefix, message);
}

std::string ModelClassName(const model::ModelDesc& m) {
  const std::string& t = m.model_type.empty() ? m.family : m.model_type;
  if (t == "kimi_k3") return "KimiK3ForConditionalGeneration";
  if (t == "deepseek_v3" || t == "kimi_k2") return "DeepseekV3ForCausalLM";
  if (t == "kimi_linear") return "KimiLinearForCausalLM";
  if (t == "qwen3_moe") return "Qwen3MoeForCausalLM";
  if (t.empty()) return "ForCausalLM";
  return Camel(t) + "ForCausalLM";
}

LogSetup MakeLogSetup(const model::ModelDesc& model, const hardware::HardwareProfile& hw,
                      const memory::MemoryPlan& memory, int tp_size, int pp_size,
                      int64_t chunked_prefill_size, int64_t max_prefill_tokens,
                      int pp_max_micro_batch_size) {
  LogSetup s;
  s.model_class = ModelClassName(model);
  s.context_len = model.max_context;
  s.hidden_size = model.hidden;
  s.mla = model.mla.kv_lora_rank > 0;
  s.gpu_name = hw.gpu_name;
  s.gpu_total_mib = hw.memory_mib;
  s.tp_size = tp_size;
  s.pp_size = pp_size;
  s.chunked_prefill_size = chunked_prefill_size;
  s.max_prefill_tokens = max_prefill_tokens;
  s.pp_max_micro_batch_size = pp_max_micro_batch_size;
  s.memory = memory;
  return s;
}

std::vector<LogLine> StageStartupLines(const LogSetup& s, int stage) {
  std::vector<LogLine> lines;
  const memory::MemoryPlan& mem = s.memory;
  if (stage < 0 || stage >= static_cast<int>(mem.stages.size())) return lines;
  const std::string prefix = ScopePrefix(stage, s.pp_size, 0, s.tp_size, s.ep_size);
  const memory::StageMemory& st = mem.stages[stage];
  const double total_gib = s.gpu_total_mib / kMibPerGib;
  const double pre_load_gib =
      (mem.pre_load_free_mib > 0 ? mem.pre_load_free_mib : s.gpu_total_mib - memory::kRuntimeMib) /
      kMibPerGib;
  const double weight_gib = st.weight_mib / kMibPerGib;
  const double kv_gib = st.kv_pool_mib / kMibPerGib;
  const double after_weights = pre_load_gib - weight_gib;
  const double after_pool =
      after_weights - kv_gib - (st.state_pool_mib + st.request_table_mib) / kMibPerGib;
  const double after_graph = after_pool - st.graph_mib / kMibPerGib;
  lines.push_back({prefix, "Init torch distributed begin."});
  lines.push_back({prefix, fmt::format("Init torch distributed ends. elapsed=0.50 s, mem "
                                       "usage={:.2f} GB",
                                       total_gib - pre_load_gib)});
  lines.push_back({prefix, fmt::format("Load weight begin. avail mem={:.2f} GB", pre_load_gib)});
  lines.push_back(
      {prefix, fmt::format("Load weight end. elapsed={:.2f} s, type={}, avail "
                           "mem={:.2f} GB, mem usage={:.2f} GB.",
                           weight_gib / kLoadGibPerS, s.model_class, after_weights, weight_gib)});
  if (s.mla) {
    lines.push_back({prefix, fmt::format("KV Cache is allocated. dtype: torch.bfloat16, #tokens: "
                                         "{}, KV size: {:.2f} GB",
                                         mem.max_total_tokens, kv_gib)});
  } else {
    lines.push_back({prefix, fmt::format("KV Cache is allocated. dtype: torch.bfloat16, #tokens: "
                                         "{}, K size: {:.2f} GB, V size: {:.2f} GB",
                                         mem.max_total_tokens, kv_gib / 2, kv_gib / 2)});
  }
  lines.push_back({prefix, fmt::format("Memory pool end. avail mem={:.2f} GB", after_pool)});
  lines.push_back(
      {prefix, fmt::format("max_total_num_tokens={}, chunked_prefill_size={}, "
                           "max_prefill_tokens={}, max_running_requests={}, context_len={}, "
                           "available_gpu_mem={:.2f} GB",
                           mem.max_total_tokens, s.chunked_prefill_size, s.max_prefill_tokens,
                           mem.max_running_requests, s.context_len, after_graph)});
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

int64_t NcclTimeoutNumel(const LogSetup& s) {
  const int64_t tokens = s.chunked_prefill_size > 0 ? s.chunked_prefill_size : s.max_prefill_tokens;
  return tokens * s.hidden_size;
}

std::string FaultText(const std::string& kind, const LogSetup& s, std::time_t t,
                      const std::string& prefix) {
  const std::string stamp = fmt::format("[{}{}] ", FormatTime(t), prefix);
  const double total_gib = s.gpu_total_mib / kMibPerGib;
  if (kind == "oom") {
    // 2 GiB requested with 1.12 GiB free, 1.31 GiB reserved but unallocated: an observed OOM's
    // shape; the capacity is this GPU's.
    return stamp + "Scheduler hit an exception: Traceback (most recent call last):\n" +
           fmt::format("  File \"{}\", line 3046, in run_scheduler_process\n", kScheduler) +
           "    scheduler.event_loop_pp()\n" +
           fmt::format("  File \"{}\", line 118, in event_loop_pp\n", kPpMixin) +
           "    result = self.run_batch(self.cur_batch)\n" +
           fmt::format(
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has "
               "a total capacity of {:.2f} GiB of which 1.12 GiB is free. Including non-PyTorch "
               "memory, this process has {:.2f} GiB memory in use. Of the allocated memory {:.2f} "
               "GiB is allocated by PyTorch, and 1.31 GiB is reserved by PyTorch but unallocated. "
               "If reserved but unallocated memory is large try setting "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n",
               total_gib, total_gib - 1.12, total_gib - 1.12 - 1.31);
  }
  if (kind == "nccl") {
    const int64_t numel = NcclTimeoutNumel(s);
    const std::string when = FormatTime(t);
    return fmt::format(
               "[rank0]:[E{} ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
               "operation timeout: WorkNCCL(SeqNum=1187, OpType=ALLREDUCE, NumelIn={}, "
               "NumelOut={}, Timeout(ms)=600000) ran for 600041 milliseconds before timing out.\n",
               when, numel, numel) +
           fmt::format(
               "[rank0]:[E{} ProcessGroupNCCL.cpp:2168] [PG ID 2 PG GUID 3 Rank 0] Process group "
               "watchdog thread terminated with exception: NCCL error: remote process exited or "
               "there was a network error, NCCL version 2.27.3\n",
               when) +
           "ncclRemoteError: A call failed possibly due to a network error or a remote process "
           "exiting prematurely.\n";
  }
  if (kind == "traceback") {
    return stamp + "Scheduler hit an exception: Traceback (most recent call last):\n" +
           fmt::format("  File \"{}\", line 3046, in run_scheduler_process\n", kScheduler) +
           "    scheduler.event_loop_pp()\n" +
           fmt::format("  File \"{}\", line 97, in event_loop_pp\n", kPpMixin) +
           "    self.process_batch_result(mb, result)\n" +
           fmt::format("AssertionError: pp_max_micro_batch_size={} exceeded by running batch\n",
                       s.pp_max_micro_batch_size);
  }
  if (kind == "kv_transfer") {
    // As a Mooncake transfer to a decode server that went away logs it.
    return stamp +
           "Prefill transfer failed for request rank=0 "
           "req.rid='3f2a9c0d51e84b7c9a6e2d4f8b1c0e57' req.bootstrap_room=6593551520068383758 "
           "with exception KVTransferError(bootstrap_room=6593551520068383758): Decode instance "
           "could be dead, remote mooncake session 10.0.0.2:15295 is not alive\n";
  }
  if (kind == "engine_exit") {
    return fmt::format(
        "[{}] Received sigquit from a child process. It usually means the child failed.\n",
        FormatTime(t));
  }
  if (kind == "start") {
    return stamp + "Scheduler hit an exception: Traceback (most recent call last):\n" +
           fmt::format("  File \"{}\", line 3046, in run_scheduler_process\n", kScheduler) +
           "    scheduler = Scheduler(\n" +
           fmt::format("  File \"{}\", line 412, in initialize\n", kModelRunner) +
           "    self.load_model()\n" +
           fmt::format("  File \"{}\", line 871, in load_model\n", kModelRunner) +
           "    self.model = get_model(\n" +
           fmt::format("  File \"{}\", line 668, in load_model\n", kLoader) +
           "    self.load_weights_and_postprocess(model, weights, target_device)\n" +
           fmt::format(
               "RuntimeError: Error(s) in loading state_dict for {}: size mismatch for "
               "model.embed_tokens.weight: copying a param with shape torch.Size([{}]) from "
               "checkpoint, the shape in current model is torch.Size([{}]).\n",
               s.model_class, s.hidden_size, s.hidden_size / std::max(s.tp_size, 1)) +
           "[" + FormatTime(t) +
           "] Received sigquit from a child process. It usually means the child failed.\n";
  }
  return "";
}

}  // namespace ppsearch::sglang_log
