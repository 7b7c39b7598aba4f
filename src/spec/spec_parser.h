#pragma once
// Loading an experiment spec: TOML text -> Spec, with every value's origin
// recorded and every mistake reported as "file:line:col: ..." (the formats are
// listed in spec/toml_access.h). The shape of the file is documented by
// examples/kimi-k3-pp-search.toml.
//
// Parsing checks what the spec says, not whether it can run: types, ranges,
// unknown keys, flags the sweep owns. Whether a layout fits the model and the
// cluster (TP x PP = GPUs, experts % EP, ...) is the planner's job; it points
// at the origins recorded here.

#include <string>
#include <vector>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::spec {

// Parses `toml_text` as the spec file `path` (used in messages and to resolve
// relative paths), after applying `overrides`: "key.path=value" strings as
// given to --set, applied in order. A value is read as TOML ("[2,4]", "true",
// "\"x\"", "8192"); a bare word that is not TOML ("ttft_p50", "0.5.18") is a
// string. Errors about an overridden value name the override
// ("--set workload.requests=x: key 'workload.requests': expected an integer, got a string").
Result<Spec> ParseSpec(const std::string& toml_text, const std::string& path,
                       const std::vector<std::string>& overrides = {});

// As ParseSpec, with its messages and origins naming `path` while its
// relative paths resolve as in the file `resolve_as`: a copy of a spec (a
// run's metadata/spec.toml) read where it is, as the original ran.
Result<Spec> ParseSpecAs(const std::string& toml_text, const std::string& path,
                         const std::string& resolve_as,
                         const std::vector<std::string>& overrides = {});

// Reads the file at `path` and parses it with ParseSpec.
Result<Spec> LoadSpec(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace ppsearch::spec
