#pragma once
// profile/<sample>/<name>.json, a sample's profile evidence, reader and
// writer together (evidence.h maps the directory):
//   <host>.json, file.json  the Nsight Systems analysis of a node's profile
//                           or of the export the spec names, as `ppsearch
//                           nsys --json` writes it (nsys/analysis_json.h),
//                           kept whole; or {"error": why, "report": path}
//                           when the profile could not be analysed
//   predicted.json          the simulator's breakdown of the same layout
//                           and concurrency (PredictedBreakdown)

#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "nsys/analysis_json.h"
#include "util/result.h"

namespace ppsearch::evidence {

// One file of a sample's profile evidence: `name` is the host, "file" or
// "predicted".
struct ProfileFile {
  std::string name;
  nlohmann::json analysis;
};

inline constexpr char kPredictedProfile[] = "predicted";

// The simulator's shares of one stage's time.
struct StageBreakdown {
  double compute = 0, exposed_comm = 0, transfer = 0, overhead = 0, idle = 0;
};

// What the simulator predicts for a profiled sample's layout and
// concurrency: the numbers its profile is read against.
struct PredictedBreakdown {
  std::string layout;
  int concurrency = 0;
  double exposed_comm_share = 0;
  double bubble_share = 0;
  int allreduce_per_forward = 0;
  std::vector<StageBreakdown> stages;
  // The compute by class, mean over stages of each class's share of the
  // window, in nsys::kAllComputeClasses' order (predict::MeanClassShares);
  // absent from files written before the classes were.
  std::optional<std::array<double, nsys::kComputeClasses>> compute_classes;
};

nlohmann::json PredictedBreakdownJson(const PredictedBreakdown& breakdown);
// Every key is required; errors name `where` and the key.
Result<PredictedBreakdown> ReadPredictedBreakdown(const nlohmann::json& j,
                                                  const std::string& where);

// A node's (or the export's) analysis: its summary, or why there is none.
struct MeasuredProfile {
  std::optional<nsys::AnalysisSummary> summary;
  std::string error;  // set when the profile could not be analysed
};
Result<MeasuredProfile> ReadMeasuredProfile(const nlohmann::json& j, const std::string& where);

// Writes `files` under profile/<sample>/, atomically, one per name.
Status WriteSampleProfiles(const RunPaths& paths, const SampleId& id,
                           const std::vector<ProfileFile>& files);

// The samples with a profile directory, sorted; none when there is none.
std::vector<std::string> ProfiledSamples(const RunPaths& paths);

// `sample`'s profile files sorted by name, each a JSON object (a file that
// is not is an error naming it); none when the sample has no directory.
Result<std::vector<ProfileFile>> ReadSampleProfiles(const RunPaths& paths,
                                                    const std::string& sample);

}  // namespace ppsearch::evidence
