#pragma once
// A layout typed on a command line: "PP8/TP4/EP4", "pp8/tp4/ep4" or "8/4/4".

#include <string>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::spec {

// -> {8, 4, 4}, with origin "--layout TEXT" so later messages point at the
// argument. The error names the argument and the expected form.
Result<LayoutSpec> ParseLayoutText(const std::string& text);

}  // namespace ppsearch::spec
