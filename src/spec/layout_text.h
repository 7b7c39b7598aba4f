#pragma once
// A layout typed on a command line: "PP8/TP4/EP4", "pp8/tp4/ep4" or "8/4/4"
// ("PP1/TP8/EP8/DP8" or "1/8/8/8" with DP attention, "2xPP2/TP8/EP4" or
// "2x2/8/4" with two instances), and a layout's slug in file and sample
// names ("pp8-tp4-ep4", "pp1-tp8-ep8-dp8", "2x-pp2-tp8-ep4").

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::spec {

// -> {8, 4, 4}, with origin "--layout TEXT" so later messages point at the
// argument. The error names the argument and the expected form.
Result<LayoutSpec> ParseLayoutText(const std::string& text);

// The layout LayoutSpec::Slug() wrote at the start of `text`, and how many
// characters it took; nullopt when `text` does not start with one.
std::optional<std::pair<LayoutSpec, size_t>> ParseSlugPrefix(std::string_view text);

}  // namespace ppsearch::spec
