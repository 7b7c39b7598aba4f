#pragma once
// serve-sim's HTTP front end: one thread runs an event loop (libevent's
// evhttp) that accepts, parses and answers every connection, as SGLang's one
// uvicorn loop does. A thread per connection (cpp-httplib's model, used
// before) cost three thread hand-offs per request (its worker, the engine,
// the worker again): about 220 us of CPU per request on a 2-core machine,
// twice what the load generator spends, so serve-sim limited every bench.
// Here the loop and the engine thread hand work to each other in batches:
// while both are busy neither sleeps.
//
// Everything about a request happens on the loop thread: the handler, the
// answer, the ticker (serve-sim's engine, run when its next event is due,
// so a released token is written at once) and the tasks given with Post(). Connection timeouts: a
// new connection that sends nothing for `read_timeout_s` is closed; once a request is being
// answered, a client that reads nothing for `write_timeout_s` is cut, and the same bound closes an
// idle keep-alive connection. Making one ignores SIGPIPE in the process (a write to a client that
// has gone must not end it).

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/result.h"

struct event;
struct event_base;
struct evhttp;
struct evhttp_request;
struct evhttp_connection;

namespace ppsearch::serve_sim {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // without the query
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string remote_ip;
  int remote_port = 0;
  // The port the client connected to, when the front listens on several
  // (HttpFront::Listen called more than once); 0 otherwise.
  int local_port = 0;

  // The first value of header `name` (any case), or "" when absent.
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

class HttpFront;

// One request being answered. Used only on the loop thread; once the client
// has gone away (or the answer is complete) every call is a no-op.
class HttpCall {
 public:
  const HttpRequest& request() const { return request_; }
  // The client is still there and the answer is not complete.
  bool open() const { return req_ != nullptr; }

  void Reply(int status, std::string_view content_type, std::string_view body);
  // A 200 answer with chunked transfer encoding: Write each chunk, then End.
  // The status line and headers go out with the first chunk (or the end),
  // as one write: a socket waits in epoll for writing only when it has
  // something to write.
  void StartStream(std::string_view content_type);
  void Write(std::string_view chunk);
  void EndStream();
  // `f` runs once if the connection closes before the answer is complete
  // (the client went away, was cut, or the server stops).
  void OnClose(std::function<void()> f) { on_close_ = std::move(f); }

 private:
  friend class HttpFront;
  HttpCall(HttpFront* front, evhttp_request* req, HttpRequest request);
  // The answer is complete or the connection closed: forget the request.
  void Detach();
  // Sends the status line and headers of a started stream, once.
  void SendStreamHead();

  HttpFront* front_;
  evhttp_request* req_;
  evhttp_connection* conn_;
  HttpRequest request_;
  std::function<void()> on_close_;
  bool head_pending_ = false;  // StartStream ran, its head not yet sent
};

// A request this loop sends to another server (http_fetch.cc): a PD decode
// server asking a prefill server's bootstrap port for its KV, the router
// passing a request on. Plain HTTP/1.1, one connection per request.
struct FetchRequest {
  std::string method = "GET";  // GET or POST
  std::string host;            // a name or address (IPv6 without brackets)
  int port = 0;
  std::string path = "/";  // with its query
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // No byte for this long, while sending or receiving: the fetch fails.
  double timeout_s = 30;
};

struct FetchReply {
  int status = 0;     // 0: no answer (error says why)
  std::string error;  // the transport's failure, else ""
  std::string content_type;
};

// What a fetch tells its owner, on the loop thread: `head` once the status
// line and headers are in, `chunk` for each piece of the body as it
// arrives, then `done` once (after a failure, without `head`).
struct FetchCallbacks {
  std::function<void(const FetchReply&)> head;
  std::function<void(std::string_view)> chunk;
  std::function<void(const FetchReply&)> done;
};

class Fetch;

struct HttpFrontOptions {
  double read_timeout_s = 2;
  double write_timeout_s = 5;
  int listen_backlog = 4096;
  size_t max_headers_bytes = size_t{64} << 10;
  size_t max_body_bytes = size_t{256} << 20;
  // How often requests being answered are checked for a client that hung up.
  double hang_up_scan_s = 0.2;
  // The ticker runs again no sooner than this: each turn of the loop asks
  // epoll for every connection's state, so a ticker due every few
  // microseconds (a busy engine at --time-scale 1000) would spend the loop
  // on turns. A thread woken by the kernel is about this late anyway.
  double min_tick_s = 50e-6;
};

class HttpFront {
 public:
  using Handler = std::function<void(const std::shared_ptr<HttpCall>&)>;
  // `ended` is told when a request's answer is complete or its client gone.
  HttpFront(Handler handler, std::function<void(const HttpRequest&)> ended,
            HttpFrontOptions options = {});
  ~HttpFront();
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Binds host:port (SO_REUSEADDR only, TCP_NODELAY, the backlog above);
  // the error names the address and why.
  // Called again, it listens on one more address; requests from every one
  // reach the same handler (HttpRequest::local_port tells them apart).
  Status Listen(const std::string& host, int port);
  int listen_fd() const { return listen_fd_; }  // the first

