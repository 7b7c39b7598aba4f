#include "loadgen/load_loop.h"

#include <curl/curl.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "loadgen/body_prefetch.h"
#include "loadgen/sse_parser.h"
#include "loadgen/stream_decoder.h"
#include "loadgen/url.h"

namespace ppsearch::loadgen {
namespace {

using workload::RequestRecord;
using workload::RequestStatus;

constexpr size_t kErrorBodyBytes = 2048;  // kept from a non-2xx answer
// Slack after a request's timeout before the loop removes it itself (libcurl
// normally reports the timeout first).
constexpr int64_t kBackstopGraceNs = 2'000'000'000;
constexpr int kMaxWaitMs = 100;
// Request bodies built ahead (body_prefetch.h): twice the concurrency (for an
// open loop, twice this), within this many bytes.
constexpr size_t kOpenLoopAhead = 64;
constexpr size_t kPrefetchBytes = size_t{256} << 20;

// SGLang's --api-key, as its middleware and bench_serving spell it.
std::string AuthorizationHeader(const std::string& api_key) {
  return "Authorization: Bearer " + api_key;
}

void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

// One request in flight.
struct Transfer {
  Transfer(Api api, RequestRecord* record) : decoder(api), record(record) {}
  EasyHandle easy;
  std::string body;
  SseParser parser;
  StreamDecoder decoder;
  std::vector<std::string> events;  // scratch
  std::string error_body;
  long http_status = 0;
  RequestRecord* record;
  size_t server = 0;           // index into LoopConfig::endpoints
  int64_t t0_ns = 0;           // steady time of the sample's t = 0
  int64_t deadline_ns = 0;     // steady time after which the loop gives up
  int64_t done_event_ns = -1;  // since t0: when [DONE] arrived
  int64_t last_chunk_us = 0;   // decode timing: first token to the last token chunk
  bool record_chunks = true;
  std::string abort_reason;  // why the write callback stopped the transfer
  char curl_error[CURL_ERROR_SIZE] = {};
};

// Offsets from the first token are rounded once, so the gaps add up to the
// last chunk's offset without drift.
void RecordChunk(Transfer& t, int64_t now_ns, int64_t tokens) {
  RequestRecord& r = *t.record;
  const int64_t offset_us = (now_ns - r.first_token_ns) / 1000;
  r.chunk_gaps_us.push_back(offset_us - t.last_chunk_us);
  r.chunk_tokens.push_back(tokens);
  t.last_chunk_us = offset_us;
}

size_t OnData(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * count;
  const int64_t now_ns = SteadyNowNs() - t->t0_ns;
  if (t->http_status == 0)
    curl_easy_getinfo(t->easy.get(), CURLINFO_RESPONSE_CODE, &t->http_status);
  if (t->http_status < 200 || t->http_status >= 300) {
    t->error_body.append(
        data, std::min(len, kErrorBodyBytes - std::min(kErrorBodyBytes, t->error_body.size())));
    return len;
  }
  t->events.clear();
  const bool parsed = t->parser.Feed(std::string_view(data, len), t->events);
  // Events read together arrived together: they are one chunk.
  bool first_token = false;
  int64_t tokens = 0;
  for (const std::string& event : t->events) {
    if (t->decoder.OnEvent(event)) {
      t->record->first_token_ns = now_ns;
      first_token = true;
    }
    tokens += t->decoder.event_tokens();
    if (t->decoder.done() && t->done_event_ns < 0) t->done_event_ns = now_ns;
  }
  if (t->record_chunks && tokens > 0 && !first_token && t->record->first_token_ns >= 0)
    RecordChunk(*t, now_ns, tokens);
  if (!parsed) {
    t->abort_reason = "malformed stream: " + t->parser.error();
    return CURL_WRITEFUNC_ERROR;
  }
  return len;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

// Fills the record of a finished transfer from libcurl's result and what the
// stream said.
void Classify(Transfer& t, CURLcode code, int64_t now_ns, int64_t timeout_ns) {
  RequestRecord& r = *t.record;
  if (t.http_status == 0) curl_easy_getinfo(t.easy.get(), CURLINFO_RESPONSE_CODE, &t.http_status);
  r.http_status = static_cast<int>(t.http_status);
  r.end_ns = t.done_event_ns >= 0 ? t.done_event_ns : now_ns;
  r.output_tokens = t.decoder.completion_tokens();
  r.reported_input_tokens = t.decoder.prompt_tokens();
  r.server_first_token_unix_s = t.decoder.server_first_token_unix_s();
  auto fail = [&](RequestStatus status, std::string error) {
    r.status = status;
    r.error = std::move(error);
  };
  if (code == CURLE_OPERATION_TIMEDOUT) {
    fail(RequestStatus::kTimeout,
         "no complete answer within " + std::to_string(timeout_ns / 1'000'000) + " ms" +
             (r.first_token_ns >= 0 ? " (the first token had arrived)" : " (no token arrived)"));
  } else if (t.http_status != 0 && (t.http_status < 200 || t.http_status >= 300)) {
    fail(RequestStatus::kHttpError,
         "HTTP " + std::to_string(t.http_status) + ": " + Trimmed(t.error_body));
  } else if (!t.abort_reason.empty()) {
    fail(RequestStatus::kStreamError, t.abort_reason);
  } else if (code != CURLE_OK) {
    fail(RequestStatus::kStreamError,
         std::string("transfer failed: ") +
             (t.curl_error[0] != '\0' ? t.curl_error : curl_easy_strerror(code)));
  } else if (t.decoder.failed()) {
    fail(RequestStatus::kStreamError, t.decoder.error());
  } else if (!t.decoder.done()) {
    fail(RequestStatus::kStreamError, t.parser.has_partial_event()
                                          ? "stream ended inside an event, before data: [DONE]"
                                          : "stream ended before data: [DONE]");
  } else if (!t.decoder.token_seen()) {
    fail(RequestStatus::kStreamError, "stream finished without a generated token");
  } else {
    r.status = RequestStatus::kOk;
  }
}

class MultiLoop {
 public:
  explicit MultiLoop(const LoopConfig& config)
      : config_(config), router_(config.endpoints.size(), config.routing) {
    multi_ = curl_multi_init();
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &MultiLoop::OnSocket);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &MultiLoop::OnTimer);
    curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
    headers_ = curl_slist_append(nullptr, "Content-Type: application/json");
    headers_ = curl_slist_append(headers_, "Accept: text/event-stream");
    headers_ =
        curl_slist_append(headers_, "Expect:");  // no 100-continue round trip for big prompts
    if (!config_.api_key.empty())
      headers_ = curl_slist_append(headers_, AuthorizationHeader(config_.api_key).c_str());
  }
  ~MultiLoop() {
    for (auto& [easy, t] : active_) curl_multi_remove_handle(multi_, easy);
    active_.clear();
    idle_easy_.clear();
    curl_multi_cleanup(multi_);
    curl_slist_free_all(headers_);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
  }
  MultiLoop(const MultiLoop&) = delete;
  MultiLoop& operator=(const MultiLoop&) = delete;

