#pragma once
// What `ppsearch search` prints: the ranking with why each candidate is
// there, the refusals by reason, the Pareto front; and the same as JSON.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "search/capacity.h"
#include "search/search.h"
#include "table/table.h"

namespace ppsearch::search {

// The parts both renderings (this text, the HTML page) show.
std::vector<std::string> SummaryLines(const SearchResult& result);  // space, refusals, counts
// `top`: how many ranked candidates the table shows (all that could be the
// best are shown whatever it says).
table::Table RankingTable(const SearchResult& result, int top);
std::string TiedLine(const SearchResult& result);  // who could be the best
// The front's axes, for titles: "input TPS per GPU against TTFT p50".
std::string FrontTitle(const SearchResult& result);
std::vector<std::string> FrontLines(const SearchResult& result);          // the Pareto front
std::vector<std::string> NoneQualifiesLines(const SearchResult& result);  // and the closest
// What the profile's tensor burst gives the candidates that could be the
// best; "" without a burst.
std::string BurstLine(const SearchResult& result);
// The candidates the headroom rule leaves out with SGLang's even layer
// split and the search ranked again with a split: a heading line, then one
// line each, at most `shown` and how many more; empty when there are none.
std::vector<std::string> LayerSplitLines(const SearchResult& result, size_t shown);

std::string RenderSearchText(const SearchResult& result, int top);

// The capacity plan of `--target-rate`: a table of its first `top` rows and
// the fewest GPUs, and as JSON (`capacity`).
std::string RenderCapacityText(const SearchResult& result, const CapacityPlan& plan, int top);
nlohmann::json CapacityToJson(const CapacityPlan& plan);

// Key names are a contract: `candidates`, `rejected`, `pareto`, ...
nlohmann::json SearchToJson(const SearchResult& result);

}  // namespace ppsearch::search
