#pragma once
// How the load generator spreads a sample over several servers (the
// instances of one layout, each a whole deployment): the choice a router in
// front of them would make for each new request. Every record keeps the
// index of the server that served it (workload::RequestRecord::instance).

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace ppsearch::loadgen {

enum class Routing {
  // The server with the fewest requests in flight; ties go to the next one
  // after the last pick, so equally loaded servers take turns.
  kLeastOutstanding,
  kRoundRobin,  // each server in turn, whatever it holds
};

const char* RoutingName(Routing routing);  // "least-outstanding", "round-robin"
std::optional<Routing> ParseRouting(std::string_view name);

// The routing state of one sample: what each server holds in flight.
class Router {
 public:
  Router(size_t servers, Routing routing) : in_flight_(servers, 0), routing_(routing) {}

  // The server of the next request; counts it in flight there.
  size_t Pick();
  // A request that server `server` held has finished.
  void Done(size_t server);

  const std::vector<int>& in_flight() const { return in_flight_; }

 private:
  std::vector<int> in_flight_;
  Routing routing_;
  size_t next_ = 0;  // where the next turn (or tie-break) starts
};

}  // namespace ppsearch::loadgen
