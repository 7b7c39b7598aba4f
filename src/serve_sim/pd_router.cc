#include "serve_sim/pd_router.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "workload/workload.h"

namespace ppsearch::serve_sim {
namespace {

// "http://host:port" (host a name, an IPv4 address or [IPv6]).
Result<RouterWorker> ParseWorkerUrl(const std::string& flag, const std::string& url) {
  const std::string scheme = "http://";
  auto bad = [&](const std::string& why) {
    return MakeError(fmt::format("{} '{}': {} (expected http://host:port)", flag, url, why));
  };
  if (url.rfind(scheme, 0) != 0) return bad("not an http:// URL");
  std::string rest = url.substr(scheme.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  RouterWorker w;
  w.url = url;
  size_t colon = std::string::npos;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string::npos) return bad("an IPv6 address without its ]");
    w.host = rest.substr(1, close - 1);
    colon = close + 1 < rest.size() && rest[close + 1] == ':' ? close + 1 : std::string::npos;
  } else {
    colon = rest.rfind(':');
    w.host = rest.substr(0, colon);
  }
  if (w.host.empty() || colon == std::string::npos) return bad("no host:port");
  const std::string port = rest.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return bad("no numeric port");
  w.port = std::stoi(port);
  if (w.port < 1 || w.port > 65535) return bad("port out of range");
  return w;
}

Result<int> ParsePort(const std::string& flag, const std::string& text) {
  if (text.empty() || text.size() > 5 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoi(text) < 1 ||
      std::stoi(text) > 65535)
    return MakeError(fmt::format("{} '{}': expected a TCP port", flag, text));
  return std::stoi(text);
}

// A request of the router's own to `w`, with the client's key if it gave one.
FetchRequest Forwarded(const HttpCall& call, const RouterWorker& w, const std::string& method,
                       const std::string& path) {
  FetchRequest out;
  out.method = method;
  out.host = w.host;
  out.port = w.port;
  out.path = path;
  out.timeout_s = 30;
  if (const std::string key = call.request().Header("Authorization"); !key.empty())
    out.headers.emplace_back("Authorization", key);
  return out;
}

void SendError(HttpCall& call, int status, const std::string& message) {
  call.Reply(status, "application/json",
             nlohmann::json{{"error", {{"message", message}, {"code", status}}}}.dump());
}

}  // namespace

