#include "server/stream_pump.h"

#include <httplib.h>

#include <condition_variable>
#include <mutex>

namespace ppsearch::server {

bool PumpStream(RequestHandle& handle, httplib::DataSink& sink, StreamRenderer render,
                const std::atomic<bool>& stopping) {
  // `mu` serialises every use of `sink` (httplib's sink is not thread-safe):
  // the engine thread's writes and this thread's liveness check.
  std::mutex mu;
  std::condition_variable cv;
  bool complete = false;
  bool broken = false;
  handle.SetObserver([&](const RequestProgress& p) {
    std::lock_guard lock(mu);
    if (complete || broken) return;
    const StreamEvents e = render(p);
    if (!e.text.empty() && !sink.write(e.text.data(), e.text.size())) {
      broken = true;
    } else {
      complete = e.last;
    }
    if (complete || broken) cv.notify_all();
  });
  {
    // Polled so a client that closes while no token is due, and a shutdown,
    // are noticed within a fraction of a second.
    constexpr auto kPoll = std::chrono::milliseconds(200);
    std::unique_lock lock(mu);
    while (!complete && !broken && !stopping) {
      cv.wait_for(lock, kPoll);
      if (!complete && !broken && !sink.is_writable()) broken = true;
    }
  }
  handle.ClearObserver();  // after this no write is in flight
  std::lock_guard lock(mu);
  return complete && !broken;
}

}  // namespace ppsearch::server
