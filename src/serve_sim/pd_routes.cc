// serve-sim as a server of a disaggregated deployment (SGLang's
// --disaggregation-mode prefill / decode, python/sglang/srt/disaggregation/
// at v0.5.18), played over real HTTP between the processes:
//  - the router sends each request to one prefill and one decode server
//    with the same bootstrap_room, and bootstrap_host/bootstrap_port naming
//    the prefill server's bootstrap port;
//  - the decode server first preallocates the request's KV (a slot and its
//    tokens, sim::Preallocate: the simulator's rule), waiting in FIFO order
//    for room, then shakes hands there: GET /kv/<room>/<its GPUs>. The
//    prefill server's request waits for it (PrefillBootstrapQueue), for at
//    most SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT, then runs its prompt
//    alone (max_new_tokens 1: the first token is computed here);
//  - its KV then crosses the prefill server's link, one transfer after
//    another, taking what the simulator's transfer takes
//    (predict::TransferBetween), scaled to the wall clock; the handshake is
//    answered when it has arrived;
//  - the decode server, given the answer, admits the request with its
//    prompt computed (the running batch takes it when it has room) and
//    streams its tokens to the router. No answer within
//    SGLANG_DISAGGREGATION_WAITING_TIMEOUT fails it.
// Failures are logged in SGLang's words ("Prefill bootstrap failed for
// request", "Decode transfer failed for request"), which the log scan knows.

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "plan/disaggregation.h"
#include "predict/disaggregated.h"
#include "serve_sim/sim_server.h"
#include "sim/disaggregated_engine.h"

