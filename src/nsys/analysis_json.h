#pragma once
// What `ppsearch nsys` writes: nsys_analysis.json (the fields of
// data/baseline/pp1-nsys-summary.json, which `ppsearch calibrate
// --profile-summary` reads, then the detail: per GPU and window, medians and
// spreads, collectives by kind) and the human table.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "nsys/analyze.h"

namespace ppsearch::nsys {

// What the profile alone cannot tell: the profiled layout and how many nodes
// its TP groups span. Absent values are written as null.
struct ProfileContext {
  std::optional<int> pp, tp, ep;
  std::optional<int> tp_span_nodes;
};

nlohmann::ordered_json AnalysisJson(const ProfileAnalysis& analysis, const ProfileContext& context);

// `#` metadata lines, a table of the shares per GPU (names, then units), the
// collectives by kind, and a footer with the medians.
std::string AnalysisTable(const ProfileAnalysis& analysis);

}  // namespace ppsearch::nsys
