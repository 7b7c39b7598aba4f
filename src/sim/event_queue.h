#pragma once
// Deterministic discrete-event queue: integer nanoseconds, ties broken by the
// order events were pushed, so a simulation replays identically.

#include <cstdint>
#include <queue>
#include <vector>

namespace ppsearch::sim {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    int64_t time_ns;
    uint64_t seq;
    Payload payload;
  };

  void Push(int64_t time_ns, Payload payload) { heap_.push(Event{time_ns, next_seq_++, payload}); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& Top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace ppsearch::sim
