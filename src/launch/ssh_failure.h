#pragma once
// What ssh's own failure (exit 255) means, from its standard error: the
// cluster check says "601: unreachable" or "602: authentication failed", not
// the first of ssh's lines (which for a changed host key is a row of '@').

#include <string>

namespace ppsearch::launch {

// "unreachable: ssh: connect to host 601 port 22: No route to host",
// "connection refused: ...", "unknown host name: ...", "authentication failed: ...",
// "host key not accepted: ...", "connection closed by the host: ...", or
// "ssh failed: <its first informative line>".
std::string DescribeSshFailure(const std::string& ssh_stderr);

}  // namespace ppsearch::launch
