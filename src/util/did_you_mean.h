#pragma once
// The one "did you mean" rule of every error message that suggests a name
// (an unknown key, command, hardware profile, configuration, sample or
// state): the candidate closest to the word by Levenshtein distance, letters
// compared case-insensitively, when that distance is at most
// min(2, max(1, n / 3)) for a candidate of n characters (one edit under six
// characters, else two); on a tie the earlier candidate. So one slip in a
// short name ("tp" -> "pp") and two in a longer one ("worklaod" ->
// "workload") are suggested; "h20" is not taken for "b200", nor one sample
// id for another that differs in every number.

#include <string>
#include <string_view>
#include <vector>

namespace ppsearch {

// The suggestion by the rule above; "" when no candidate is that close.
std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" for ClosestName's suggestion x, else "".
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

// Levenshtein distance (insertions, deletions, substitutions), letters
// compared case-insensitively.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace ppsearch