namespace ppsearch::serve_sim {

struct SimServer::PdRoom {
  int64_t prompt_tokens = -1;  // -1: its request has not come
  std::string rid;
  std::weak_ptr<RequestHandle> handle;
  std::shared_ptr<HttpCall> handshake;  // the decode server's GET, until answered
  int decode_gpus = 0;
  bool started = false;            // the prompt is admitted
  HttpFront::TimerId timeout = 0;  // the bootstrap timeout's timer, until it starts
};

namespace {

double SteadyS() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SendPdJson(HttpCall& call, int status, const nlohmann::json& j) {
  call.Reply(status, "application/json", j.dump());
}

std::string RequestNames(const std::string& rid, uint64_t room) {
  return fmt::format("rank=0 req.rid='{}' req.bootstrap_room={}", rid, room);
}

}  // namespace

bool SimServer::bootstrap_call(const Call& call) const {
  return args_.disaggregation_mode == "prefill" &&
         call->request().local_port == args_.disaggregation_bootstrap_port;
}

std::shared_ptr<RequestHandle> SimServer::BeginRequest(const Call& call, int64_t prompt_tokens,
                                                       int64_t cap) {
  const std::string& mode = args_.disaggregation_mode;
  if (mode == "null") return engine_->Submit(prompt_tokens, std::max<int64_t>(cap, 1));
  Result<PdFields> pd = ParsePdFields(call->request().body);
  if (pd.ok() && !pd->room)
    pd = MakeError(fmt::format(
        "bootstrap_room is required: a server started with --disaggregation-mode {} serves the "
        "requests of SGLang's PD router (python3 -m sglang_router.launch_router "
        "--pd-disaggregation), not clients",
        mode));
  if (pd.ok() && mode == "decode" && (pd->host.empty() || pd->port == 0))
    pd = MakeError("bootstrap_host and bootstrap_port are required on a decode server");
  if (!pd.ok()) {
    SendPdJson(*call, 400, ErrorJson(pd.error().message, 400));
    return nullptr;
  }
  return mode == "prefill" ? BeginPrefill(*pd, prompt_tokens)
                           : BeginDecode(*pd, prompt_tokens, cap);
}

std::shared_ptr<RequestHandle> SimServer::BeginPrefill(const PdFields& pd, int64_t prompt_tokens) {
  auto handle = engine_->Reserve();
  const uint64_t id = *pd.room;
  std::shared_ptr<PdRoom>& room = pd_rooms_[id];
  if (!room) room = std::make_shared<PdRoom>();
  if (room->prompt_tokens >= 0) {
    engine_->Fail(*handle, 400, fmt::format("bootstrap_room {} is in use", id));
    return handle;
  }
  room->prompt_tokens = prompt_tokens;
  room->rid = pd.rid;
  room->handle = handle;
  if (room->handshake) {
    StartPrefill(id);
    return handle;
  }
  room->timeout = http_->After(args_.bootstrap_timeout_s, [this, id] {
    auto it = pd_rooms_.find(id);
    if (it == pd_rooms_.end() || it->second->started) return;
    const std::string error = fmt::format(
        "Prefill bootstrap failed for request {} with exception no decode server shook "
        "hands within {} s (SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT)",
        RequestNames(it->second->rid, id), args_.bootstrap_timeout_s);
    log_->Info(error, PdPrefix());
    if (auto h = it->second->handle.lock()) engine_->Fail(*h, 500, error);
    pd_rooms_.erase(it);
  });
  return handle;
}

void SimServer::StartPrefill(uint64_t id) {
  auto it = pd_rooms_.find(id);
  if (it == pd_rooms_.end() || it->second->started) return;
  PdRoom& r = *it->second;
  http_->CancelTimer(r.timeout);
  std::shared_ptr<RequestHandle> h = r.handle.lock();
  if (!h) {  // its router left: nothing will be sent
    if (r.handshake)
      SendPdJson(
          *r.handshake, 500,
          {{"error", "the request was aborted on the prefill server"}, {"bootstrap_room", id}});
    pd_rooms_.erase(it);
    return;
  }
  r.started = true;
  h->OnFinish([this, id](const RequestProgress& p) {
    // Inside the engine's callback: the transfer starts in a task of its own.
    http_->Post([this, id, p] { SendKv(id, p); });
  });
  engine_->Admit(h, r.prompt_tokens, 1, /*prefilled=*/false);
  http_->Kick();
}

void SimServer::HandleBootstrap(const Call& call) {
  const HttpRequest& q = call->request();
  if (q.method == "GET" && (q.path == "/health" || q.path == "/route"))
    return call->Reply(200, "text/plain", "OK");
  // /kv/<room>/<decode GPUs>
  uint64_t id = 0;
  int gpus = 0;
  char tail = 0;
  if (q.method != "GET" || std::sscanf(q.path.c_str(), "/kv/%lu/%d%c", &id, &gpus, &tail) != 2 ||
      gpus < 1)
    return SendPdJson(*call, 404, {{"detail", "Not Found"}});
  std::shared_ptr<PdRoom>& room = pd_rooms_[id];
  if (!room) room = std::make_shared<PdRoom>();
  if (room->handshake && room->handshake->open())
    return SendPdJson(*call, 409,
                      {{"error", fmt::format("bootstrap_room {} has a decode server", id)}});
  room->handshake = call;
  room->decode_gpus = gpus;
  if (room->prompt_tokens >= 0) return StartPrefill(id);
  // The decode server came first: its request to this server is on the way.
  room->timeout = http_->After(args_.bootstrap_timeout_s, [this, id] {
    auto it = pd_rooms_.find(id);
    if (it == pd_rooms_.end() || it->second->prompt_tokens >= 0) return;
    if (it->second->handshake)
      SendPdJson(*it->second->handshake, 500,
                 {{"error", fmt::format("no request came for bootstrap_room {} within {} s", id,
                                        args_.bootstrap_timeout_s)}});
    pd_rooms_.erase(it);
  });
}

void SimServer::SendKv(uint64_t id, const RequestProgress& p) {
  auto it = pd_rooms_.find(id);
  if (it == pd_rooms_.end()) return;
  const std::shared_ptr<PdRoom> room = it->second;
  if (!p.ok) {
    if (room->handshake)
      SendPdJson(*room->handshake, 500,
                 {{"error", "the prefill failed: " + p.error}, {"bootstrap_room", id}});
    pd_rooms_.erase(it);
    return;
  }
  // One transfer after another on this server's link, as the simulator
  // sends them (sim/disaggregated_engine.h), in wall seconds.
  const sim::KvTransferConfig t = predict::TransferBetween(
      args_.tp_size * args_.pp_size, std::max(room->decode_gpus, 1), d_->model, d_->hw);
  const int64_t bytes = t.kv_bytes_per_token * room->prompt_tokens;
  const double wire_s =
      static_cast<double>(bytes) / std::max(t.bytes_per_ns, 1e-9) * 1e-9 / args_.time_scale;
  const double now = SteadyS();
  const double start = std::max(now, pd_link_free_s_);
  pd_link_free_s_ = start + wire_s;
  const double arrive =
      pd_link_free_s_ + static_cast<double>(t.latency_ns) * 1e-9 / args_.time_scale;
  const int kv_fail_after = args_.fault.kv_fail_after;
  const bool fail = kv_fail_after > 0 && ++pd_transfers_ == kv_fail_after + 1;
  http_->After(arrive - now, [this, id, bytes, fail] {
    auto at = pd_rooms_.find(id);
    if (at == pd_rooms_.end()) return;
    PdRoom& r = *at->second;
    if (fail) {
      // What SGLang's prefill side logs when a transfer fails (prefill.py).
      const std::string error = fmt::format(
          "Prefill transfer failed for request {} with exception "
          "KVTransferError(bootstrap_room={}): "
          "injected by --fault-kv-fail-after",
          RequestNames(r.rid, id), id);
      log_->Info(error, PdPrefix());
      if (r.handshake) SendPdJson(*r.handshake, 500, {{"error", error}, {"bootstrap_room", id}});
    } else if (r.handshake) {
      SendPdJson(*r.handshake, 200,
                 {{"bootstrap_room", id}, {"prompt_tokens", r.prompt_tokens}, {"kv_bytes", bytes}});
    }
    pd_rooms_.erase(at);
  });
}

std::shared_ptr<RequestHandle> SimServer::BeginDecode(const PdFields& pd, int64_t prompt_tokens,
                                                      int64_t cap) {
  auto handle = engine_->Reserve();
  pd_prealloc_.push_back({handle, pd, prompt_tokens, cap});
  Preallocate();
  return handle;
}

void SimServer::Preallocate() {
  sim::DecodePool pool;
  pool.max_total_tokens = d_->memory.max_total_tokens;
  pool.slots = d_->scheduler.max_running_requests +
               plan::DecodeExtraSlots(args_.max_running_requests, /*dp=*/1);
  pool.reserved_decode_tokens = plan::ResolvePdSettings(d_->spec.engine).reserved_decode_tokens;
  while (!pd_prealloc_.empty()) {
    PdWaiting w = pd_prealloc_.front();
    std::shared_ptr<RequestHandle> h = w.handle.lock();
    if (!h || h->Snapshot().finished) {  // its router left while it waited
      pd_prealloc_.pop_front();
      continue;
    }
    pool.used_tokens = engine_->KvTokensUsed();
    pool.held_tokens = pd_held_tokens_;
    pool.active = pd_active_;
    const sim::Preallocation now = sim::Preallocate(pool, w.prompt_tokens, w.cap);
    if (now == sim::Preallocation::kWait) return;
    pd_prealloc_.pop_front();
    if (now == sim::Preallocation::kNeverFits) {
      engine_->Fail(*h, 400, "The request does not fit the decode server's KV cache pool.");
      continue;
    }
    // Its KV is held from now until it joins the running batch, its slot
    // until it finishes; either may free room for the next in the queue.
    pd_held_tokens_ += w.prompt_tokens;
    ++pd_active_;
    auto joined = std::make_shared<bool>(false);
    const int64_t prompt = w.prompt_tokens;
    h->OnFirstToken([this, joined, prompt](const RequestProgress&) {
      http_->Post([this, joined, prompt] {
        *joined = true;
        pd_held_tokens_ -= prompt;
        Preallocate();
      });
    });
    h->OnFinish([this, joined, prompt](const RequestProgress&) {
      http_->Post([this, joined, prompt] {
        if (!*joined) pd_held_tokens_ -= prompt;  // failed or aborted before it joined
        *joined = true;
        --pd_active_;
        Preallocate();
      });
    });
    FetchKv(h, w);
  }
}

void SimServer::FetchKv(const std::shared_ptr<RequestHandle>& handle, const PdWaiting& w) {
  FetchRequest kv;
  kv.host = w.pd.host;
  kv.port = w.pd.port;
  kv.path = fmt::format("/kv/{}/{}", *w.pd.room, args_.tp_size * args_.pp_size);
  kv.timeout_s = args_.waiting_timeout_s;
  std::weak_ptr<RequestHandle> weak = handle;
  const std::string names = RequestNames(w.pd.rid, *w.pd.room);
  const std::string where = fmt::format("{}:{}", w.pd.host, w.pd.port);
  const uint64_t fetch_id = ++pd_fetch_seq_;
  const int64_t prompt_tokens = w.prompt_tokens;
  const int64_t cap = w.cap;
  FetchCallbacks callbacks;
  callbacks.done = [this, weak, fetch_id, names, where, prompt_tokens,
                    cap](const FetchReply& reply) {
    pd_fetches_.erase(fetch_id);
    std::shared_ptr<RequestHandle> h = weak.lock();
    if (!h) return;
    if (auto of = pd_fetch_of_.find(h.get()); of != pd_fetch_of_.end() && of->second == fetch_id)
      pd_fetch_of_.erase(of);
    if (reply.status == 200) {
      engine_->Admit(h, prompt_tokens, std::max<int64_t>(cap, 1), /*prefilled=*/true);
      http_->Kick();
      return;
    }
    const std::string why = !reply.error.empty()
                                ? reply.error
                                : fmt::format("the prefill server answered HTTP {}", reply.status);
    const std::string error = fmt::format(
        "Decode transfer failed for request {} with exception KVTransferError(bootstrap "
        "{}: {})",
        names, where, why);
    log_->Info(error, PdPrefix());
    engine_->Fail(*h, 500, error);
  };
  pd_fetches_[fetch_id] = http_->Send(std::move(kv), std::move(callbacks));
  pd_fetch_of_[handle.get()] = fetch_id;
}

void SimServer::DropPdFetch(RequestHandle& handle) {
  // Called with the handle alive: its entry is its own fetch's.
  auto of = pd_fetch_of_.find(&handle);
  if (of == pd_fetch_of_.end()) return;
  if (auto it = pd_fetches_.find(of->second); it != pd_fetches_.end()) {
    it->second->Cancel();
    pd_fetches_.erase(it);
  }
  pd_fetch_of_.erase(of);
}

std::string SimServer::PdPrefix() const {
  return ScopePrefix(0, args_.pp_size, 0, args_.tp_size, args_.ep_size);
}

}  // namespace ppsearch::serve_sim