  Result<LoopOutput> Run(const std::vector<LoopRequest>& requests);

 private:
  static int OnSocket(CURL*, curl_socket_t fd, int what, void* self_ptr, void*) {
    auto* self = static_cast<MultiLoop*>(self_ptr);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
      return 0;
    }
    epoll_event ev{};
    ev.data.fd = fd;
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    if (epoll_ctl(self->epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT) {
      epoll_ctl(self->epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    }
    return 0;
  }
  static int OnTimer(CURLM*, long timeout_ms, void* self_ptr) {
    auto* self = static_cast<MultiLoop*>(self_ptr);
    self->timer_due_ns_ = timeout_ms < 0 ? -1 : SteadyNowNs() + timeout_ms * 1'000'000;
    return 0;
  }

  void Start(RequestRecord& record, std::string body);
  void Finish(CURL* easy, CURLcode code);
  void DrainFinished();
  // Ends every transfer in flight and marks the unsent requests (abort_check).
  void AbortAll(const std::string& why, std::vector<RequestRecord>& records, size_t next);
  void EnforceDeadlines();

  const LoopConfig& config_;
  Router router_;
  CURLM* multi_ = nullptr;
  int epoll_fd_ = -1;
  curl_slist* headers_ = nullptr;
  int64_t timer_due_ns_ = -1;  // libcurl's next timeout (steady ns); -1: none
  int64_t t0_ns_ = 0;
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> active_;
  std::vector<EasyHandle> idle_easy_;  // reused: fewer allocations, same connection cache
};

void MultiLoop::Start(RequestRecord& record, std::string body) {
  auto t = std::make_unique<Transfer>(config_.api, &record);
  t->body = std::move(body);
  if (!idle_easy_.empty()) {
    t->easy = std::move(idle_easy_.back());
    idle_easy_.pop_back();
    curl_easy_reset(t->easy.get());
  } else {
    t->easy.reset(curl_easy_init());
  }
  CURL* easy = t->easy.get();
  t->server = router_.Pick();
  record.instance = static_cast<int>(t->server);
  curl_easy_setopt(easy, CURLOPT_URL, config_.endpoints[t->server].c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, t->body.data());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->body.size()));
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &OnData);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::max<int64_t>(1, config_.timeout_ns / 1'000'000)));
  curl_easy_setopt(easy, CURLOPT_PRIVATE, t.get());
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->curl_error);
  t->t0_ns = t0_ns_;
  t->record_chunks = config_.record_chunks;
  const int64_t now = SteadyNowNs();
  t->deadline_ns = now + config_.timeout_ns + kBackstopGraceNs;
  record.send_ns = now - t0_ns_;
  record.status = RequestStatus::kOk;
  curl_multi_add_handle(multi_, easy);
  active_.emplace(easy, std::move(t));
}

