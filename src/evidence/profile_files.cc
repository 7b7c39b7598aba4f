#include "evidence/profile_files.h"

#include <algorithm>
#include <filesystem>

#include "evidence/json_fields.h"
#include "util/files.h"

namespace ppsearch::evidence {

namespace fs = std::filesystem;

nlohmann::json PredictedBreakdownJson(const PredictedBreakdown& b) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageBreakdown& s : b.stages)
    stages.push_back({{"compute", s.compute},
                      {"exposed_comm", s.exposed_comm},
                      {"transfer", s.transfer},
                      {"overhead", s.overhead},
                      {"idle", s.idle}});
  nlohmann::json j = {{"what", "the simulator's breakdown of this sample's layout and concurrency"},
                      {"layout", b.layout},
                      {"concurrency", b.concurrency},
                      {"exposed_comm_share", b.exposed_comm_share},
                      {"bubble_share", b.bubble_share},
                      {"allreduce_per_forward", b.allreduce_per_forward},
                      {"stages", stages}};
  if (b.compute_classes) {
    nlohmann::json classes;
    for (nsys::ComputeClass c : nsys::kAllComputeClasses)
      classes[nsys::ComputeClassName(c)] = (*b.compute_classes)[static_cast<int>(c)];
    j["compute_classes"] = classes;
  }
  return j;
}

Result<PredictedBreakdown> ReadPredictedBreakdown(const nlohmann::json& j,
                                                  const std::string& where) {
  if (!j.is_object()) return MakeError(where + ": not a JSON object");
  const JsonFields f(j, where);
  PredictedBreakdown b;
  for (const auto& [key, what] : {std::pair{"layout", "a string"},
                                  {"concurrency", "an integer"},
                                  {"exposed_comm_share", "a number"},
                                  {"bubble_share", "a number"},
                                  {"allreduce_per_forward", "an integer"},
                                  {"stages", "an array of objects"}})
    PPS_RETURN_IF_ERROR(f.Require(key, what));
  PPS_RETURN_IF_ERROR(f.String("layout", &b.layout));
  PPS_RETURN_IF_ERROR(f.Int("concurrency", &b.concurrency));
  PPS_RETURN_IF_ERROR(f.Number("exposed_comm_share", &b.exposed_comm_share));
  PPS_RETURN_IF_ERROR(f.Number("bubble_share", &b.bubble_share));
  PPS_RETURN_IF_ERROR(f.Int("allreduce_per_forward", &b.allreduce_per_forward));
  PPS_ASSIGN_OR_RETURN(const std::vector<JsonFields> stages, f.FieldsOfEach("stages"));
  for (const JsonFields& s : stages) {
    StageBreakdown st;
    for (const auto& [key, out] : {std::pair{"compute", &st.compute},
                                   {"exposed_comm", &st.exposed_comm},
                                   {"transfer", &st.transfer},
                                   {"overhead", &st.overhead},
                                   {"idle", &st.idle}}) {
      PPS_RETURN_IF_ERROR(s.Require(key, "a number"));
      PPS_RETURN_IF_ERROR(s.Number(key, out));
    }
    b.stages.push_back(st);
  }
  if (j.contains("compute_classes")) {
    PPS_ASSIGN_OR_RETURN(const JsonFields classes, f.Fields("compute_classes"));
    std::array<double, nsys::kComputeClasses> out{};
    for (nsys::ComputeClass c : nsys::kAllComputeClasses) {
      const std::string name = nsys::ComputeClassName(c);
      PPS_RETURN_IF_ERROR(classes.Require(name.c_str(), "a number"));
      PPS_RETURN_IF_ERROR(classes.Number(name.c_str(), &out[static_cast<int>(c)]));
    }
    b.compute_classes = out;
  }
  return b;
}

Result<MeasuredProfile> ReadMeasuredProfile(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return MakeError(where + ": not a JSON object");
  MeasuredProfile m;
  if (j.contains("error")) {
    const JsonFields f(j, where);
    PPS_RETURN_IF_ERROR(f.String("error", &m.error));
    if (m.error.empty()) return f.Wrong("error", "a non-empty string (why there is no analysis)");
    return m;
  }
  PPS_ASSIGN_OR_RETURN(m.summary, nsys::ReadAnalysisSummary(j, where));
  return m;
}

Status WriteSampleProfiles(const RunPaths& paths, const SampleId& id,
                           const std::vector<ProfileFile>& files) {
  for (const ProfileFile& p : files)
    PPS_RETURN_IF_ERROR(WriteFileAtomic(paths.profile(id, p.name), p.analysis.dump(2) + "\n"));
  return Status::Ok();
}

std::vector<std::string> ProfiledSamples(const RunPaths& paths) {
  std::vector<std::string> samples;
  std::error_code ec;
  if (!fs::is_directory(paths.profile_dir(), ec)) return samples;
  for (const auto& d : fs::directory_iterator(paths.profile_dir(), ec))
    if (d.is_directory(ec) && !d.is_symlink(ec)) samples.push_back(d.path().filename().string());
  std::sort(samples.begin(), samples.end());
  return samples;
}

Result<std::vector<ProfileFile>> ReadSampleProfiles(const RunPaths& paths,
                                                    const std::string& sample) {
  const fs::path dir = fs::path(paths.profile_dir()) / sample;
  std::vector<fs::path> names;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec))
    if (f.path().extension() == ".json") names.push_back(f.path());
  std::sort(names.begin(), names.end());
  std::vector<ProfileFile> out;
  for (const fs::path& f : names) {
    PPS_ASSIGN_OR_RETURN(const std::string text, ReadEvidenceFile(f.string()));
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return MakeError(f.string() + ": not a JSON object");
    out.push_back({f.stem().string(), std::move(j)});
  }
  return out;
}

}  // namespace ppsearch::evidence
