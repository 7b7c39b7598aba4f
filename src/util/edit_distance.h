#pragma once
// Levenshtein distance, for "did you mean" hints in error messages.

#include <cstddef>
#include <string_view>

namespace ppsearch {

size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace ppsearch
