#include "evidence/run_metadata.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "util/files.h"

namespace ppsearch::evidence {
namespace {

RunMetadata Example() {
  RunMetadata m;
  m.run_id = "kimi3-pp-20261201-120000";
  m.engine = "sim";
  m.simulated = true;
  m.tool_version = "0.1.0";
  m.git_sha = "abc";
  m.spec_path = "/x/examples/kimi-k3-pp-search.toml";
  m.overrides = {"workload.requests=80"};
  m.hosts = {"601", "602"};
  m.patches = {{"/p/pp.patch", 12, std::string(64, 'a')}};
  m.calibration = {{"parameters", {{"moe_gemm_eff", 0.5}}}};
  m.workload_seed = 7;
  m.noise = NoiseModel{"lognormal time stretch per repeat", 0.003, 11};
  m.replay = ReplaySource{"/r/summary.csv", "medians", std::string(64, 'b')};
  m.command_line = "ppsearch run x.toml";
  m.started_at = "2026-12-01T12:00:00Z";
  return m;
}

TEST(RunMetadata, RoundTripsEveryKey) {
  const RunMetadata m = Example();
  Result<RunMetadata> back = RunMetadataFromJson(RunMetadataToJson(m), "run.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(RunMetadataToJson(*back), RunMetadataToJson(m));
  EXPECT_EQ(back->schema, kSchemaVersion);
  EXPECT_EQ(back->simulated, true);
  ASSERT_TRUE(back->patches);
  EXPECT_EQ((*back->patches)[0].bytes, 12u);
  ASSERT_TRUE(back->noise);
  EXPECT_EQ(back->noise->seed, 11u);
  EXPECT_EQ(back->overrides, m.overrides);
  ASSERT_TRUE(back->replay);
  EXPECT_EQ(back->replay->kind, "medians");
  EXPECT_EQ(back->replay->sha256, std::string(64, 'b'));
}

TEST(RunMetadata, AbsentKeysKeepTheirDefaults) {
  Result<RunMetadata> m = RunMetadataFromJson(nlohmann::json::object(), "run.json");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_FALSE(m->simulated);
  EXPECT_FALSE(m->patches);  // no list recorded: not the same as an empty one
  EXPECT_TRUE(m->calibration.is_null());
  EXPECT_FALSE(m->noise);
  EXPECT_FALSE(m->replay);  // not a replayed run
}

TEST(RunMetadata, WrongTypesNameTheFileAndKey) {
  auto error = [](const nlohmann::json& j) {
    Result<RunMetadata> m = RunMetadataFromJson(j, "m/run.json");
    return m.ok() ? std::string() : m.error().message;
  };
  EXPECT_EQ(error({{"simulated", "yes"}}),
            "m/run.json: key 'simulated': expected true or false, got string \"yes\"");
  EXPECT_EQ(error({{"engine", 3}}), "m/run.json: key 'engine': expected a string, got number 3");
  EXPECT_EQ(
      error({{"overrides", {1}}}),
      "m/run.json: key 'overrides': expected an array of strings (the --set values), got [1]");
  EXPECT_EQ(error({{"replay", "x.csv"}}),
            "m/run.json: key 'replay': expected an object, got string \"x.csv\"");
  EXPECT_EQ(error({{"replay", {{"kind", "run"}}}}),
            "m/run.json: key 'replay': expected an object with a string 'path', got object "
            "{\"kind\":\"run\"}");
  EXPECT_EQ(error(nlohmann::json::array()), "m/run.json: not a JSON object");
}

TEST(RunMetadata, WrittenAndReadFromARunDirectory) {
  std::string pattern = (std::filesystem::temp_directory_path() / "ppsearch_meta_XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const RunPaths paths{pattern};
  Result<RunMetadata> missing = ReadRunMetadata(paths);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            pattern + ": not a ppsearch run directory: metadata/run.json is missing");
  std::filesystem::create_directories(pattern + "/metadata");
  ASSERT_TRUE(WriteRunMetadata(paths, Example()).ok());
  Result<RunMetadata> read = ReadRunMetadata(paths);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->run_id, "kimi3-pp-20261201-120000");
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace ppsearch::evidence
