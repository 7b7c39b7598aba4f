#include "serve_sim/http_front.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>

namespace ppsearch::serve_sim {
namespace {

timeval Seconds(double s) {
  const double whole = std::floor(s);
  return {static_cast<time_t>(whole), static_cast<suseconds_t>((s - whole) * 1e6)};
}

const char* MethodName(evhttp_cmd_type cmd) {
  switch (cmd) {
    case EVHTTP_REQ_GET:
      return "GET";
    case EVHTTP_REQ_POST:
      return "POST";
    case EVHTTP_REQ_HEAD:
      return "HEAD";
    case EVHTTP_REQ_PUT:
      return "PUT";
    case EVHTTP_REQ_DELETE:
      return "DELETE";
    case EVHTTP_REQ_OPTIONS:
      return "OPTIONS";
    case EVHTTP_REQ_TRACE:
      return "TRACE";
    case EVHTTP_REQ_CONNECT:
      return "CONNECT";
    case EVHTTP_REQ_PATCH:
      return "PATCH";
  }
  return "";
}

// `several_ports`: the front listens on more than one (local_port is then read).
HttpRequest ReadRequest(evhttp_request* req, bool several_ports) {
  HttpRequest r;
  r.method = MethodName(evhttp_request_get_command(req));
  const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
  const char* path = uri ? evhttp_uri_get_path(uri) : nullptr;
  r.path = path && *path ? path : "/";
  const evkeyvalq* headers = evhttp_request_get_input_headers(req);
  for (const evkeyval* h = headers->tqh_first; h; h = h->next.tqe_next)
    r.headers.emplace_back(h->key, h->value);
  evbuffer* in = evhttp_request_get_input_buffer(req);
  const size_t n = evbuffer_get_length(in);
  r.body.resize(n);
  if (n > 0) evbuffer_remove(in, r.body.data(), n);
  char* ip = nullptr;
  ev_uint16_t port = 0;
  evhttp_connection_get_peer(evhttp_request_get_connection(req), &ip, &port);
  r.remote_ip = ip ? ip : "";
  r.remote_port = port;
  if (!several_ports) return r;  // one syscall less per request on the common path
  sockaddr_storage local{};
  socklen_t local_len = sizeof(local);
  const int fd =
      bufferevent_getfd(evhttp_connection_get_bufferevent(evhttp_request_get_connection(req)));
  if (fd >= 0 && ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0)
    r.local_port = local.ss_family == AF_INET6
                       ? ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port)
                       : ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return r;
}

void SetContentType(evhttp_request* req, std::string_view content_type) {
  if (content_type.empty()) return;
  evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                    std::string(content_type).c_str());
}

}  // namespace

std::string HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && ::strncasecmp(k.data(), name.data(), name.size()) == 0) return v;
  return "";
}

bool HttpRequest::HasHeader(std::string_view name) const {
  for (const auto& h : headers)
    if (h.first.size() == name.size() &&
        ::strncasecmp(h.first.data(), name.data(), name.size()) == 0)
      return true;
  return false;
}

HttpCall::HttpCall(HttpFront* front, evhttp_request* req, HttpRequest request)
    : front_(front),
      req_(req),
      conn_(evhttp_request_get_connection(req)),
      request_(std::move(request)) {}

void HttpCall::Reply(int status, std::string_view content_type, std::string_view body) {
  if (!req_) return;
  SetContentType(req_, content_type);
  evbuffer* out = evbuffer_new();
  evbuffer_add(out, body.data(), body.size());
  evhttp_request* req = req_;
  Detach();
  evhttp_send_reply(req, status, nullptr, out);
  evbuffer_free(out);
}

void HttpCall::StartStream(std::string_view content_type) {
  if (!req_) return;
  SetContentType(req_, content_type);
  // The head waits for the first chunk: sent now, it would enable the
  // socket's write event while the engine has no token for it, and every
  // turn of the loop until then would find the socket writable (epoll is
  // level-triggered) for nothing.
  head_pending_ = true;
  // A stream hears its client close at once, before its head too: reading
  // is turned on with no read callback, as evhttp turns it on for a reply
  // it writes (data waits for the next request; an end of file reaches
  // evhttp's error callback, which closes the connection).
  bufferevent* bev = evhttp_connection_get_bufferevent(conn_);
  bufferevent_data_cb read_cb = nullptr, write_cb = nullptr;
  bufferevent_event_cb event_cb = nullptr;
  void* arg = nullptr;
  bufferevent_getcb(bev, &read_cb, &write_cb, &event_cb, &arg);
  bufferevent_setcb(bev, nullptr, write_cb, event_cb, arg);
  bufferevent_enable(bev, EV_READ);
  // evhttp's read timeout would still cut a stream whose next token is more
  // than that away: a stream keeps only the write timeout (a client not
  // reading).
  const timeval write_timeout = Seconds(front_->options_.write_timeout_s);
  bufferevent_set_timeouts(bev, nullptr, &write_timeout);
}

