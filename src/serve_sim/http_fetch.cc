// HttpFront's outgoing side: timers and requests to other servers, run on
// the same loop as the requests it answers (libevent's evhttp client), so
// a PD server or the router never hands a request from thread to thread.

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/socket.h>

#include <cmath>
#include <string>

#include "serve_sim/http_front.h"

namespace ppsearch::serve_sim {

HttpFront::TimerId HttpFront::After(double seconds, std::function<void()> task) {
  auto timer = std::make_unique<Timer>();
  Timer* t = timer.get();
  t->front = this;
  t->id = ++next_timer_;
  t->task = std::move(task);
  t->ev = event_new(base_, -1, 0, &HttpFront::OnTimer, t);
  const double s = std::max(seconds, 0.0);
  const double whole = std::floor(s);
  const timeval after{static_cast<time_t>(whole), static_cast<suseconds_t>((s - whole) * 1e6)};
  event_add(t->ev, &after);
  timers_[t->id] = std::move(timer);
  return t->id;
}

void HttpFront::CancelTimer(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  event_free(it->second->ev);  // deletes the pending event too
  timers_.erase(it);
}

void HttpFront::OnTimer(int, short, void* raw) {
  auto* t = static_cast<Timer*>(raw);
  HttpFront* front = t->front;
  auto it = front->timers_.find(t->id);
  if (it == front->timers_.end()) return;
  std::unique_ptr<Timer> owned = std::move(it->second);
  front->timers_.erase(it);
  event_free(owned->ev);
  owned->task();
}

std::shared_ptr<Fetch> HttpFront::Send(FetchRequest request, FetchCallbacks callbacks) {
  auto fetch = std::shared_ptr<Fetch>(new Fetch());
  Fetch* f = fetch.get();
  f->front_ = this;
  f->callbacks_ = std::move(callbacks);
  f->conn_ = evhttp_connection_base_new(base_, nullptr, request.host.c_str(),
                                        static_cast<ev_uint16_t>(request.port));
  f->req_ = f->conn_ ? evhttp_request_new(&Fetch::OnDone, f) : nullptr;
  if (!f->req_) {
    if (f->conn_) evhttp_connection_free(f->conn_);
    f->conn_ = nullptr;
    f->reply_.error = "cannot make a connection to " + request.host;
    // Told on a later turn, as any failure: the caller's state is set up by then.
    After(0, [fetch] {
      if (fetch->callbacks_.done) fetch->callbacks_.done(fetch->reply_);
    });
    return fetch;
  }
  const double whole = std::floor(request.timeout_s);
  const timeval timeout{static_cast<time_t>(whole),
                        static_cast<suseconds_t>((request.timeout_s - whole) * 1e6)};
  evhttp_connection_set_timeout_tv(f->conn_, &timeout);
  // Freed by libevent once its request is done or failed: freeing it from
  // inside the request's own callback would pull it from under evhttp.
  evhttp_connection_free_on_completion(f->conn_);
  evhttp_request_set_header_cb(f->req_, &Fetch::OnHead);
  evhttp_request_set_chunked_cb(f->req_, &Fetch::OnChunk);
  evhttp_request_set_error_cb(f->req_, [](evhttp_request_error error, void* self) {
    Fetch::OnError(static_cast<int>(error), self);
  });
  evkeyvalq* headers = evhttp_request_get_output_headers(f->req_);
  const bool v6 = request.host.find(':') != std::string::npos;
  const std::string host_header =
      (v6 ? "[" + request.host + "]" : request.host) + ":" + std::to_string(request.port);
  evhttp_add_header(headers, "Host", host_header.c_str());
  for (const auto& [k, v] : request.headers) evhttp_add_header(headers, k.c_str(), v.c_str());
  if (!request.body.empty())
    evbuffer_add(evhttp_request_get_output_buffer(f->req_), request.body.data(),
                 request.body.size());
  f->open_ = true;
  fetches_[f] = fetch;
  const evhttp_cmd_type method = request.method == "POST" ? EVHTTP_REQ_POST : EVHTTP_REQ_GET;
  if (evhttp_make_request(f->conn_, f->req_, method, request.path.c_str()) != 0 && f->open_) {
    // The connection could not even start (no socket): libevent 2.1 takes
    // the request back off the connection and leaves both to their owner,
    // unless its failure path already ended them (then OnDone has run and
    // the fetch is no longer open). Both are dropped with the fetch here.
    evhttp_request_free(f->req_);
    evhttp_connection_free(f->conn_);
    f->req_ = nullptr;
    f->conn_ = nullptr;
    f->reply_.error = "cannot send the request to " + host_header;
    After(0, [fetch] {
      FetchCallbacks callbacks = std::move(fetch->callbacks_);
      fetch->Finish();
      if (callbacks.done) callbacks.done(fetch->reply_);
    });
  }
  return fetch;
}

void HttpFront::DropFetches() {
  for (auto& [raw, fetch] : fetches_) {
    // The connection's requests are freed with it, their callbacks untold.
    if (fetch->open_ && fetch->conn_) evhttp_connection_free(fetch->conn_);
    fetch->open_ = false;
    fetch->conn_ = nullptr;
    fetch->req_ = nullptr;
    fetch->callbacks_ = {};
  }
  fetches_.clear();
  for (auto& [raw, timer] : timers_) event_free(timer->ev);
  timers_.clear();
}

Fetch::~Fetch() = default;

void Fetch::Cancel() {
  callbacks_ = {};  // a fetch that failed before it opened tells no one either
  if (!open_) return;
  // The peer must see the connection go (a decode server aborts a request
  // whose router left): the socket is shut, and libevent, finding it so,
  // fails the request, frees it and its connection, and calls OnDone,
  // which now tells no one.
  if (conn_) {
    const int fd = bufferevent_getfd(evhttp_connection_get_bufferevent(conn_));
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
}

void Fetch::Finish() {
  open_ = false;
  req_ = nullptr;
  conn_ = nullptr;
  if (front_) front_->fetches_.erase(this);  // may destroy this fetch: last
}

int Fetch::OnHead(evhttp_request* req, void* self) {
  auto* f = static_cast<Fetch*>(self);
  f->reply_.status = evhttp_request_get_response_code(req);
  const char* type = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
  f->reply_.content_type = type ? type : "";
  if (f->callbacks_.head) f->callbacks_.head(f->reply_);
  return 0;
}

void Fetch::OnChunk(evhttp_request* req, void* self) {
  auto* f = static_cast<Fetch*>(self);
  evbuffer* in = evhttp_request_get_input_buffer(req);
  const size_t n = evbuffer_get_length(in);
  if (n == 0) return;
  std::string data(n, '\0');
  evbuffer_remove(in, data.data(), n);
  if (f->callbacks_.chunk) f->callbacks_.chunk(data);
}

void Fetch::OnError(int error, void* self) {
  auto* f = static_cast<Fetch*>(self);
  switch (error) {
    case EVREQ_HTTP_TIMEOUT:
      f->reply_.error = "timed out";
      break;
    case EVREQ_HTTP_EOF:
      f->reply_.error = "the connection closed before the answer ended";
      break;
    case EVREQ_HTTP_INVALID_HEADER:
      f->reply_.error = "an invalid answer";
      break;
    case EVREQ_HTTP_BUFFER_ERROR:
      f->reply_.error = "the connection failed (refused, or reset)";
      break;
    default:
      f->reply_.error = "the request was cancelled";
  }
}

void Fetch::OnDone(evhttp_request* req, void* self) {
  auto* f = static_cast<Fetch*>(self);
  auto it = f->front_->fetches_.find(f);
  if (it == f->front_->fetches_.end()) return;
  const std::shared_ptr<Fetch> keep = it->second;
  if (req != nullptr) {
    if (f->reply_.status == 0) f->reply_.status = evhttp_request_get_response_code(req);
    OnChunk(req, f);  // whatever the chunk callback has not taken
  } else if (f->reply_.error.empty()) {
    f->reply_.error = "the connection failed";
  }
  if (f->reply_.status == 0 && f->reply_.error.empty()) f->reply_.error = "no answer";
  FetchCallbacks callbacks = std::move(f->callbacks_);
  f->Finish();
  if (callbacks.done) callbacks.done(f->reply_);
}

}  // namespace ppsearch::serve_sim
