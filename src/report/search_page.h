#pragma once
// The page `ppsearch search SPEC --html FILE` writes: the search's summary,
// its ranking, who could still be the best, the refusals by reason and the
// Pareto front of throughput per GPU against TTFT as a chart. It renders
// the search's numbers (search/search_render.h writes the same parts as text).

#include <string>

#include "search/search.h"

namespace ppsearch::report {

std::string RenderSearchHtml(const std::string& spec_path, const search::SearchResult& result,
                             int top);

}  // namespace ppsearch::report
