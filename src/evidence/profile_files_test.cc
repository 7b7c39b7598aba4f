#include "evidence/profile_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

namespace ppsearch::evidence {
namespace {

using ::testing::HasSubstr;

TEST(ProfileFiles, APredictedBreakdownReadsBackAsWritten) {
  PredictedBreakdown b;
  b.layout = "PP2/TP16/EP4";
  b.concurrency = 16;
  b.exposed_comm_share = 0.41;
  b.bubble_share = 0.12;
  b.allreduce_per_forward = 94;
  b.stages = {{0.5, 0.3, 0.05, 0.05, 0.1}, {0.6, 0.2, 0.0, 0.05, 0.15}};
  auto back = ReadPredictedBreakdown(PredictedBreakdownJson(b), "predicted.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->layout, "PP2/TP16/EP4");
  EXPECT_EQ(back->concurrency, 16);
  EXPECT_DOUBLE_EQ(back->exposed_comm_share, 0.41);
  EXPECT_DOUBLE_EQ(back->bubble_share, 0.12);
  EXPECT_EQ(back->allreduce_per_forward, 94);
  ASSERT_EQ(back->stages.size(), 2u);
  EXPECT_DOUBLE_EQ(back->stages[1].idle, 0.15);
  EXPECT_DOUBLE_EQ(back->stages[0].transfer, 0.05);
  EXPECT_FALSE(back->compute_classes.has_value());  // written without: read without
  b.compute_classes = std::array<double, nsys::kComputeClasses>{0.3, 0.15, 0.05, 0.05};
  const nlohmann::json j = PredictedBreakdownJson(b);
  EXPECT_DOUBLE_EQ(j["compute_classes"]["moe"].get<double>(), 0.15);
  back = ReadPredictedBreakdown(j, "predicted.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->compute_classes.has_value());
  EXPECT_EQ(*back->compute_classes, *b.compute_classes);
}

TEST(ProfileFiles, EveryKeyOfAPredictionIsRequiredAndNamed) {
  nlohmann::json j = PredictedBreakdownJson(PredictedBreakdown{
      "PP1/TP32/EP4", 8, 0.5, 0, 187, {{0.5, 0.5, 0, 0, 0}}, {{0.2, 0.1, 0.1, 0.1}}});
  j["stages"][0].erase("overhead");
  auto r = ReadPredictedBreakdown(j, "p.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("p.json: key 'stages[0].overhead' must be a number"));
  j.erase("concurrency");
  r = ReadPredictedBreakdown(j, "p.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("p.json: key 'concurrency' must be an integer"));
  j["concurrency"] = 8;
  j["stages"][0]["overhead"] = 0;
  j["compute_classes"].erase("attention");
  r = ReadPredictedBreakdown(j, "p.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message,
              HasSubstr("p.json: key 'compute_classes.attention' must be a number"));
}

TEST(ProfileFiles, AnAnalysisWithoutItsFiguresOrAnEmptyErrorIsRefused) {
  auto r = ReadMeasuredProfile(nlohmann::json{{"error", ""}}, "n0.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("n0.json: key 'error' must be a non-empty string"));
  r = ReadMeasuredProfile(nlohmann::json{{"error", "nsys export failed"}}, "n0.json");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->summary.has_value());
  EXPECT_EQ(r->error, "nsys export failed");
  r = ReadMeasuredProfile(nlohmann::json::array(), "n0.json");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("n0.json: not a JSON object"));
}

TEST(ProfileFiles, WrittenFilesAreListedAndReadBackSortedByName) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ppsearch_pf_XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const RunPaths paths{pattern};
  EXPECT_TRUE(ProfiledSamples(paths).empty());
  auto id = ParseSampleId("pp1-tp32-ep4_c8_r1");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(
      WriteSampleProfiles(paths, *id, {{"predicted", {{"a", 1}}}, {"n0", {{"b", 2}}}, {"file", {}}})
          .ok());
  EXPECT_EQ(ProfiledSamples(paths), std::vector<std::string>{"pp1-tp32-ep4_c8_r1"});
  auto files = ReadSampleProfiles(paths, "pp1-tp32-ep4_c8_r1");
  // "file" was written as JSON null, which is not an object: named.
  ASSERT_FALSE(files.ok());
  EXPECT_THAT(files.error().message, HasSubstr("file.json: not a JSON object"));
  ASSERT_TRUE(WriteSampleProfiles(paths, *id, {{"file", nlohmann::json::object()}}).ok());
  files = ReadSampleProfiles(paths, "pp1-tp32-ep4_c8_r1");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0].name, "file");
  EXPECT_EQ((*files)[1].name, "n0");
  EXPECT_EQ((*files)[2].name, "predicted");
  EXPECT_EQ((*files)[2].analysis["a"], 1);
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace ppsearch::evidence
