#pragma once
// Request bodies built ahead of need, in request order, on a thread of their
// own. A 4,096-token body takes a few hundred microseconds to build; built
// when its request is sent, 70 of them after a wave of completions would hold
// the event loop for tens of milliseconds, and every stream's next event (a
// first token among them) would be stamped that late. bench_serving, too,
// has its prompts ready before the clock starts.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loadgen/load_loop.h"

namespace ppsearch::loadgen {

class BodyPrefetch {
 public:
  // Keeps at most `ahead` bodies (at least 1) and `max_bytes` built and not
  // yet taken; always at least one.
  BodyPrefetch(std::function<std::string(const LoopRequest&)> make,
               const std::vector<LoopRequest>& requests, size_t ahead, size_t max_bytes);
  ~BodyPrefetch();
  BodyPrefetch(const BodyPrefetch&) = delete;
  BodyPrefetch& operator=(const BodyPrefetch&) = delete;

  // Waits until the first bodies are built (as many as may be kept ahead).
  void WaitFilled();
  // The next request's body; the i-th call returns request i's.
  std::string TakeNext();

 private:
  void Build();
  bool Full() const;

  const std::function<std::string(const LoopRequest&)> make_;
  const std::vector<LoopRequest>& requests_;
  const size_t ahead_;
  const size_t max_bytes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> ready_;
  size_t ready_bytes_ = 0;
  size_t built_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ppsearch::loadgen