Result<RouterArgs> RouterArgsFromFlags(const RouterFlags& f) {
  if (!f.unknown.empty())
    return MakeError("router-sim: unknown argument '" + f.unknown.front() +
                     "' (it plays SGLang's PD router: --pd-disaggregation, --prefill URL "
                     "[BOOTSTRAP_PORT], --decode URL, --policy, --prefill-policy, "
                     "--decode-policy, --worker-startup-timeout-secs, --host, --port, "
                     "--log-file; see router-sim --help)");
  RouterArgs a;
  for (const std::vector<std::string>& words : f.prefill) {
    if (words.empty()) return MakeError("--prefill needs a value");
    auto worker = ParseWorkerUrl("--prefill", words[0]);
    if (!worker.ok()) return worker.error();
    // The bootstrap port is optional, as the router's; SGLang's default.
    worker->bootstrap_port = 8998;
    if (words.size() > 1 && words[1] != "none") {
      auto port = ParsePort("--prefill " + words[0], words[1]);
      if (!port.ok()) return port.error();
      worker->bootstrap_port = *port;
    }
    a.prefill.push_back(*worker);
  }
  for (const std::string& url : f.decode) {
    auto worker = ParseWorkerUrl("--decode", url);
    if (!worker.ok()) return worker.error();
    a.decode.push_back(*worker);
  }
  static const std::vector<std::string> kPolicies = {
      "random", "round_robin", "cache_aware",        "power_of_two",
      "bucket", "manual",      "consistent_hashing", "prefix_hash"};
  const std::pair<const char*, const std::string*> policies[] = {
      {"--policy", &f.policy},
      {"--prefill-policy", &f.prefill_policy},
      {"--decode-policy", &f.decode_policy}};
  for (const auto& [flag, p] : policies) {
    if (p->empty() && std::string_view(flag) != "--policy") continue;
    if (std::find(kPolicies.begin(), kPolicies.end(), *p) == kPolicies.end())
      return MakeError(std::string(flag) + " '" + *p +
                       "': expected random, round_robin, cache_aware, power_of_two, bucket, "
                       "manual, consistent_hashing or prefix_hash");
  }
  a.policy = f.policy;
  a.prefill_policy = f.prefill_policy;
  a.decode_policy = f.decode_policy;
  if (const std::string& t = f.worker_startup_timeout_secs; !t.empty()) {
    if (t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
      return MakeError("--worker-startup-timeout-secs '" + t + "': expected whole seconds");
    a.worker_startup_timeout_s = std::stoi(t);
  }
  a.host = f.host;
  auto port = ParsePort("--port", f.port);
  if (!port.ok()) return port.error();
  a.port = *port;
  a.log_file = f.log_file;
  if (!f.pd_disaggregation)
    return MakeError(
        "router-sim plays SGLang's router in PD mode only: give --pd-disaggregation with "
        "--prefill and --decode servers");
  if (a.prefill.empty()) return MakeError("--pd-disaggregation needs at least one --prefill URL");
  if (a.decode.empty()) return MakeError("--pd-disaggregation needs at least one --decode URL");
  return a;
}

std::string RouterStartLine(const RouterArgs& a) {
  std::string prefill, decode;
  for (const RouterWorker& w : a.prefill)
    prefill +=
        fmt::format("{}(\"{}\", Some({}))", prefill.empty() ? "" : ", ", w.url, w.bootstrap_port);
  for (const RouterWorker& w : a.decode)
    decode += fmt::format("{}\"{}\"", decode.empty() ? "" : ", ", w.url);
  return fmt::format(
      "Starting router on {}:{} | mode: PrefillDecode {{ prefill_urls: [{}], decode_urls: [{}] }} "
      "| policy: {}",
      a.host, a.port, prefill, decode, a.policy);
}

PdRouter::PdRouter(RouterArgs args, ServerLog* log) : args_(std::move(args)), log_(log) {
  room_state_ =
      args_.seed != 0
          ? args_.seed
          : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

PdRouter::~PdRouter() {
  if (http_) http_->Stop();
}

Status PdRouter::Run(const std::atomic<bool>& stop_requested) {
  http_ = std::make_unique<HttpFront>([this](const Call& call) { Handle(call); }, nullptr);
  PPS_RETURN_IF_ERROR(http_->Listen(args_.host, args_.port));
  http_->Start();
  log_->Info(RouterStartLine(args_));
  while (!stop_requested) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  log_->Info("Shutting down the router");
  http_->Stop();
  return Status::Ok();
}

RouterWorker& PdRouter::Pick(std::vector<RouterWorker>& pool, const std::string& policy,
                             size_t& next) {
  size_t at = 0;
  if ((policy.empty() ? args_.policy : policy) == "round_robin") {
    at = next++ % pool.size();
  } else {
    for (size_t i = 1; i < pool.size(); ++i)
      if (pool[i].in_flight < pool[at].in_flight) at = i;
  }
  ++pool[at].in_flight;
  return pool[at];
}

void PdRouter::Handle(const Call& call) {
  const HttpRequest& q = call->request();
  if (q.path == "/health" || q.path == "/health_generate" || q.path == "/liveness" ||
      q.path == "/readiness")
    return call->Reply(200, "text/plain", "OK");
  if (q.path == "/generate" || q.path == "/v1/completions" || q.path == "/v1/chat/completions") {
    if (q.method != "POST")
      return call->Reply(405, "application/json", R"({"detail":"Method Not Allowed"})");
    return Route(call);
  }
  if (q.path == "/flush_cache") return FlushAll(call);
  if (q.method == "GET" &&
      (q.path == "/server_info" || q.path == "/get_server_info" || q.path == "/model_info" ||
       q.path == "/get_model_info" || q.path == "/v1/models"))
    return PassGet(call);
  call->Reply(404, "application/json", R"({"detail":"Not Found"})");
}

namespace {

// One request between the client and its two servers (loop thread only).
struct Routed {
  std::shared_ptr<HttpCall> client;
  RouterWorker* prefill = nullptr;
  RouterWorker* decode = nullptr;
  std::shared_ptr<Fetch> prefill_fetch, decode_fetch;
  bool prefill_open = true, decode_open = true;
  bool answered = false;  // the client's answer has begun
  bool streaming = false;
  std::string decode_body, prefill_body;
  FetchReply decode_head;

  void EndPrefill() {
    if (!prefill_open) return;
    prefill_open = false;
    --prefill->in_flight;
  }
  void EndDecode() {
    if (!decode_open) return;
    decode_open = false;
    --decode->in_flight;
  }
  // The client left, or its answer is settled without one of them.
  void CancelAll() {
    if (prefill_open && prefill_fetch) prefill_fetch->Cancel();
    if (decode_open && decode_fetch) decode_fetch->Cancel();
    EndPrefill();
    EndDecode();
  }
};

}  // namespace

void PdRouter::Route(const Call& call) {
  nlohmann::json body = nlohmann::json::parse(call->request().body, nullptr, false);
  if (!body.is_object()) return SendError(*call, 400, "the request body is not a JSON object");
  auto r = std::make_shared<Routed>();
  r->client = call;
  r->prefill = &Pick(args_.prefill, args_.prefill_policy, next_prefill_);
  r->decode = &Pick(args_.decode, args_.decode_policy, next_decode_);
  workload::SplitMix64 rooms(room_state_);
  room_state_ = rooms.Next();
  body["bootstrap_host"] = r->prefill->host;
  body["bootstrap_port"] = r->prefill->bootstrap_port;
  body["bootstrap_room"] = room_state_ & ((uint64_t{1} << 63) - 1);
  FetchRequest out;
  out.method = "POST";
  out.path = call->request().path;
  out.body = body.dump();
  out.timeout_s = args_.request_timeout_s;
  out.headers = {{"Content-Type", "application/json"}};
  if (const std::string key = call->request().Header("Authorization"); !key.empty())
    out.headers.emplace_back("Authorization", key);

  FetchRequest to_decode = out;
  to_decode.host = r->decode->host;
  to_decode.port = r->decode->port;
  FetchCallbacks d;
  d.head = [r](const FetchReply& reply) {
    r->decode_head = reply;
    if (r->answered || reply.status != 200 || reply.content_type.rfind("text/event-stream", 0) != 0)
      return;
    r->answered = r->streaming = true;
    r->client->StartStream(reply.content_type);
  };
  d.chunk = [r](std::string_view chunk) {
    if (r->streaming) {
      r->client->Write(chunk);
    } else {
      r->decode_body.append(chunk);
    }
  };
  d.done = [this, r](const FetchReply& reply) {
    r->EndDecode();
    if (r->streaming) return r->client->EndStream();
    if (r->answered) return;
    r->answered = true;
    if (reply.status == 0) {
      log_->Info(fmt::format("Decode server {} failed: {}", r->decode->url, reply.error));
      return SendError(*r->client, 502, "decode server " + r->decode->url + ": " + reply.error);
    }
    r->client->Reply(reply.status, reply.content_type, r->decode_body);
  };
  FetchRequest to_prefill = out;
  to_prefill.host = r->prefill->host;
  to_prefill.port = r->prefill->port;
  FetchCallbacks p;
  p.chunk = [r](std::string_view chunk) { r->prefill_body.append(chunk); };
  p.done = [this, r](const FetchReply& reply) {
    r->EndPrefill();
    if (reply.status == 200 || r->answered) return;
    // The prefill server refused or failed it: its decode server waits for
    // a KV that will not come, so it is dropped and the client told why.
    r->answered = true;
    const std::string why = reply.status == 0 ? reply.error : fmt::format("HTTP {}", reply.status);
    log_->Info(fmt::format("Prefill server {} failed: {}", r->prefill->url, why));
    if (r->decode_open && r->decode_fetch) r->decode_fetch->Cancel();
    r->EndDecode();
    if (reply.status == 0)
      return SendError(*r->client, 502, "prefill server " + r->prefill->url + ": " + why);
    r->client->Reply(reply.status, reply.content_type, r->prefill_body);
  };
  // Both at once, as the router sends them.
  r->prefill_fetch = http_->Send(std::move(to_prefill), std::move(p));
  r->decode_fetch = http_->Send(std::move(to_decode), std::move(d));
  call->OnClose([r] { r->CancelAll(); });
}

void PdRouter::FlushAll(const Call& call) {
  // Every server flushes; the first that refuses (busy: HTTP 400) or fails decides.
  struct Flush {
    int left = 0;
    int status = 200;
    std::string body;
    std::string type;
  };
  auto flush = std::make_shared<Flush>();
  std::vector<const RouterWorker*> all;
  for (const RouterWorker& w : args_.prefill) all.push_back(&w);
  for (const RouterWorker& w : args_.decode) all.push_back(&w);
  flush->left = static_cast<int>(all.size());
  auto fetches = std::make_shared<std::vector<std::shared_ptr<Fetch>>>();
  for (const RouterWorker* w : all) {
    FetchRequest out = Forwarded(*call, *w, "POST", "/flush_cache");
    auto body = std::make_shared<std::string>();
    FetchCallbacks cb;
    cb.chunk = [body](std::string_view chunk) { body->append(chunk); };
    cb.done = [call, flush, body, url = w->url](const FetchReply& reply) {
      if (flush->status == 200 && reply.status != 200) {
        flush->status = reply.status == 0 ? 502 : reply.status;
        flush->body = reply.status == 0 ? url + ": " + reply.error : *body;
        flush->type = reply.content_type;
      }
      if (--flush->left > 0) return;
      if (flush->status == 200) return call->Reply(200, "text/plain", "Cache flushed.\n");
      call->Reply(flush->status, flush->type.empty() ? "text/plain" : flush->type, flush->body);
    };
    fetches->push_back(http_->Send(std::move(out), std::move(cb)));
  }
  call->OnClose([fetches] {
    for (auto& f : *fetches) f->Cancel();
  });
}

void PdRouter::PassGet(const Call& call) {
  const RouterWorker& w = args_.prefill.front();
  FetchRequest out = Forwarded(*call, w, "GET", call->request().path);
  auto body = std::make_shared<std::string>();
  FetchCallbacks cb;
  cb.chunk = [body](std::string_view chunk) { body->append(chunk); };
  cb.done = [call, body, url = w.url](const FetchReply& reply) {
    if (reply.status == 0) return SendError(*call, 502, url + ": " + reply.error);
    call->Reply(reply.status, reply.content_type, *body);
  };
  auto fetch = http_->Send(std::move(out), std::move(cb));
  call->OnClose([fetch] { fetch->Cancel(); });
}

}  // namespace ppsearch::serve_sim