void HttpCall::SendStreamHead() {
  if (!head_pending_) return;
  head_pending_ = false;
  evhttp_send_reply_start(req_, 200, nullptr);
}

void HttpCall::Write(std::string_view chunk) {
  if (!req_ || chunk.empty()) return;
  SendStreamHead();
  evbuffer* out = evbuffer_new();
  evbuffer_add(out, chunk.data(), chunk.size());
  evhttp_send_reply_chunk(req_, out);
  evbuffer_free(out);
}

void HttpCall::EndStream() {
  if (!req_) return;
  SendStreamHead();
  evhttp_request* req = req_;
  // Both bounds again, for the idle keep-alive connection this becomes.
  const timeval timeout = Seconds(front_->options_.write_timeout_s);
  bufferevent_set_timeouts(evhttp_connection_get_bufferevent(conn_), &timeout, &timeout);
  Detach();
  evhttp_send_reply_end(req);
}

void HttpCall::Detach() {
  if (!req_) return;
  req_ = nullptr;
  on_close_ = nullptr;
  if (conn_) evhttp_connection_set_closecb(conn_, nullptr, nullptr);
  front_->Forget(this);  // may destroy this call: last
}

HttpFront::HttpFront(Handler handler, std::function<void(const HttpRequest&)> ended,
                     HttpFrontOptions options)
    : handler_(std::move(handler)), ended_(std::move(ended)), options_(options) {
  // libevent writes with writev, which raises SIGPIPE on a socket the client
  // has closed; the default action would end the process for one client.
  std::signal(SIGPIPE, SIG_IGN);
  // The changelist merges a loop turn's epoll changes per socket (evhttp
  // turns reading and writing on and off around every request).
  event_config* config = event_config_new();
  event_config_set_flag(config, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
  // Timers to the microsecond (timerfd): epoll's own timeout is in whole
  // milliseconds, longer than a decode step at a high --time-scale.
  event_config_set_flag(config, EVENT_BASE_FLAG_PRECISE_TIMER);
  // One priority for every event. With the ticker (the engine) and posted
  // tasks above the connections, libevent ran only them in a turn where
  // they were due, which at a high --time-scale was most turns: a client's
  // next request waited several turns to be read, and each turn's
  // epoll_wait reported every such socket again (level-triggered), 160
  // events a call at C=256. In one queue a turn runs all it found: twice
  // the requests per second, with the same first-token gap
  // (serve_sim_bench.cc, docs/tools.md).
  base_ = event_base_new_with_config(config);
  event_config_free(config);
  http_ = evhttp_new(base_);
  const timeval read_timeout = Seconds(options_.read_timeout_s);
  evhttp_set_timeout_tv(http_, &read_timeout);
  evhttp_set_max_headers_size(http_, static_cast<ev_ssize_t>(options_.max_headers_bytes));
  evhttp_set_max_body_size(http_, static_cast<ev_ssize_t>(options_.max_body_bytes));
  evhttp_set_allowed_methods(http_, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                        EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
                                        EVHTTP_REQ_PATCH);
  evhttp_set_gencb(http_, &HttpFront::OnRequest, this);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  wake_event_ = event_new(base_, wake_fd_, EV_READ | EV_PERSIST, &HttpFront::OnWake, this);
  local_wake_event_ = event_new(base_, -1, 0, &HttpFront::OnWake, this);
  event_add(wake_event_, nullptr);
  hang_up_scan_ = event_new(base_, -1, EV_PERSIST, &HttpFront::OnHangUpScan, this);
  const timeval every = Seconds(options_.hang_up_scan_s);
  event_add(hang_up_scan_, &every);
}

HttpFront::~HttpFront() {
  Stop();
  event_free(wake_event_);
  event_free(local_wake_event_);
  event_free(hang_up_scan_);
  if (tick_event_) event_free(tick_event_);
  ::close(wake_fd_);
  event_base_free(base_);
}

Status HttpFront::Listen(const std::string& host, int port) {
  const std::string where = fmt::format("{}:{}", host, port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return MakeError(fmt::format("cannot listen on {}: {}", where, ::gai_strerror(rc)));
  std::string why = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    // SO_REUSEADDR only: SO_REUSEPORT would let two servers share the port
    // and split its connections. TCP_NODELAY is inherited by accepted
    // sockets on Linux; without it the first chunk after the headers waits
    // for the client's delayed ACK (~40 ms).
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, options_.listen_backlog) == 0) {
      ::freeaddrinfo(found);
      if (listen_fd_ < 0) listen_fd_ = fd;
      ++listeners_;
      evhttp_accept_socket_with_handle(http_, fd);
      return Status::Ok();
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return MakeError(fmt::format(
      "cannot listen on {}: {} (another server on the port, or not an address of this host?)",
      where, why));
}

void HttpFront::SetTicker(std::function<double()> tick) {
  tick_ = std::move(tick);
  tick_event_ = event_new(base_, -1, 0, &HttpFront::OnTick, this);
}

void HttpFront::Kick() {
  if (tick_event_) event_active(tick_event_, EV_TIMEOUT, 1);
}

void HttpFront::OnTick(int, short, void* self) {
  auto* front = static_cast<HttpFront*>(self);
  const double next_s = front->tick_();
  if (next_s < 0) return;
  const timeval after = Seconds(std::max(next_s, front->options_.min_tick_s));
  event_add(front->tick_event_, &after);
}

void HttpFront::Start() {
  loop_ = std::thread([this] { event_base_dispatch(base_); });
  loop_id_ = loop_.get_id();  // until then a post from the loop takes the eventfd
}

void HttpFront::Post(std::function<void()> task) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    wake = tasks_.empty();  // a wake-up is pending already otherwise
    tasks_.push_back(std::move(task));
  }
  if (!wake) return;
  if (std::this_thread::get_id() == loop_id_) {
    event_active(local_wake_event_, EV_TIMEOUT, 1);  // no system call from the loop itself
  } else {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }
}

