#pragma once
// TCP reachability at the edge: is something listening on host:port?

#include <string>

namespace ppsearch::launch {

// True when a TCP connection to address:port is accepted within `timeout_ms`
// (a refused or timed-out connection, or an unresolvable name, is false).
bool AcceptsConnections(const std::string& address, int port, int timeout_ms);

}  // namespace ppsearch::launch
