#pragma once
// --set overrides, applied to the parsed TOML tree before it becomes a Spec so
// an overridden value goes through exactly the checks a written one does.

#include <toml++/toml.h>

#include <string>

#include "util/result.h"

namespace ppsearch::spec {

// What messages call an override: "--set workload.requests=80".
std::string OverrideLabel(const std::string& override_text);

// Sets the value at a dotted key path ("engine.args.chunked-prefill-size=16384"),
// creating missing tables. The new nodes carry OverrideLabel as their source
// path (see SpecSource). Fails on malformed text or a path through a non-table.
Status ApplyOverride(const std::string& override_text, toml::table* root);

}  // namespace ppsearch::spec
