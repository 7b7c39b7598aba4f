#pragma once
// What `ppsearch nsys` writes: nsys_analysis.json (the fields of
// data/baseline/pp1-nsys-summary.json, which `ppsearch calibrate
// --profile-summary` reads, then the detail: per GPU and window, medians and
// spreads, collectives by kind) and the human table.

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "nsys/analyze.h"
#include "util/result.h"

namespace ppsearch::nsys {

// What the profile alone cannot tell: the profiled layout and how many nodes
// its TP groups span. Absent values are written as null.
struct ProfileContext {
  std::optional<int> pp, tp, ep;
  std::optional<int> tp_span_nodes;
};

nlohmann::ordered_json AnalysisJson(const ProfileAnalysis& analysis, const ProfileContext& context);

// The headline figures of an analysis AnalysisJson wrote, read back: what a
// report shows of a sample's profile.
struct AnalysisSummary {
  double exposed_share_median = 0;  // exposed_nccl_share_of_prefill_window_median
  double exposed_share_spread = 0;
  double overlapped_share_median = 0;
  double compute_only_share_median = 0;
  double idle_share_median = 0;
  double allreduce_calls_in_window = 0;
  int windows = 0;
  int gpus = 0;
  std::string overlap_words;  // compute_communication_overlap
  // compute_classes' share medians, in kAllComputeClasses' order; absent
  // from analyses written before the classes were.
  std::optional<std::array<double, kComputeClasses>> class_share_median;
};

// The share medians of `j`'s "compute_classes" (as AnalysisJson writes it),
// in kAllComputeClasses' order; nullopt when `j` has no such key. A class
// missing or below 0 is an error "<where>: key
// 'compute_classes.<class>.share.median': ...".
Result<std::optional<std::array<double, kComputeClasses>>> ReadClassShares(
    const nlohmann::json& j, const std::string& where);

// Reads `j`'s summary; a missing key or one of another type is an error
// "<where>: key '<key>' must be <what>" (never read as 0).
Result<AnalysisSummary> ReadAnalysisSummary(const nlohmann::json& j, const std::string& where);

// `#` metadata lines, a table of the shares per GPU (names, then units), the
// collectives by kind, and a footer with the medians.
std::string AnalysisTable(const ProfileAnalysis& analysis);

}  // namespace ppsearch::nsys
