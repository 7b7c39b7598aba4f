#pragma once
// The simulated engine run against a wall clock: its owner (serve-sim's HTTP
// loop, http_front.h) calls RunDue() when the next event is due, so that
// simulated time = elapsed wall time x time_scale, and each request's tokens
// go to whoever follows its RequestHandle. Running it on the loop that
// writes the streams, as SGLang's one event loop does, hands no token from
// thread to thread: on a 2-core machine a third busy thread (a driver of
// its own) delayed first tokens by a scheduler tick at p99. The clock is an
// interface so tests can run it on a fake.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "sim/online_engine.h"

namespace ppsearch::serve_sim {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() const = 0;  // monotonic
};

class SteadyClock : public Clock {
 public:
  int64_t NowNs() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// Seconds since the Unix epoch, for timestamps clients compare with their own.
double UnixNowS();

struct RequestProgress {
  int64_t output_tokens = 0;
  bool finished = false;
  bool ok = true;
  int http_status = 200;  // when finished and !ok: 400 (never fits) or 500 (engine failed)
  std::string error;
  int64_t submit_sim_ns = 0;
  int64_t first_token_sim_ns = -1;
  int64_t finish_sim_ns = -1;
  double submit_unix_s = 0;
  double first_token_unix_s = 0;  // server wall time the first token was released
  double finish_unix_s = 0;
};

class RequestHandle {
 public:
  using Observer = std::function<void(const RequestProgress&)>;

  RequestProgress Snapshot();

  // `f` is called with the progress at once and then, inside RunDue (or
  // FailAll, Abort), the moment tokens are released or the request
  // finishes. Calls are serialised with each other and with ClearObserver,
  // after which none is in flight; `f` must not call back into the handle
  // or the engine (their locks are held).
  void SetObserver(Observer f);
  void ClearObserver();
  // `f` is called once, with the final progress, when the request finishes
  // (inside RunDue, or on the thread of FailAll); like the observer, it
  // must not call back into the handle or the engine.
  void OnFinish(Observer f);
  // The same, once, when its first token is released.
  void OnFirstToken(Observer f);

 private:
  friend class RealtimeEngine;
  // Updates progress under the lock and tells the observer.
  template <typename Update>
  void Change(Update update);

  std::mutex mu_;
  RequestProgress progress_;
  Observer observer_;
  Observer on_finish_;
  Observer on_first_token_;
  int ticket_ = -1;  // the engine's, guarded by RealtimeEngine::mu_
};

class RealtimeEngine : private sim::EngineListener {
 public:
  // `config`, `cost` and `clock` must outlive the engine.
  RealtimeEngine(const sim::SchedulerConfig& config, const sim::CostModel& cost, double time_scale,
                 const Clock& clock);

  // Called inside RunDue for every launched micro-batch (log lines).
  void SetBatchObserver(std::function<void(const sim::BatchLaunch&, const sim::OnlineEngine&)> f) {
    batch_observer_ = std::move(f);
  }

  // Simulated time 0 is now; nothing runs before.
  void Start();
  // Runs every event due by the clock now, on the caller's thread, and
  // returns the wall seconds until the next one (at most 0.05, so a clock
  // that jumps is read again soon), or a negative number when none is
  // scheduled: after a Submit or an Abort, call it again.
  double RunDue();

  std::shared_ptr<RequestHandle> Submit(int64_t input_tokens, int64_t max_new_tokens);
  // A PD server's request before it may run (a prefill server's waits for
  // its decode server's handshake, a decode server's for its KV): a handle
  // that has nothing to tell yet (its submit time is now). Admit then hands
  // the engine the request, `prefilled` with its prompt computed elsewhere
  // (sim::OnlineEngine::SubmitPrefilled), or Fail ends it.
  std::shared_ptr<RequestHandle> Reserve();
  void Admit(const std::shared_ptr<RequestHandle>& handle, int64_t input_tokens,
             int64_t max_new_tokens, bool prefilled);
  // Finishes a reserved request failed, with `http_status` and `error`.
  void Fail(RequestHandle& handle, int http_status, const std::string& error);
  // The client of `handle` went away: SGLang aborts the request, so the
  // engine stops computing it (it leaves the waiting queue, or finishes with
  // its next result) and the handle finishes failed at once.
  void Abort(RequestHandle& handle);
  // Fails every unfinished request with HTTP 500 and `reason`, and every later one.
  void FailAll(const std::string& reason);

  int in_flight() const;
  // KV tokens the running batch holds now (one DP rank's: serve-sim has one).
  int64_t KvTokensUsed() const;
  int64_t SimNowNs() const;
  int pp_max_micro_batch_size() const;

 private:
  void OnBatchLaunched(const sim::BatchLaunch& launch) override;
  void OnTokens(int request, int64_t output_tokens, int64_t client_ns) override;
  void OnFinished(int request, int64_t client_ns, bool ok) override;
  static void Finish(RequestHandle& h, int64_t sim_ns, bool ok, int status,
                     const std::string& error);

  const Clock& clock_;
  const double time_scale_;
  int64_t start_ns_ = 0;
  mutable std::mutex mu_;
  sim::OnlineEngine engine_;
  std::map<int, std::shared_ptr<RequestHandle>> live_;
  std::map<RequestHandle*, std::shared_ptr<RequestHandle>> reserved_;
  std::function<void(const sim::BatchLaunch&, const sim::OnlineEngine&)> batch_observer_;
  std::string failure_;
  bool started_ = false;
};

}  // namespace ppsearch::serve_sim
