#pragma once
// What `ppsearch search` prints: the ranking with why each candidate is
// there, the refusals by reason, the Pareto front; and the same as JSON.

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "search/search.h"

namespace ppsearch::search {

// `top`: how many ranked candidates the table shows (all that could be the
// best are shown whatever it says).
std::string RenderSearchText(const SearchResult& result, int top);

// Key names are a contract: `candidates`, `rejected`, `pareto`, ...
nlohmann::json SearchToJson(const SearchResult& result);

}  // namespace ppsearch::search
