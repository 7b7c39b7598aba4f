#include "util/parallel.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace ppsearch {

void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& body,
                 const std::function<void(size_t, size_t)>& done) {
  std::atomic<size_t> next{0};
  std::mutex done_mutex;
  size_t finished = 0;
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      body(i);
      if (done) {
        const std::lock_guard<std::mutex> lock(done_mutex);
        done(i, ++finished);
      }
    }
  };
  const size_t wanted = std::min(static_cast<size_t>(std::max(threads, 1)), std::max<size_t>(n, 1));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < wanted; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace ppsearch
