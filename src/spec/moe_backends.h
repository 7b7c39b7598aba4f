#pragma once
// The values SGLang's --moe-a2a-backend accepts (server_args.py, the
// argument's choices), for the readers that take a backend by name.

#include <string>

namespace ppsearch::spec {

bool IsMoeA2aBackend(const std::string& name);
// "none, deepep, ...", for messages.
std::string MoeA2aBackendNames();

}  // namespace ppsearch::spec