  // Runs `task` on the loop thread once `seconds` have passed. Loop thread
  // only; a task not yet due when the front stops never runs. The id lets
  // CancelTimer drop it before it is due (a no-op after).
  using TimerId = uint64_t;
  TimerId After(double seconds, std::function<void()> task);
  void CancelTimer(TimerId id);
  // Sends `request`; its answer comes to `callbacks` on the loop thread.
  // Loop thread only. Cancel the returned fetch to drop it (its `done` is
  // then never called); a front that stops drops every fetch still open.
  std::shared_ptr<Fetch> Send(FetchRequest request, FetchCallbacks callbacks);
  // `tick` runs on the loop thread, in the loop's turn with the
  // connections' events: after Kick(), and then again the seconds it
  // returns later (not again until the next Kick while it returns a
  // negative number). Set before Start().
  void SetTicker(std::function<double()> tick);
  // Runs the ticker in this turn of the loop, after the events already due
  // in it. Loop thread only.
  void Kick();
  // Starts the loop thread; requests are answered from now on.
  void Start();
  // Runs `task` on the loop thread, after every task posted before it (on
  // the loop thread itself: in this turn, after the events already due in
  // it).
  // Thread-safe; tasks posted after Stop() never run.
  void Post(std::function<void()> task);
  // Stops the loop and closes every connection (requests still being
  // answered see their OnClose). Idempotent.
  void Stop();

 private:
  friend class HttpCall;
  static void OnRequest(evhttp_request* req, void* self);
  static void OnConnectionClose(evhttp_connection* conn, void* call);
  static void OnHangUpScan(int fd, short what, void* self);
  static void OnWake(int fd, short what, void* self);
  static void OnTick(int fd, short what, void* self);
  static void OnTimer(int fd, short what, void* timer);
  void Forget(HttpCall* call);
  void DropFetches();  // http_fetch.cc

  Handler handler_;
  std::function<void(const HttpRequest&)> ended_;
  const HttpFrontOptions options_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  int listen_fd_ = -1;
  int listeners_ = 0;  // sockets Listen bound
  int wake_fd_ = -1;   // eventfd: tasks were posted
  event* wake_event_ = nullptr;
  event* local_wake_event_ = nullptr;  // the same, posted from the loop itself
  event* hang_up_scan_ = nullptr;
  std::function<double()> tick_;
  event* tick_event_ = nullptr;
  std::atomic<std::thread::id> loop_id_{};
  std::thread loop_;
  // Requests being answered, owned here until complete or gone.
  std::unordered_map<HttpCall*, std::shared_ptr<HttpCall>> calls_;
  // After()'s tasks not yet due, and the fetches not yet done.
  struct Timer {
    HttpFront* front = nullptr;
    TimerId id = 0;
    event* ev = nullptr;
    std::function<void()> task;
  };
  std::unordered_map<TimerId, std::unique_ptr<Timer>> timers_;
  TimerId next_timer_ = 0;
  std::unordered_map<Fetch*, std::shared_ptr<Fetch>> fetches_;
  friend class Fetch;

  std::mutex mu_;
  std::vector<std::function<void()>> tasks_;
  bool stopped_ = false;
};

// One request sent by HttpFront::Send, while it is open.
class Fetch {
 public:
  ~Fetch();
  // Drops the request (its connection closes); no callback runs after.
  // Loop thread only; a no-op once done.
  void Cancel();

 private:
  friend class HttpFront;
  static int OnHead(evhttp_request* req, void* self);
  static void OnChunk(evhttp_request* req, void* self);
  static void OnDone(evhttp_request* req, void* self);
  static void OnError(int error, void* self);
  // Ends the fetch: the callbacks are dropped and the front forgets it.
  void Finish();

  HttpFront* front_ = nullptr;
  evhttp_connection* conn_ = nullptr;
  evhttp_request* req_ = nullptr;
  FetchCallbacks callbacks_;
  FetchReply reply_;
  bool open_ = false;
};

}  // namespace ppsearch::serve_sim
