#pragma once
// The run's copy of the spec file (metadata/spec.toml) without its secrets.
// Apart from spec/secrets.h because it needs the TOML parser, which the
// readers of a run's evidence (and their fuzzer) do without.

#include <string>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::spec {

// The spec file's text with each secret's value (spec/secrets.h) replaced in
// place by "<redacted>" (a TOML string), everything else byte for byte,
// comments included. The result always parses to the same tree but for those
// values; when an in-place edit cannot guarantee that, the spec is written
// out from its parsed tree instead (comments lost, a first line says so).
Result<std::string> RedactSpecText(const std::string& text, const std::string& path,
                                   const EngineSpec& engine);

}  // namespace ppsearch::spec
