#include "evidence/spec_json.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace ppsearch::evidence {
namespace {

spec::Spec Narrowed() {
  spec::Spec s;
  s.sweep.layouts = {{8, 4, 4, {}}};
  s.sweep.concurrency = {16};
  s.sweep.repeats = 2;
  s.engine.env = {{"HF_TOKEN", "hf_abc"}, {"NCCL_DEBUG", "WARN"}};
  return s;
}

TEST(SpecJson, SecretValuesAreRedactedAndTheSweepIsRecorded) {
  const nlohmann::json j = SpecToJson(Narrowed());
  EXPECT_EQ(j["engine"]["env"]["HF_TOKEN"], "<redacted>");
  EXPECT_EQ(j["engine"]["env"]["NCCL_DEBUG"], "WARN");
  EXPECT_EQ(j["sweep"]["layouts"][0]["pp"], 8);
  EXPECT_EQ(j["sweep"]["concurrency"][0], 16);
}

TEST(SpecJson, TheSearchSectionIsRecordedWithEmptyListsWhereAbsent) {
  spec::Spec s = Narrowed();
  EXPECT_EQ(SpecToJson(s)["search"]["pp"], nlohmann::json::array());
  EXPECT_EQ(SpecToJson(s)["search"]["concurrency"], nlohmann::json::array());
  s.search.pp = {4, 8};
  s.search.chunked_prefill_size = {4096};
  const nlohmann::json j = SpecToJson(s);
  EXPECT_EQ(j["search"]["pp"], nlohmann::json({4, 8}));
  EXPECT_EQ(j["search"]["chunked_prefill_size"], nlohmann::json({4096}));
  EXPECT_EQ(j["search"]["ep"], nlohmann::json::array());
}

// What the runner writes is what the analysis reads back: the sweep the run
// ran replaces the spec file's own, and the file's layouts keep their origin.
TEST(SpecJson, TheRecordedSweepIsTheOneTheAnalysisReads) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ppsearch_sj_XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const RunPaths paths{pattern};
  spec::Spec full;
  full.sweep.layouts = {{2, 16, 4, {}}, {8, 4, 4, {"x.toml", 12, 3, "sweep.layouts[1]"}}};
  full.sweep.concurrency = {8, 16};
  full.sweep.repeats = 3;
  spec::Spec untouched = full;
  ApplyRecordedSweep(paths, untouched);  // no file: the spec stays as it is
  EXPECT_EQ(untouched.sweep.layouts.size(), 2u);
  std::filesystem::create_directories(pattern + "/metadata");
  std::ofstream(paths.spec_resolved_json()) << SpecToJson(Narrowed()).dump(2);
  ApplyRecordedSweep(paths, full);
  ASSERT_EQ(full.sweep.layouts.size(), 1u);
  EXPECT_EQ(full.sweep.layouts[0].origin.line, 12);
  EXPECT_EQ(full.sweep.concurrency, std::vector<int>{16});
  EXPECT_EQ(full.sweep.repeats, 2);

  // A disaggregated deployment is recorded as its two pools and read back whole.
  spec::LayoutSpec prefill, decode;
  prefill.tp = decode.tp = 8;
  decode.dp = 8;
  decode.instances = 3;
  spec::Spec pd = Narrowed();
  pd.sweep.layouts = {spec::DeploymentLayout(prefill, decode, {"pd.toml", 44, 1, "sweep.prefill"})};
  const nlohmann::json j = SpecToJson(pd);
  EXPECT_EQ(j["sweep"]["layouts"][0]["decode"]["instances"], 3);
  EXPECT_FALSE(j["sweep"]["layouts"][0].contains("pp"));
  std::ofstream(paths.spec_resolved_json(), std::ios::trunc) << j.dump(2);
  spec::Spec read = pd;
  ApplyRecordedSweep(paths, read);
  ASSERT_EQ(read.sweep.layouts.size(), 1u);
  EXPECT_EQ(read.sweep.layouts[0], pd.sweep.layouts[0]);
  EXPECT_EQ(read.sweep.layouts[0].origin.line, 44);
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace ppsearch::evidence
