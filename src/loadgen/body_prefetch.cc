#include "loadgen/body_prefetch.h"

#include <algorithm>

namespace ppsearch::loadgen {

BodyPrefetch::BodyPrefetch(std::function<std::string(const LoopRequest&)> make,
                           const std::vector<LoopRequest>& requests, size_t ahead, size_t max_bytes)
    : make_(std::move(make)),
      requests_(requests),
      ahead_(std::max<size_t>(ahead, 1)),
      max_bytes_(max_bytes) {
  thread_ = std::thread([this] { Build(); });
}

BodyPrefetch::~BodyPrefetch() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool BodyPrefetch::Full() const {
  return !ready_.empty() && (ready_.size() >= ahead_ || ready_bytes_ >= max_bytes_);
}

void BodyPrefetch::Build() {
  std::unique_lock lock(mu_);
  while (!stop_ && built_ < requests_.size()) {
    cv_.wait(lock, [this] { return stop_ || !Full(); });
    if (stop_) break;
    const LoopRequest& r = requests_[built_];
    lock.unlock();
    std::string body = make_(r);
    lock.lock();
    ready_bytes_ += body.size();
    ready_.push_back(std::move(body));
    ++built_;
    cv_.notify_all();
  }
}

void BodyPrefetch::WaitFilled() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return Full() || built_ == requests_.size(); });
}

std::string BodyPrefetch::TakeNext() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !ready_.empty() || built_ == requests_.size(); });
  if (ready_.empty()) return {};  // called more often than there are requests
  std::string body = std::move(ready_.front());
  ready_.pop_front();
  ready_bytes_ -= body.size();
  cv_.notify_all();
  return body;
}

}  // namespace ppsearch::loadgen
