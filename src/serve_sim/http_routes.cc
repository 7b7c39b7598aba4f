// The HTTP endpoints of serve-sim (SGLang v0.5.18 http_server.py names and
// answers; sglang.md section 4).

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "serve_sim/api_json.h"
#include "serve_sim/sim_server.h"
#include "serve_sim/stream_pump.h"
#include "workload/workload.h"

namespace ppsearch::serve_sim {
namespace {

constexpr const char* kVersion = "0.5.18";
constexpr const char* kFlushText =
    "Cache flushed.\nPlease check backend logs for more details. (When there are running or "
    "waiting requests, the "
    "operation will not be performed.)\n";

void SendJson(HttpCall& call, int status, const nlohmann::json& j) {
  call.Reply(status, "application/json", j.dump());
}

// The seeded draw of --fault-http500 for request `seq`: the first draw of
// the one seeded generator (workload's SplitMix64) from a state that makes
// its first step land on seed x golden + seq, so each request's draw is
// independent of the order requests arrive in.
double UnitDraw(uint64_t seed, uint64_t seq) {
  constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;  // SplitMix64's step
  return workload::SplitMix64(seed * kGolden + seq - kGolden).NextUnit();
}

// Counts a request as in flight (for /flush_cache) for as long as it lives.
class ActiveGuard {
 public:
  explicit ActiveGuard(std::atomic<int>& n) : n_(n) { ++n_; }
  ~ActiveGuard() { --n_; }
  ActiveGuard(const ActiveGuard&) = delete;
  ActiveGuard& operator=(const ActiveGuard&) = delete;