void MultiLoop::Finish(CURL* easy, CURLcode code) {
  auto it = active_.find(easy);
  if (it == active_.end()) return;
  curl_multi_remove_handle(multi_, easy);
  Transfer& t = *it->second;
  Classify(t, code, SteadyNowNs() - t0_ns_, config_.timeout_ns);
  router_.Done(t.server);
  idle_easy_.push_back(std::move(t.easy));
  active_.erase(it);
}

void MultiLoop::AbortAll(const std::string& why, std::vector<RequestRecord>& records, size_t next) {
  const int64_t now = SteadyNowNs() - t0_ns_;
  for (auto& [easy, t] : active_) {
    curl_multi_remove_handle(multi_, easy);
    t->record->status = RequestStatus::kStreamError;
    t->record->end_ns = now;
    t->record->error = "aborted: " + why;
    router_.Done(t->server);
    idle_easy_.push_back(std::move(t->easy));
  }
  active_.clear();
  for (size_t i = next; i < records.size(); ++i) records[i].error = "not sent: " + why;
}

void MultiLoop::DrainFinished() {
  int queued = 0;
  while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
    if (msg->msg == CURLMSG_DONE) Finish(msg->easy_handle, msg->data.result);
  }
}

void MultiLoop::EnforceDeadlines() {
  const int64_t now = SteadyNowNs();
  std::vector<CURL*> late;
  for (const auto& [easy, t] : active_) {
    if (now > t->deadline_ns) late.push_back(easy);
  }
  for (CURL* easy : late) Finish(easy, CURLE_OPERATION_TIMEDOUT);
}