void HttpFront::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    tasks_.clear();
    // The loop breaks itself: this base has no locks for other threads.
    tasks_.push_back([this] { event_base_loopbreak(base_); });
  }
  if (loop_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
    loop_.join();
  }
  DropFetches();
  // Closes every connection; the calls still open hear OnConnectionClose.
  if (http_) evhttp_free(http_);
  http_ = nullptr;
  listen_fd_ = -1;
  // Any call evhttp did not report closed is closed here, so that no call
  // outlives the loop holding its events.
  while (!calls_.empty()) OnConnectionClose(nullptr, calls_.begin()->first);
}

void HttpFront::OnRequest(evhttp_request* req, void* self) {
  auto* front = static_cast<HttpFront*>(self);
  auto call =
      std::shared_ptr<HttpCall>(new HttpCall(front, req, ReadRequest(req, front->listeners_ > 1)));
  front->calls_[call.get()] = call;
  evhttp_connection* conn = call->conn_;
  // While answering, a client that reads nothing this long is cut; the same
  // bound then closes the connection when it idles between requests.
  const timeval write_timeout = Seconds(front->options_.write_timeout_s);
  evhttp_connection_set_timeout_tv(conn, &write_timeout);
  evhttp_connection_set_closecb(conn, &HttpFront::OnConnectionClose, call.get());
  front->handler_(call);
}

void HttpFront::OnConnectionClose(evhttp_connection* conn, void* raw) {
  auto* call = static_cast<HttpCall*>(raw);
  auto& calls = call->front_->calls_;
  auto it = calls.find(call);
  if (it == calls.end()) return;
  const std::shared_ptr<HttpCall> keep = it->second;  // alive through Detach
  // A connection that fails while its request is still being answered (the
  // client's end of file or a timeout: evhttp_connection_incoming_fail)
  // unlinks the request before it frees the connection, and leaves the
  // request to the code answering it, whose evhttp_send_reply_end would
  // free it. Freed with the connection otherwise (still linked: our own
  // evhttp_connection_free, evhttp_free). `conn` is null only from Stop,
  // after evhttp_free, when the request may be gone.
  evhttp_request* orphan =
      conn && call->req_ && evhttp_request_get_connection(call->req_) == nullptr ? call->req_
                                                                                 : nullptr;
  call->conn_ = nullptr;  // being freed
  std::function<void()> on_close = std::move(call->on_close_);
  call->Detach();
  if (orphan) evhttp_request_free(orphan);
  if (on_close) on_close();
}

void HttpFront::OnHangUpScan(int, short, void* self) {
  // evhttp does not read a connection while its request is being answered,
  // so a client that hangs up would go unnoticed until the next write (or
  // for ever, when none comes). A look at each such socket a few times a
  // second costs far less than watching each one in epoll, which would
  // take two epoll_ctl calls per request.
  auto* front = static_cast<HttpFront*>(self);
  std::vector<evhttp_connection*> gone;
  for (const auto& [call, keep] : front->calls_) {
    if (!call->conn_) continue;
    const int fd = bufferevent_getfd(evhttp_connection_get_bufferevent(call->conn_));
    char c;
    const ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      gone.push_back(call->conn_);
  }
  // Freeing a connection frees its request and runs OnConnectionClose.
  for (evhttp_connection* conn : gone) evhttp_connection_free(conn);
}

void HttpFront::OnWake(int fd, short, void* self) {
  auto* front = static_cast<HttpFront*>(self);
  if (fd >= 0) {  // woken through the eventfd (by another thread)
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = ::read(fd, &count, sizeof(count));
  }
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(front->mu_);
    tasks.swap(front->tasks_);
  }
  for (auto& task : tasks) task();
}

void HttpFront::Forget(HttpCall* call) {
  auto it = calls_.find(call);
  if (it == calls_.end()) return;
  std::shared_ptr<HttpCall> keep = std::move(it->second);
  calls_.erase(it);
  if (ended_) ended_(keep->request_);
}

}  // namespace ppsearch::serve_sim