 private:
  std::atomic<int>& n_;
};

// The progress a client sees: at most `cap` tokens (the engine runs a
// max_new_tokens = 0 request as one prefill token, which is not an output).
RequestProgress Capped(RequestProgress p, int64_t cap) {
  p.output_tokens = std::min(p.output_tokens, cap);
  if (cap == 0) p.first_token_unix_s = 0;  // prefill only: no output token
  return p;
}

// Whether a stream has an event to write for `p` after `sent` tokens. Once
// `cap` tokens are out it waits for the finish that comes with the last of
// them, so the last tokens and the finish go out in one chunk, as SGLang's do.
bool HasNews(const RequestProgress& p, int64_t sent, int64_t cap) {
  if (p.finished) return true;
  return p.output_tokens > sent && p.output_tokens < cap;
}

// A failed request's stream: SGLang's error event, then [DONE]. The OpenAI
// routes wrap their ErrorResponse in {"error": ...}.
StreamEvents StreamErrorEvents(const RequestProgress& p, bool openai) {
  const nlohmann::json error =
      openai ? nlohmann::json{{"error", OpenAiErrorJson(p.error, p.http_status)}}
             : ErrorJson(p.error, p.http_status);
  return {SseEvent(error) + kSseDone, true};
}

std::string RequestId(int seq) {
  return fmt::format("{:032x}", 0x5151000000000000ull + static_cast<uint64_t>(seq));
}

}  // namespace

void SimServer::Dispatch(const Call& call) {
  const HttpRequest& q = call->request();
  if (guard_) guard_->RequestStarted(q.remote_ip, q.remote_port);
  // A prefill server's bootstrap port (pd_routes.cc) asks for no key, as SGLang's.
  if (bootstrap_call(call)) return HandleBootstrap(call);
  // SGLang's --api-key (add_api_key_middleware): every route but /health*
  // and /metrics answers 401 without "Authorization: Bearer <key>".
  if (q.path.rfind("/health", 0) != 0 && q.path.rfind("/metrics", 0) != 0 &&
      !api_key_.Admits(q.Header("Authorization")))
    return SendJson(*call, 401, {{"error", "Unauthorized"}});
  if (args_.node_rank == 0) return HandleLeader(call);
  HandleFollower(call);
}

namespace {

// FastAPI's answers for a path no route has, and a route asked with another method.
void NotFound(HttpCall& call) { SendJson(call, 404, {{"detail", "Not Found"}}); }
void MethodNotAllowed(HttpCall& call) { SendJson(call, 405, {{"detail", "Method Not Allowed"}}); }

}  // namespace

void SimServer::HandleLeader(const Call& call) {
  const std::string& path = call->request().path;
  const std::string& method = call->request().method;
  const bool get = method == "GET";
  const bool post = method == "POST";
  if (path == "/health" || path == "/health_generate" || path == "/ping") {
    if (!get) return MethodNotAllowed(*call);
    return call->Reply(ready_ && !shutting_down() ? 200 : 503, "", "");
  }
  if (path == "/generate" || path == "/v1/completions" || path == "/v1/chat/completions") {
    if (!post) return MethodNotAllowed(*call);
    const std::string& body = call->request().body;
    if (path == "/generate") return HandleGenerate(call);
    if (path == "/v1/completions") {
      auto parsed = ParseCompletionRequest(body);
      if (!parsed) return ServeOpenAi(call, parsed.error().message, {}, false);
      return ServeOpenAi(call, "",
                         {parsed->model, parsed->prompt_tokens, parsed->max_tokens, parsed->stream,
                          parsed->include_usage},
                         false);
    }
    auto parsed = ParseChatRequest(body);
    if (!parsed) return ServeOpenAi(call, parsed.error().message, {}, true);
    return ServeOpenAi(call, "",
                       {parsed->model, parsed->prompt_tokens, parsed->max_tokens, parsed->stream,
                        parsed->include_usage},
                       true);
  }
  // A POST /flush_cache without Content-Length has no body (curl -X POST,
  // requests.post(url)): the loop does not wait for one.
  if (path == "/flush_cache") return get || post ? HandleFlushCache(call) : MethodNotAllowed(*call);
  using Handler = void (SimServer::*)(const Call&);
  static const std::map<std::string, Handler> kGets = {
      {"/server_info", &SimServer::HandleServerInfo},
      {"/get_server_info", &SimServer::HandleServerInfo},
      {"/model_info", &SimServer::HandleModelInfo},
      {"/get_model_info", &SimServer::HandleModelInfo},
      {"/v1/models", &SimServer::HandleModels},
      {"/gpu_memory", &SimServer::HandleGpuMemory}};
  const auto route = kGets.find(path);
  if (route == kGets.end()) return NotFound(*call);
  if (!get) return MethodNotAllowed(*call);
  if (path.rfind("/get_", 0) == 0)
    log_->Info(fmt::format(
        "Endpoint '{}' is deprecated and will be removed in a future version. Please use '{}' "
        "instead.",
        path, "/" + path.substr(5)));
  (this->*route->second)(call);
}

void SimServer::HandleFollower(const Call& call) {
  // launch_dummy_health_check_server: always 200 on nodes >= 1.
  const std::string& path = call->request().path;
  if (call->request().method != "GET") return NotFound(*call);
  if (path == "/health" || path == "/health_generate" || path == "/ping")
    return call->Reply(200, "", "");
  if (path == "/gpu_memory") return HandleGpuMemory(call);
  NotFound(*call);
}

void SimServer::HandleGpuMemory(const Call& call) {
  call->Reply(200, "text/csv",
              nvidia_smi::FormatGpuMemoryCsv(NodeGpuMemory(*d_, ServedMemory(*d_, served()),
                                                           args_.node_rank, args_.gpu_state_dir)));
}

void SimServer::HandleModels(const Call& call) {
  SendJson(*call, 200,
           ModelList(args_.model_path, static_cast<int64_t>(startup_unix_s_),
                     d_->scheduler.context_len));
}

void SimServer::HandleModelInfo(const Call& call) {
  SendJson(*call, 200,
           {{"model_path", args_.model_path},
            {"tokenizer_path", args_.model_path},
            {"is_generation", true},
            {"preferred_sampling_params", nullptr},
            {"weight_version", "default"},
            {"has_image_understanding", false},
            {"has_audio_understanding", false},
            {"model_type", d_->model.model_type},
            {"architectures", nlohmann::json::array({sglang_log::ModelClassName(d_->model)})}});
}

void SimServer::HandleFlushCache(const Call& call) {
  // The radix cache is flushed only when nothing is running or waiting.
  const bool idle = active_requests_.load() == 0 && (!engine_ || engine_->in_flight() == 0);
  call->Reply(idle ? 200 : 400, "text/plain", kFlushText);
}

void SimServer::HandleServerInfo(const Call& call) {
  constexpr double kGib = 1024.0;
  const memory::StageMemory& s0 = d_->memory.stages.front();
  nlohmann::json stages = nlohmann::json::array();
  for (size_t i = 0; i < d_->memory.stages.size(); ++i) {
    nlohmann::json stage = memory::StageMemoryToJson(d_->memory.stages[i]);
    stage["stage"] = i;
    stages.push_back(std::move(stage));
  }
  nlohmann::json internal = {
      {"pp_max_micro_batch_size", d_->pp_max_micro_batch_size},
      {"max_running_requests", d_->memory.max_running_requests},
      {"effective_max_running_requests_per_dp", d_->memory.max_running_requests},
      {"max_total_num_tokens", d_->memory.max_total_tokens},
      {"chunked_prefill_size", d_->scheduler.chunked_prefill_size},
      {"last_gen_throughput", last_gen_throughput_.load()},
      // A PD decode server's preallocation (SGLang logs them as
      // #prealloc-req and #transfer-req): waiting for room, and holding it.
      {"disaggregation_prealloc_queue", pd_prealloc_.size()},
      {"disaggregation_preallocated", pd_active_},
      {"memory_usage",
       {{"weight", s0.weight_mib / kGib},
        {"kvcache", (s0.kv_pool_mib + s0.state_pool_mib) / kGib},
        {"startup_available", d_->memory.pre_load_free_mib / kGib},
        {"token_capacity", d_->memory.max_total_tokens},
        {"token_capacity_swa", nullptr},
        {"graph", {{"decode", s0.graph_mib / kGib}}}}},
  };
  nlohmann::json j = ServerArgsJson(args_);
  j["mem_fraction_static"] = d_->memory.mem_fraction_static;  // resolved, as SGLang reports it
  j["max_running_requests"] = d_->memory.max_running_requests;
  j["chunked_prefill_size"] = d_->scheduler.chunked_prefill_size;
  j["max_total_num_tokens"] = d_->memory.max_total_tokens;
  j["startup_time"] = startup_unix_s_;
  j["internal_states"] = nlohmann::json::array({internal});
  j["version"] = kVersion;
  j["kv_events"] = nullptr;
  j["ppsearch_simulated"] = {{"layout", d_->plan.layout.Label()},
                             {"disaggregation_mode", args_.disaggregation_mode},
                             {"hardware", d_->hw.name},
                             {"gpu_name", d_->hw.gpu_name},
                             {"calibration", d_->calibration.source},
                             {"time_scale", args_.time_scale},
                             {"stages", stages}};
  SendJson(*call, 200, j);
}

bool SimServer::InjectRequestFault(int seq, const Call& call) {
  const FaultArgs& f = args_.fault;
  if (f.hang_after_requests > 0 && seq == f.hang_after_requests + 1) {
    // Never answers: the call stays open until the client gives up or the
    // server shuts down and closes its connection.
    return true;
  }
  if (f.http500_fraction > 0 && UnitDraw(f.seed, static_cast<uint64_t>(seq)) < f.http500_fraction) {
    SendJson(*call, 500, ErrorJson("Internal server error (injected by --fault-http500)", 500));
    OnRequestDone();
    return true;
  }
  return false;
}

void SimServer::OnRequestDone() {
  const int done = ++requests_done_;
  if (done == 1 && !args_.fault.log.empty() && !fault_log_written_.exchange(true))
    log_->Raw(FaultLogText(args_.fault.log, *d_));
  if (args_.nnodes > 1) leader_.Answered(done);
  if (args_.fault.die_after_requests > 0 && done == args_.fault.die_after_requests)
    DieAfterRequests();
  if (args_.fault.exit_after_requests > 0 && done == args_.fault.exit_after_requests) {
    log_->Info(fmt::format("Exiting after {} requests (--fault-exit-after).", done));
    Shutdown(ServeOutcome::kFaultExit, fmt::format("--fault-exit-after {} reached", done));
  }
}

void SimServer::HandleGenerate(const Call& call) {
  auto guard = std::make_shared<ActiveGuard>(active_requests_);
  if (!ready_) return SendJson(*call, 503, ErrorJson("The server is not ready yet.", 503));
  auto parsed = ParseGenerateRequest(call->request().body);
  if (!parsed) return SendJson(*call, 400, ErrorJson(parsed.error().message, 400));
  const std::string too_long =
      ContextLengthError(parsed->prompt_tokens, parsed->max_new_tokens, d_->scheduler.context_len);
  if (!too_long.empty()) return SendJson(*call, 400, ErrorJson(too_long, 400));
  const int seq = ++request_seq_;
  if (InjectRequestFault(seq, call)) return;
  const GenerateRequest g = *parsed;
  const int64_t cap = g.max_new_tokens;
  GenerateState base;
  base.id = g.rid.empty() ? RequestId(seq) : g.rid;
  base.prompt_tokens = g.prompt_tokens;

  auto state_of = [base](const RequestProgress& p, double first_sent) {
    GenerateState s = base;
    s.completion_tokens = p.output_tokens;
    s.finished = p.finished && p.ok;
    s.first_token_ts = p.first_token_unix_s;
    s.first_sent_ts = first_sent;
    if (s.finished) {
      s.e2e_latency_s = p.finish_unix_s - p.submit_unix_s;
      s.sim_ttft_s = (p.first_token_sim_ns - p.submit_sim_ns) * 1e-9;
      s.sim_e2e_latency_s = (p.finish_sim_ns - p.submit_sim_ns) * 1e-9;
    }
    return s;
  };

  if (!g.stream) {
    HttpCall* c = call.get();  // alive while it is answered
    return AnswerWhenFinished(
        call, g.prompt_tokens, cap,
        [c, state_of](const RequestProgress& p) {
          if (!p.ok) return SendJson(*c, p.http_status, ErrorJson(p.error, p.http_status));
          SendJson(*c, 200, GenerateChunk(state_of(p, UnixNowS())));
        },
        guard);
  }

  int64_t sent = 0;
  double first_sent = 0;
  StreamRenderer render = [state_of, cap, sent, first_sent](const RequestProgress& raw) mutable {
    const RequestProgress p = Capped(raw, cap);
    if (p.finished && !p.ok) return StreamErrorEvents(p, false);
    if (!HasNews(p, sent, cap)) return StreamEvents{};
    if (first_sent == 0) first_sent = UnixNowS();
    sent = p.output_tokens;
    StreamEvents e{SseEvent(GenerateChunk(state_of(p, first_sent))), p.finished};
    if (e.last) e.text += kSseDone;
    return e;
  };
  Stream(call, g.prompt_tokens, cap, render, guard);
}

void SimServer::Stream(const Call& call, int64_t prompt_tokens, int64_t cap, StreamRenderer render,
                       std::shared_ptr<void> guard) {
  auto handle = BeginRequest(call, prompt_tokens, cap);
  if (!handle) return;
  http_->Kick();
  // The client went away (or the server stops): SGLang aborts the request.
  auto abort = [this, handle, guard] {
    engine_->Abort(*handle);
    DropPdFetch(*handle);
    http_->Kick();  // its place may go to a waiting request
  };
  PumpStream(*http_, call, handle, std::move(render), abort, [this, guard] { OnRequestDone(); });
}

void SimServer::AnswerWhenFinished(const Call& call, int64_t prompt_tokens, int64_t cap,
                                   std::function<void(const RequestProgress&)> answer,
                                   std::shared_ptr<void> guard) {
  auto handle = BeginRequest(call, prompt_tokens, cap);
  if (!handle) return;
  http_->Kick();
  auto abort = [this, handle, guard] {
    engine_->Abort(*handle);
    DropPdFetch(*handle);
    http_->Kick();
  };
  FollowOnLoop(
      *http_, call, handle,
      [this, cap, answer = std::move(answer), guard](const RequestProgress& raw) {
        if (!raw.finished) return false;
        answer(Capped(raw, cap));
        OnRequestDone();
        return true;
      },
      abort);
}

void SimServer::ServeOpenAi(const Call& call, const std::string& parse_error,
                            const OpenAiRequest& c, bool chat) {
  auto guard = std::make_shared<ActiveGuard>(active_requests_);
  if (!ready_) return SendJson(*call, 503, OpenAiErrorJson("The server is not ready yet.", 503));
  if (!parse_error.empty()) return SendJson(*call, 400, OpenAiErrorJson(parse_error, 400));
  const std::string too_long =
      ContextLengthError(c.prompt_tokens, c.max_tokens, d_->scheduler.context_len);
  if (!too_long.empty()) return SendJson(*call, 400, OpenAiErrorJson(too_long, 400));
  const int seq = ++request_seq_;
  if (InjectRequestFault(seq, call)) return;
  const std::string model = c.model.empty() ? args_.model_path : c.model;
  const std::string id = (chat ? "chatcmpl-" : "cmpl-") + RequestId(seq);
  const auto created = static_cast<int64_t>(UnixNowS());
  const int64_t cap = c.max_tokens;
  if (!c.stream) {
    HttpCall* r = call.get();  // alive while it is answered
    return AnswerWhenFinished(
        call, c.prompt_tokens, cap,
        [r, c, id, created, model, chat](const RequestProgress& p) {
          if (!p.ok) return SendJson(*r, p.http_status, OpenAiErrorJson(p.error, p.http_status));
          SendJson(*r, 200,
                   chat ? ChatResponse(id, created, model, c.prompt_tokens, p.output_tokens)
                        : CompletionResponse(id, created, model, c.prompt_tokens, p.output_tokens));
        },
        guard);
  }

  int64_t sent = 0;
  bool role_sent = false;
  StreamRenderer render = [c, id, created, model, cap, chat, sent,
                           role_sent](const RequestProgress& raw) mutable {
    const RequestProgress p = Capped(raw, cap);
    if (p.finished && !p.ok) return StreamErrorEvents(p, true);
    if (!HasNews(p, sent, cap)) return StreamEvents{};
    StreamEvents e{"", p.finished};
    if (chat && !role_sent) {  // SGLang's first chat chunk: the role, empty content
      role_sent = true;
      e.text += SseEvent(ChatChunk(id, created, model, true, ""));
    }
    const std::string delta = OutputText(p.output_tokens - sent);
    sent = p.output_tokens;
    if (!chat) {
      e.text += SseEvent(CompletionChunk(id, created, model, delta, p.finished));
    } else {
      // The chat adapter sends content, then the finish reason in a chunk of its own.
      if (!delta.empty()) e.text += SseEvent(ChatChunk(id, created, model, false, delta));
      if (p.finished) e.text += SseEvent(ChatFinishChunk(id, created, model));
    }
    if (!e.last) return e;
    if (c.include_usage)
      e.text += SseEvent(chat ? ChatUsageChunk(id, created, model, c.prompt_tokens, sent)
                              : CompletionUsageChunk(id, created, model, c.prompt_tokens, sent));
    e.text += kSseDone;
    return e;
  };
  Stream(call, c.prompt_tokens, cap, render, guard);
}

}  // namespace ppsearch::serve_sim
