// The HTTP endpoints of serve-sim (SGLang v0.5.18 http_server.py names and
// answers; sglang.md section 4).

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "server/api.h"
#include "server/sim_server.h"
#include "server/stream_pump.h"
#include "workload/workload.h"

namespace ppsearch::server {
namespace {

constexpr const char* kVersion = "0.5.18";
constexpr const char* kFlushText =
    "Cache flushed.\nPlease check backend logs for more details. (When there are running or "
    "waiting requests, the "
    "operation will not be performed.)\n";
constexpr auto kPoll = std::chrono::milliseconds(200);

void SendJson(httplib::Response& res, int status, const nlohmann::json& j) {
  res.status = status;
  res.set_content(j.dump(), "application/json");
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

// The final progress of a non-streaming request (or unfinished at shutdown).
RequestProgress FinalProgress(RequestHandle& h, int64_t cap, const std::atomic<bool>& stopping) {
  RequestProgress p;
  do p = h.WaitBeyond(INT64_MAX, kPoll);
  while (!p.finished && !stopping);
  return Capped(p, cap);
}

// POST bodies are read only when the client says how long they are: a POST
// without Content-Length (curl -X POST, requests.post(url)) has no body, and
// reading one would wait for the client to close.
bool HasBody(const httplib::Request& req) {
  return req.has_header("Content-Length") || req.get_header_value("Transfer-Encoding") == "chunked";
}

std::string RequestId(int seq) {
  return fmt::format("{:032x}", 0x5151000000000000ull + static_cast<uint64_t>(seq));
}

}  // namespace

void SimServer::AddConnectionHooks() {
  http_->set_pre_routing_handler([this](const httplib::Request& q, httplib::Response& r) {
    if (guard_) guard_->RequestStarted(q.remote_addr, q.remote_port);
    if (q.path.rfind("/health", 0) == 0 || q.path.rfind("/metrics", 0) == 0 ||
        api_key_.Admits(q.get_header_value("Authorization")))
      return httplib::Server::HandlerResponse::Unhandled;
    SendJson(r, 401, {{"error", "Unauthorized"}});
    return httplib::Server::HandlerResponse::Handled;
  });
  http_->set_logger([this](const httplib::Request& q, const httplib::Response&) {
    if (guard_) guard_->RequestEnded(q.remote_addr, q.remote_port);
  });
}

void SimServer::AddLeaderRoutes() {
  // SGLang's --api-key (add_api_key_middleware): every route but /health*
  // and /metrics answers 401 without "Authorization: Bearer <key>".
  for (const ExtraFlag& f : args_.extra_flags)
    if (f.name == "api-key" && f.value && !f.value->empty()) api_key_ = ApiKeyCheck(*f.value);
  auto health = [this](const httplib::Request&, httplib::Response& res) {
    res.status = ready_ && !shutting_down() ? 200 : 503;
  };
  http_->Get("/health", health);
  http_->Get("/health_generate", health);
  http_->Get("/ping", health);
  http_->Get("/server_info", [this](const auto& q, auto& r) { HandleServerInfo(q, r); });
  http_->Get("/get_server_info", [this](const auto& q, auto& r) {
    log_->Info(
        "Endpoint '/get_server_info' is deprecated and will be removed in a future version. Please "
        "use "
        "'/server_info' instead.");
    HandleServerInfo(q, r);
  });
  http_->Get("/model_info", [this](const auto& q, auto& r) { HandleModelInfo(q, r); });
  http_->Get("/get_model_info", [this](const auto& q, auto& r) {
    log_->Info(
        "Endpoint '/get_model_info' is deprecated and will be removed in a future version. Please "
        "use '/model_info' instead.");
    HandleModelInfo(q, r);
  });
  http_->Get("/v1/models", [this](const auto& q, auto& r) { HandleModels(q, r); });
  http_->Post("/generate", [this](const auto& q, auto& r) { HandleGenerate(q, r); });
  http_->Post("/v1/completions", [this](const auto& q, auto& r) { HandleCompletions(q, r); });
  http_->Post("/v1/chat/completions",
              [this](const auto& q, auto& r) { HandleChatCompletions(q, r); });
  http_->Get("/flush_cache", [this](const auto& q, auto& r) { HandleFlushCache(q, r); });
  http_->Post("/flush_cache", [this](const httplib::Request& q, httplib::Response& r,
                                     const httplib::ContentReader& read) {
    if (HasBody(q)) read([](const char*, size_t) { return true; });  // discarded
    HandleFlushCache(q, r);
  });
  http_->Get("/gpu_memory", [this](const auto& q, auto& r) { HandleGpuMemory(q, r); });
}

void SimServer::AddFollowerRoutes() {
  // launch_dummy_health_check_server: always 200 on nodes >= 1.
  auto ok = [](const httplib::Request&, httplib::Response& res) { res.status = 200; };
  http_->Get("/health", ok);
  http_->Get("/health_generate", ok);
  http_->Get("/ping", ok);
  http_->Get("/gpu_memory", [this](const auto& q, auto& r) { HandleGpuMemory(q, r); });
}

void SimServer::HandleGpuMemory(const httplib::Request&, httplib::Response& res) {
  res.status = 200;
  res.set_content(gpu::FormatGpuMemoryCsv(NodeGpuMemory(*d_, args_.node_rank)), "text/csv");
}

void SimServer::HandleModels(const httplib::Request&, httplib::Response& res) {
  SendJson(res, 200,
           ModelList(args_.model_path, static_cast<int64_t>(startup_unix_s_),
                     d_->scheduler.context_len));
}

void SimServer::HandleModelInfo(const httplib::Request&, httplib::Response& res) {
  SendJson(res, 200,
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

void SimServer::HandleFlushCache(const httplib::Request&, httplib::Response& res) {
  // The radix cache is flushed only when nothing is running or waiting.
  const bool idle = active_requests_.load() == 0 && (!engine_ || engine_->in_flight() == 0);
  res.status = idle ? 200 : 400;
  res.set_content(kFlushText, "text/plain");
}

void SimServer::HandleServerInfo(const httplib::Request&, httplib::Response& res) {
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
  j["ppsearch_simulated"] = {
      {"layout", d_->plan.layout.Label()}, {"hardware", d_->hw.name},
      {"gpu_name", d_->hw.gpu_name},       {"calibration", d_->calibration.source},
      {"time_scale", args_.time_scale},    {"stages", stages}};
  SendJson(res, 200, j);
}

bool SimServer::InjectRequestFault(int seq, httplib::Response& res) {
  const FaultArgs& f = args_.fault;
  if (f.hang_after_requests > 0 && seq == f.hang_after_requests + 1) {
    // Never answers: held until the server shuts down, then the connection closes.
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return shutting_down(); });
    res.status = 503;
    return true;
  }
  if (f.http500_fraction > 0 && UnitDraw(f.seed, static_cast<uint64_t>(seq)) < f.http500_fraction) {
    SendJson(res, 500, ErrorJson("Internal server error (injected by --fault-http500)", 500));
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

void SimServer::HandleGenerate(const httplib::Request& req, httplib::Response& res) {
  auto guard = std::make_shared<ActiveGuard>(active_requests_);
  if (!ready_) return SendJson(res, 503, ErrorJson("The server is not ready yet.", 503));
  auto parsed = ParseGenerateRequest(req.body);
  if (!parsed) return SendJson(res, 400, ErrorJson(parsed.error().message, 400));
  const std::string too_long =
      ContextLengthError(parsed->prompt_tokens, parsed->max_new_tokens, d_->scheduler.context_len);
  if (!too_long.empty()) return SendJson(res, 400, ErrorJson(too_long, 400));
  const int seq = ++request_seq_;
  if (InjectRequestFault(seq, res)) return;
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
    auto handle = engine_->Submit(g.prompt_tokens, std::max<int64_t>(cap, 1));
    const RequestProgress p = FinalProgress(*handle, cap, shutting_down_);
    if (!p.finished || !p.ok) {
      SendJson(res, p.finished ? p.http_status : 503,
               ErrorJson(p.finished ? p.error : "The server is shutting down.",
                         p.finished ? p.http_status : 503));
    } else {
      SendJson(res, 200, GenerateChunk(state_of(p, UnixNowS())));
    }
    OnRequestDone();
    return;
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
  Stream(res, g.prompt_tokens, cap, render, guard);
}

void SimServer::Stream(httplib::Response& res, int64_t prompt_tokens, int64_t cap,
                       StreamRenderer render, std::shared_ptr<void> guard) {
  // The request reaches the engine only once this thread is ready to stream
  // it, as SGLang's scheduler sees a request only after its HTTP layer took
  // it in: submitted earlier, a first token released while this thread waits
  // for a core would be stamped before it could be written.
  res.set_chunked_content_provider("text/event-stream", [this, prompt_tokens, cap, render, guard](
                                                            size_t, httplib::DataSink& sink) {
    auto handle = engine_->Submit(prompt_tokens, std::max<int64_t>(cap, 1));
    if (!PumpStream(*handle, sink, render, shutting_down_)) {
      // The client went away (or the server stops): SGLang aborts the request.
      engine_->Abort(*handle);
      return false;  // closes
    }
    sink.done();
    OnRequestDone();
    return true;
  });
}

void SimServer::HandleCompletions(const httplib::Request& req, httplib::Response& res) {
  auto parsed = ParseCompletionRequest(req.body);
  if (!parsed) return ServeOpenAi(req, res, parsed.error().message, {}, false);
  OpenAiRequest r{parsed->model, parsed->prompt_tokens, parsed->max_tokens, parsed->stream,
                  parsed->include_usage};
  ServeOpenAi(req, res, "", r, false);
}

void SimServer::HandleChatCompletions(const httplib::Request& req, httplib::Response& res) {
  auto parsed = ParseChatRequest(req.body);
  if (!parsed) return ServeOpenAi(req, res, parsed.error().message, {}, true);
  OpenAiRequest r{parsed->model, parsed->prompt_tokens, parsed->max_tokens, parsed->stream,
                  parsed->include_usage};
  ServeOpenAi(req, res, "", r, true);
}

void SimServer::ServeOpenAi(const httplib::Request&, httplib::Response& res,
                            const std::string& parse_error, const OpenAiRequest& c, bool chat) {
  auto guard = std::make_shared<ActiveGuard>(active_requests_);
  if (!ready_) return SendJson(res, 503, OpenAiErrorJson("The server is not ready yet.", 503));
  if (!parse_error.empty()) return SendJson(res, 400, OpenAiErrorJson(parse_error, 400));
  const std::string too_long =
      ContextLengthError(c.prompt_tokens, c.max_tokens, d_->scheduler.context_len);
  if (!too_long.empty()) return SendJson(res, 400, OpenAiErrorJson(too_long, 400));
  const int seq = ++request_seq_;
  if (InjectRequestFault(seq, res)) return;
  const std::string model = c.model.empty() ? args_.model_path : c.model;
  const std::string id = (chat ? "chatcmpl-" : "cmpl-") + RequestId(seq);
  const auto created = static_cast<int64_t>(UnixNowS());
  const int64_t cap = c.max_tokens;
  if (!c.stream) {
    auto handle = engine_->Submit(c.prompt_tokens, std::max<int64_t>(cap, 1));
    const RequestProgress p = FinalProgress(*handle, cap, shutting_down_);
    if (!p.finished || !p.ok) {
      const int status = p.finished ? p.http_status : 503;
      SendJson(res, status,
               OpenAiErrorJson(p.finished ? p.error : "The server is shutting down.", status));
    } else {
      SendJson(res, 200,
               chat ? ChatResponse(id, created, model, c.prompt_tokens, p.output_tokens)
                    : CompletionResponse(id, created, model, c.prompt_tokens, p.output_tokens));
    }
    OnRequestDone();
    return;
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
  Stream(res, c.prompt_tokens, cap, render, guard);
}

}  // namespace ppsearch::server