Result<LoopOutput> MultiLoop::Run(const std::vector<LoopRequest>& requests) {
  if (multi_ == nullptr || epoll_fd_ < 0) return MakeError("cannot set up the HTTP event loop");
  if (config_.endpoints.empty()) return MakeError("no server to send the requests to");
  LoopOutput out;
  out.records.resize(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    out.records[i].id = requests[i].id;
    out.records[i].input_tokens = requests[i].input_tokens;
    out.records[i].status = RequestStatus::kNotSent;
  }
  const size_t cap =
      config_.max_in_flight > 0 ? static_cast<size_t>(config_.max_in_flight) : SIZE_MAX;
  BodyPrefetch bodies(config_.make_body, requests, 2 * (cap == SIZE_MAX ? kOpenLoopAhead : cap),
                      kPrefetchBytes);
  bodies.WaitFilled();
  t0_ns_ = SteadyNowNs();
  out.start_steady_ns = t0_ns_;
  size_t next = 0;
  std::vector<epoll_event> events(256);
  int running = 0;
  while (next < requests.size() || !active_.empty()) {
    if (config_.abort_check) {
      const std::string why = config_.abort_check();
      if (!why.empty()) {
        AbortAll(why, out.records, next);
        break;
      }
    }
    const int64_t now_rel = SteadyNowNs() - t0_ns_;
    while (next < requests.size() && active_.size() < cap && requests[next].arrival_ns <= now_rel) {
      Start(out.records[next], bodies.TakeNext());
      ++next;
    }
    if (timer_due_ns_ >= 0 && SteadyNowNs() >= timer_due_ns_) {
      timer_due_ns_ = -1;
      curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    DrainFinished();
    EnforceDeadlines();
    if (next >= requests.size() && active_.empty()) break;

    int64_t wait_ns = int64_t{kMaxWaitMs} * 1'000'000;
    const int64_t now = SteadyNowNs();
    if (timer_due_ns_ >= 0) wait_ns = std::min(wait_ns, timer_due_ns_ - now);
    if (next < requests.size() && active_.size() < cap) {
      wait_ns = std::min(wait_ns, t0_ns_ + requests[next].arrival_ns - now);
    }
    const int wait_ms = wait_ns <= 0 ? 0 : static_cast<int>((wait_ns + 999'999) / 1'000'000);
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), wait_ms);
    for (int i = 0; i < n; ++i) {
      int mask = 0;
      if (events[i].events & (EPOLLIN | EPOLLHUP)) mask |= CURL_CSELECT_IN;
      if (events[i].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
      if (events[i].events & EPOLLERR) mask |= CURL_CSELECT_ERR;
      curl_multi_socket_action(multi_, events[i].data.fd, mask, &running);
    }
    DrainFinished();
  }
  return out;
}

struct MultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};

// One transfer to its end, as curl_easy_perform, but asking `abort_check`
// at least every kMaxWaitMs: a blocking perform would not notice an
// interrupt for the whole timeout. A non-empty answer ends the transfer
// (CURLE_ABORTED_BY_CALLBACK) with that reason in `why`.
CURLcode PerformAbortable(CURL* easy, const std::function<std::string()>& abort_check,
                          std::string& why) {
  if (!abort_check) return curl_easy_perform(easy);
  std::unique_ptr<CURLM, MultiDeleter> multi(curl_multi_init());
  if (!multi || curl_multi_add_handle(multi.get(), easy) != CURLM_OK) return CURLE_FAILED_INIT;
  CURLcode code = CURLE_OK;
  for (;;) {
    why = abort_check();
    if (!why.empty()) {
      code = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    int running = 0;
    if (curl_multi_perform(multi.get(), &running) != CURLM_OK) {
      code = CURLE_FAILED_INIT;
      break;
    }
    if (running == 0) {
      int queued = 0;
      const CURLMsg* msg = curl_multi_info_read(multi.get(), &queued);
      code = msg != nullptr && msg->msg == CURLMSG_DONE ? msg->data.result : CURLE_FAILED_INIT;
      break;
    }
    curl_multi_poll(multi.get(), nullptr, 0, kMaxWaitMs, nullptr);
  }
  curl_multi_remove_handle(multi.get(), easy);
  return code;
}

Result<SimpleResponse> Simple(const std::string& url, int64_t timeout_ms, bool post,
                              size_t max_body_bytes, const std::string& api_key,
                              const std::function<std::string()>& abort_check) {
  InitCurlOnce();
  EasyHandle easy(curl_easy_init());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      api_key.empty() ? nullptr : curl_slist_append(nullptr, AuthorizationHeader(api_key).c_str()),
      &curl_slist_free_all);
  if (headers) curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, headers.get());
  SimpleResponse response;
  char errbuf[CURL_ERROR_SIZE] = {};
  struct Sink {
    std::string* body;
    size_t limit;
  } sink{&response.body, max_body_bytes};
  auto collect = +[](char* data, size_t size, size_t count, void* user) -> size_t {
    auto* s = static_cast<Sink*>(user);
    s->body->append(data, std::min(size * count, s->limit - std::min(s->limit, s->body->size())));
    return size * count;
  };
  curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
  if (post) {
    curl_easy_setopt(easy.get(), CURLOPT_POST, 1L);
    curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, "");
    curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE, 0L);
  }
  curl_easy_setopt(easy.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &sink);
  std::string aborted;
  const CURLcode code = PerformAbortable(easy.get(), abort_check, aborted);
  if (!aborted.empty())
    return MakeError(std::string(post ? "POST " : "GET ") + ShownUrl(url) + " aborted: " + aborted);
  if (code != CURLE_OK) {
    return MakeError(std::string(post ? "POST " : "GET ") + ShownUrl(url) + " failed: " +
                     (errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(code)));
  }
  long status = 0;
  curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &status);
  response.http_status = static_cast<int>(status);
  response.body = Trimmed(std::move(response.body));
  return response;
}

}  // namespace

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Result<LoopOutput> RunLoop(const LoopConfig& config, const std::vector<LoopRequest>& requests) {
  InitCurlOnce();
  MultiLoop loop(config);
  return loop.Run(requests);
}

Status ProbeConnect(const std::string& url, int64_t timeout_ms) {
  InitCurlOnce();
  EasyHandle easy(curl_easy_init());
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy.get(), CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(easy.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy.get(), CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_ms));
  curl_easy_setopt(easy.get(), CURLOPT_ERRORBUFFER, errbuf);
  const CURLcode code = curl_easy_perform(easy.get());
  if (code != CURLE_OK) {
    return MakeError("cannot connect to " + ShownUrl(url) + ": " +
                     (errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(code)) +
                     "; is the server running there? (check --url)");
  }
  return Status::Ok();
}

Result<SimpleResponse> PostEmpty(const std::string& url, int64_t timeout_ms,
                                 const std::string& api_key,
                                 const std::function<std::string()>& abort_check) {
  return Simple(url, timeout_ms, /*post=*/true, kErrorBodyBytes, api_key, abort_check);
}

Result<SimpleResponse> Get(const std::string& url, int64_t timeout_ms, size_t max_body_bytes,
                           const std::string& api_key,
                           const std::function<std::string()>& abort_check) {
  return Simple(url, timeout_ms, /*post=*/false, max_body_bytes, api_key, abort_check);
}

}  // namespace ppsearch::loadgen
