#include "serve_sim/realtime_engine.h"

#include <algorithm>
#include <cmath>

namespace ppsearch::serve_sim {

double UnixNowS() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

RequestProgress RequestHandle::Snapshot() {
  std::lock_guard lock(mu_);
  return progress_;
}

void RequestHandle::SetObserver(Observer f) {
  std::lock_guard lock(mu_);
  observer_ = std::move(f);
  if (observer_) observer_(progress_);
}

void RequestHandle::ClearObserver() {
  std::lock_guard lock(mu_);
  observer_ = nullptr;
}

void RequestHandle::OnFinish(Observer f) {
  std::lock_guard lock(mu_);
  if (progress_.finished) {
    if (f) f(progress_);
    return;
  }
  on_finish_ = std::move(f);
}

void RequestHandle::OnFirstToken(Observer f) {
  std::lock_guard lock(mu_);
  if (progress_.first_token_sim_ns >= 0) {
    if (f) f(progress_);
    return;
  }
  on_first_token_ = std::move(f);
}

template <typename Update>
void RequestHandle::Change(Update update) {
  std::lock_guard lock(mu_);
  const bool was_finished = progress_.finished;
  const bool had_token = progress_.first_token_sim_ns >= 0;
  if (!update(progress_)) return;
  if (observer_) observer_(progress_);
  if (!had_token && progress_.first_token_sim_ns >= 0 && on_first_token_) {
    Observer f = std::move(on_first_token_);
    on_first_token_ = nullptr;
    f(progress_);
  }
  if (progress_.finished && !was_finished && on_finish_) {
    Observer f = std::move(on_finish_);
    on_finish_ = nullptr;
    f(progress_);
  }
}

RealtimeEngine::RealtimeEngine(const sim::SchedulerConfig& config, const sim::CostModel& cost,
                               double time_scale, const Clock& clock)
    : clock_(clock), time_scale_(time_scale), engine_(config, cost, this) {}

void RealtimeEngine::Start() {
  std::lock_guard lock(mu_);
  if (started_) return;
  start_ns_ = clock_.NowNs();
  started_ = true;
}

double RealtimeEngine::RunDue() {
  std::lock_guard lock(mu_);
  if (!started_) return -1;
  const int64_t now = SimNowNs();
  engine_.RunUntil(now);
  const auto next = engine_.NextEventNs();
  if (!next) return -1;
  // Bounded so a clock that jumps (a fake, a suspended VM) is re-read soon.
  return std::clamp(static_cast<double>(*next - now) / time_scale_ * 1e-9, 0.0, 0.05);
}

int64_t RealtimeEngine::SimNowNs() const {
  if (!started_) return 0;
  return static_cast<int64_t>(
      std::llround(static_cast<double>(clock_.NowNs() - start_ns_) * time_scale_));
}

int RealtimeEngine::in_flight() const {
  std::lock_guard lock(mu_);
  return static_cast<int>(live_.size() + reserved_.size());
}

int64_t RealtimeEngine::KvTokensUsed() const {
  std::lock_guard lock(mu_);
  return engine_.kv_tokens_used();
}

int RealtimeEngine::pp_max_micro_batch_size() const { return engine_.pp_max_micro_batch_size(); }

std::shared_ptr<RequestHandle> RealtimeEngine::Submit(int64_t input_tokens,
                                                      int64_t max_new_tokens) {
  auto handle = std::make_shared<RequestHandle>();
  {
    std::lock_guard lock(mu_);
    const int64_t now = std::max(SimNowNs(), engine_.now_ns());
    handle->progress_.submit_sim_ns = now;
    handle->progress_.submit_unix_s = UnixNowS();
    if (!failure_.empty()) {
      Finish(*handle, now, false, 500, failure_);
      return handle;
    }
    const int ticket = engine_.Submit(now, input_tokens, max_new_tokens);
    handle->ticket_ = ticket;
    live_[ticket] = handle;
  }
  return handle;
}

std::shared_ptr<RequestHandle> RealtimeEngine::Reserve() {
  auto handle = std::make_shared<RequestHandle>();
  std::lock_guard lock(mu_);
  handle->progress_.submit_sim_ns = std::max(SimNowNs(), engine_.now_ns());
  handle->progress_.submit_unix_s = UnixNowS();
  if (!failure_.empty()) {
    Finish(*handle, handle->progress_.submit_sim_ns, false, 500, failure_);
    return handle;
  }
  reserved_[handle.get()] = handle;
  return handle;
}

void RealtimeEngine::Admit(const std::shared_ptr<RequestHandle>& handle, int64_t input_tokens,
                           int64_t max_new_tokens, bool prefilled) {
  std::lock_guard lock(mu_);
  // Gone already: aborted by its client, or failed with the engine.
  if (reserved_.erase(handle.get()) == 0) return;
  const int64_t now = std::max(SimNowNs(), engine_.now_ns());
  const int ticket = prefilled ? engine_.SubmitPrefilled(now, input_tokens, max_new_tokens, -1)
                               : engine_.Submit(now, input_tokens, max_new_tokens);
  handle->ticket_ = ticket;
  live_[ticket] = handle;
}

void RealtimeEngine::Fail(RequestHandle& handle, int http_status, const std::string& error) {
  std::lock_guard lock(mu_);
  if (reserved_.erase(&handle) == 0) return;
  Finish(handle, engine_.now_ns(), false, http_status, error);
}

void RealtimeEngine::Abort(RequestHandle& handle) {
  std::lock_guard lock(mu_);
  if (reserved_.erase(&handle) > 0) {  // its KV has not come: nothing runs yet
    Finish(handle, engine_.now_ns(), false, 499,
           "The client disconnected; the request was aborted.");
    return;
  }
  auto it = live_.find(handle.ticket_);
  if (it == live_.end() || it->second.get() != &handle) return;  // finished already
  engine_.Abort(handle.ticket_);
  Finish(handle, engine_.now_ns(), false, 499, "The client disconnected; the request was aborted.");
  live_.erase(it);
}

void RealtimeEngine::FailAll(const std::string& reason) {
  std::lock_guard lock(mu_);
  failure_ = reason;
  for (auto& [ticket, h] : live_) Finish(*h, engine_.now_ns(), false, 500, reason);
  live_.clear();
  for (auto& [raw, h] : reserved_) Finish(*h, engine_.now_ns(), false, 500, reason);
  reserved_.clear();
}

void RealtimeEngine::OnBatchLaunched(const sim::BatchLaunch& launch) {
  if (batch_observer_) batch_observer_(launch, engine_);
}

void RealtimeEngine::OnTokens(int request, int64_t output_tokens, int64_t client_ns) {
  auto it = live_.find(request);
  if (it == live_.end()) return;  // failed earlier
  it->second->Change([&](RequestProgress& p) {
    if (p.first_token_sim_ns < 0) {
      p.first_token_sim_ns = client_ns;
      p.first_token_unix_s = UnixNowS();
    }
    p.output_tokens = output_tokens;
    return true;
  });
}

void RealtimeEngine::OnFinished(int request, int64_t client_ns, bool ok) {
  auto it = live_.find(request);
  if (it == live_.end()) return;
  Finish(*it->second, client_ns, ok, ok ? 200 : 400,
         ok ? "" : "The input is longer than the KV cache pool can ever hold.");
  live_.erase(it);
}

void RealtimeEngine::Finish(RequestHandle& h, int64_t sim_ns, bool ok, int status,
                            const std::string& error) {
  h.Change([&](RequestProgress& p) {
    if (p.finished) return false;
    p.finished = true;
    p.ok = ok;
    p.http_status = status;
    p.error = error;
    p.finish_sim_ns = sim_ns;
    p.finish_unix_s = UnixNowS();
    return true;
  });
}

}  // namespace ppsearch::serve_sim
