#pragma once
// A scripted HTTP/1.1 server on 127.0.0.1 for the client's tests and
// benchmarks (not a simulator: `ppsearch serve-sim` is). Each request gets
// the answer its handler scripts: a status, then body pieces sent as chunks,
// each after a delay, so a test can split SSE bytes anywhere, answer 500,
// hang, or cut the connection. One thread, one poll set, keep-alive.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "util/result.h"

namespace ppsearch::loadgen {

// One chunk of SGLang's native /generate stream, as a scripted server sends
// it: `completion_tokens` tokens so far, the finish reason on the final one.
std::string NativeChunk(int64_t prompt_tokens, int64_t completion_tokens, bool final);

struct ScriptedRequest {
  std::string method;
  std::string path;
  std::string body;
};

struct ScriptedResponse {
  struct Piece {
    int64_t delay_ns = 0;  // after the previous piece (or the headers)
    std::string bytes;
    bool first_token = false;  // log the steady time just before this piece is written
  };
  int status = 200;
  std::string content_type = "text/event-stream";
  std::vector<Piece> pieces;
  enum class End { kFinish, kHang, kReset } end = End::kFinish;
};

class ScriptedServer {
 public:
  using Handler = std::function<ScriptedResponse(const ScriptedRequest&)>;

  // Listens on `port` of 127.0.0.1 (0: an ephemeral one); the handler runs
  // on the server's thread.
  static Result<std::unique_ptr<ScriptedServer>> Start(Handler handler, int port = 0);
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int64_t requests_served() const { return requests_.load(); }
  // steady_clock ns at which each piece marked first_token was written, in order.
  std::vector<int64_t> first_token_times_ns() const;

 private:
  ScriptedServer(int listen_fd, int wake_fd, int port, Handler handler);
  void Serve();

  int listen_fd_;
  int wake_fd_;
  int port_;
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> requests_{0};
  mutable std::mutex mu_;
  std::vector<int64_t> first_token_times_ns_;
  std::thread thread_;
};

}  // namespace ppsearch::loadgen
