#include "loadgen/routing.h"

namespace ppsearch::loadgen {

const char* RoutingName(Routing routing) {
  return routing == Routing::kRoundRobin ? "round-robin" : "least-outstanding";
}

std::optional<Routing> ParseRouting(std::string_view name) {
  if (name == "least-outstanding") return Routing::kLeastOutstanding;
  if (name == "round-robin") return Routing::kRoundRobin;
  return std::nullopt;
}

size_t Router::Pick() {
  const size_t n = in_flight_.size();
  if (n == 0) return 0;
  size_t pick = next_ % n;
  if (routing_ == Routing::kLeastOutstanding)
    for (size_t k = 1; k < n; ++k) {
      const size_t i = (next_ + k) % n;
      if (in_flight_[i] < in_flight_[pick]) pick = i;
    }
  ++in_flight_[pick];
  next_ = pick + 1;
  return pick;
}

void Router::Done(size_t server) {
  if (server < in_flight_.size() && in_flight_[server] > 0) --in_flight_[server];
}

}  // namespace ppsearch::loadgen
