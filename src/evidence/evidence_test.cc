// The manifest reader: every line it cannot use is named by its line number,
// a torn last line (a crash mid-write) is only a warning, and the runner's
// verdicts come back per sample.

#include "evidence/evidence.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "util/files.h"

namespace ppsearch::evidence {
namespace {

namespace fs = std::filesystem;

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("ppsearch_manifest_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Manifest Read(const std::string& text) {
    EXPECT_TRUE(WriteFileAtomic(dir_ + "/manifest.jsonl", text).ok());
    Result<Manifest> m = ReadManifestEntries(RunPaths{dir_});
    EXPECT_TRUE(m.ok()) << m.error().message;
    return m.ok() ? *m : Manifest{};
  }

  std::string dir_;
};

TEST_F(ManifestTest, LastStateVerdictAndLineOfEverySample) {
  Manifest m = Read(
      R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "started"})"
      "\n"
      R"({"sample": "pp1-tp32-ep4_c8_r2", "state": "started"})"
      "\n"
      R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "completed", "verdict": "ok", "detail": "fine"})"
      "\n"
      R"({"sample": "pp1-tp32-ep4_c8_r2", "state": "failed", "verdict": "engine_died", )"
      R"("detail": "node 603 exited with code 1"})"
      "\n");
  EXPECT_TRUE(m.exists);
  EXPECT_TRUE(m.problems.empty());
  EXPECT_TRUE(m.warnings.empty());
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(m.entries[0].sample, "pp1-tp32-ep4_c8_r1");
  EXPECT_EQ(m.entries[0].state, SampleState::kCompleted);
  EXPECT_STREQ(VerdictName(*m.entries[0].verdict), "ok");
  EXPECT_EQ(m.entries[0].line, 3);
  EXPECT_EQ(m.entries[1].state, SampleState::kFailed);
  EXPECT_STREQ(VerdictName(*m.entries[1].verdict), "engine_died");
  EXPECT_EQ(m.entries[1].detail, "node 603 exited with code 1");
  EXPECT_EQ(m.entries[1].line, 4);
}

TEST_F(ManifestTest, ASecondVerdictThatDiffersIsAConflictUnlessARerunStartedBetween) {
  Manifest m =
      Read(R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "started"})"
           "\n"
           R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "completed", "verdict": "ok"})"
           "\n"
           R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "completed", "verdict": "requests_failed"})"
           "\n"
           R"({"sample": "pp1-tp32-ep4_c8_r2", "state": "failed", "verdict": "engine_died"})"
           "\n"
           R"({"sample": "pp1-tp32-ep4_c8_r2", "state": "started"})"
           "\n"
           R"({"sample": "pp1-tp32-ep4_c8_r2", "state": "completed", "verdict": "ok"})"
           "\n"
           R"({"sample": "pp1-tp32-ep4_c8_r2", "state": "completed", "verdict": "ok"})"
           "\n");
  EXPECT_TRUE(m.problems.empty());
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(m.entries[0].conflicts,
            std::vector<std::string>{
                "manifest.jsonl:2 says completed/ok, line 3 says completed/requests_failed"});
  EXPECT_STREQ(VerdictName(*m.entries[0].verdict), "requests_failed");
  // A rerun after a failure, and the same verdict twice, are no conflict.
  EXPECT_TRUE(m.entries[1].conflicts.empty());
}

TEST_F(ManifestTest, GarbageAndMisspelledLinesAreProblemsNamingTheirLine) {
  Manifest m = Read(R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "started"})"
                    "\n"
                    "garbage\n"
                    R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "complted"})"
                    "\n"
                    R"({"sample": 7, "state": "completed"})"
                    "\n"
                    R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "completed", "verdict": "fine"})"
                    "\n"
                    R"({"sample": "pp1-tp32-ep4_c8_r2", "state": "completed"})"
                    "\n");
  ASSERT_EQ(m.problems.size(), 4u);
  EXPECT_EQ(m.problems[0], "manifest.jsonl:2: not valid JSON; the line was skipped");
  EXPECT_EQ(m.problems[1],
            "manifest.jsonl:3: sample pp1-tp32-ep4_c8_r1: unknown state 'complted' (did you mean "
            "'completed'?); expected one of started, completed, failed, interrupted; the line was "
            "skipped");
  EXPECT_EQ(m.problems[2],
            "manifest.jsonl:4: expected a string 'sample' (a sample id such as "
            "pp2-tp16-ep4_c8_r1); the line was skipped");
  EXPECT_EQ(m.problems[3],
            "manifest.jsonl:5: sample pp1-tp32-ep4_c8_r1: unknown verdict 'fine'; expected one "
            "of ok, engine_failed_to_start, engine_died, requests_failed, log_findings, timeout, "
            "preflight_failed, invalid_evidence; the line was skipped");
  ASSERT_EQ(m.entries.size(), 2u);
  EXPECT_EQ(m.entries[0].state, SampleState::kStarted);  // its "completed" lines were unreadable
}

TEST_F(ManifestTest, ATornLastLineIsAWarningNamingItsLine) {
  Manifest m = Read(R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "completed"})"
                    "\n"
                    R"({"sample": "pp1-tp32-ep4_c8_r2", "sta)");
  EXPECT_TRUE(m.problems.empty());
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_EQ(m.warnings[0],
            "manifest.jsonl:2: the last line is torn (a crash mid-write?) and was skipped");
  ASSERT_EQ(m.entries.size(), 1u);
}

TEST_F(ManifestTest, ReadManifestKeepsItsShapeForTheRunner) {
  Read(R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "started"})"
       "\n"
       R"({"sample": "pp1-tp32-ep4_c8_r1", "state": "completed"})"
       "\n");
  Result<std::vector<std::pair<std::string, SampleState>>> m = ReadManifest(RunPaths{dir_});
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].first, "pp1-tp32-ep4_c8_r1");
  EXPECT_EQ((*m)[0].second, SampleState::kCompleted);
}

TEST_F(ManifestTest, NoManifestIsAnEmptyOne) {
  Result<Manifest> m = ReadManifestEntries(RunPaths{dir_ + "/none"});
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(m->exists);
  EXPECT_TRUE(m->entries.empty());
}

TEST(Records, InvalidUtf8InAnErrorStringIsReplacedNotThrown) {
  workload::RequestRecord r;
  r.error = std::string("bad \xff\xfe bytes");
  const std::string line = RecordsToJsonl({r});
  EXPECT_NE(line.find("bad \xef\xbf\xbd\xef\xbf\xbd bytes"), std::string::npos) << line;
}

}  // namespace
}  // namespace ppsearch::evidence

namespace ppsearch::evidence {
namespace {

// Found by fuzz/evidence_fuzz.cc: nlohmann's get<int64_t>() on 4.4e19 is an
// undefined conversion.
// The fields a record must have, and no more.
nlohmann::json MinimalRecord() {
  return {{"id", 1},     {"status", "ok"},    {"send_ns", 0},      {"first_token_ns", 5},
          {"end_ns", 6}, {"input_tokens", 8}, {"output_tokens", 1}};
}

TEST(Records, NumbersThatAreNotInt64AreErrorsNamingTheField) {
  const nlohmann::json base = MinimalRecord();
  ASSERT_TRUE(RecordFromJson(base, "raw/x.jsonl:1").ok());
  nlohmann::json big = base;
  big["id"] = nlohmann::json::parse("44444444444444444440");
  auto r = RecordFromJson(big, "raw/x.jsonl:1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "raw/x.jsonl:1: malformed request record: 'id' must be an integer, got "
            "4.444444444444444e+19");
  nlohmann::json fractional = base;
  fractional["send_ns"] = 1.5;
  EXPECT_FALSE(RecordFromJson(fractional, "raw/x.jsonl:2").ok());
  // A number past double's range fails while parsing, as a named line.
  const std::string path = ::testing::TempDir() + "overflow.jsonl";
  std::ofstream(path) << "{\"id\": 0, \"e2e_s\": 8.5e308}\n";
  auto read = ReadRecords(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().message.rfind(path + ":1: not valid JSON: ", 0), 0u)
      << read.error().message;
  nlohmann::json unsigned_big = base;
  unsigned_big["end_ns"] = nlohmann::json::parse("18446744073709551615");
  EXPECT_FALSE(RecordFromJson(unsigned_big, "raw/x.jsonl:3").ok());
}

}  // namespace
}  // namespace ppsearch::evidence

namespace ppsearch::evidence {
namespace {

TEST(SampleIdTest, DpAttentionLayoutsRoundTripAndOldIdsStillRead) {
  Result<SampleId> old = ParseSampleId("pp2-tp16-ep4_c8_r1");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->layout.dp, 1);
  EXPECT_EQ(old->str(), "pp2-tp16-ep4_c8_r1");
  Result<SampleId> dp = ParseSampleId("pp1-tp8-ep8-dp8_c16_r3");
  ASSERT_TRUE(dp.ok());
  EXPECT_EQ(dp->layout.Label(), "PP1/TP8/EP8/DP8");
  EXPECT_EQ(dp->concurrency, 16);
  EXPECT_EQ(dp->repeat, 3);
  EXPECT_EQ(dp->str(), "pp1-tp8-ep8-dp8_c16_r3");
  EXPECT_FALSE(ParseSampleId("pp1-tp8-ep8-dp_c16_r3").ok());
  EXPECT_FALSE(ParseSampleId("pp1-tp8-ep8-dp8_c16_r3x").ok());
}

TEST(Records, SimulatedChunkTimesAreWrittenAsGaps) {
  workload::RequestRecord r;
  r.first_token_ns = 1'000'000;
  r.end_ns = 3'500'400;
  r.output_tokens = 3;
  r.chunk_ns = {1'000'000, 2'000'400, 3'500'400};
  const std::string line = RecordsToJsonl({r});
  EXPECT_NE(line.find("\"chunk_gaps_us\":[1000,1500]"), std::string::npos) << line;
}

TEST(Records, ChunkTimingRoundTripsAndIsLeftOutOfPrefillOnlyRecords) {
  workload::RequestRecord r;
  r.id = 3;
  r.first_token_ns = 5'000;
  r.end_ns = 40'000;
  r.output_tokens = 5;
  EXPECT_EQ(RecordsToJsonl({r}).find("chunk_"), std::string::npos);
  r.chunk_gaps_us = {10, 0, 25};
  r.chunk_tokens = {1, 2, 1};
  const std::string line = RecordsToJsonl({r});
  EXPECT_NE(line.find("\"chunk_gaps_us\":[10,0,25]"), std::string::npos) << line;
  EXPECT_NE(line.find("\"chunk_tokens\":[1,2,1]"), std::string::npos) << line;
  auto back = ParseRecords(line, "raw/x.jsonl");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].chunk_gaps_us, r.chunk_gaps_us);
  EXPECT_EQ((*back)[0].chunk_tokens, r.chunk_tokens);
  EXPECT_EQ((*back)[0].chunk_token_count(1), 2);
  // One token a chunk is the file's default: the counts are left out.
  r.chunk_tokens = {1, 1, 1};
  EXPECT_EQ(RecordsToJsonl({r}).find("chunk_tokens"), std::string::npos);
}

TEST(Records, MalformedChunkArraysAreErrorsNamingTheField) {
  const nlohmann::json base = MinimalRecord();
  nlohmann::json negative = base;
  negative["chunk_gaps_us"] = {4, -1};
  auto r = RecordFromJson(negative, "raw/x.jsonl:1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "raw/x.jsonl:1: malformed request record: 'chunk_gaps_us' entry 1 must be an integer "
            ">= 0, got -1");
  nlohmann::json uneven = base;
  uneven["chunk_gaps_us"] = {4, 5};
  uneven["chunk_tokens"] = {1};
  r = RecordFromJson(uneven, "raw/x.jsonl:2");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "raw/x.jsonl:2: malformed request record: 'chunk_tokens' has 1 entries, "
            "'chunk_gaps_us' 2 (one per chunk)");
  nlohmann::json zero_tokens = base;
  zero_tokens["chunk_gaps_us"] = {4};
  zero_tokens["chunk_tokens"] = {0};
  EXPECT_FALSE(RecordFromJson(zero_tokens, "raw/x.jsonl:3").ok());
}

// Every place of a run directory has one name: joined to the root, or alone
// with an empty root (what messages and evidence problems quote), a host
// name never leaving the directory, a trailing slash not doubled.
TEST(RunPathsTest, EachPlaceIsNamedOnceWithOrWithoutTheRoot) {
  spec::LayoutSpec layout;
  layout.pp = 2;
  layout.tp = 16;
  layout.ep = 4;
  const SampleId id{layout, 8, 1};
  const RunPaths run{"results/r1"};
  const RunPaths place;
  EXPECT_EQ(place.raw(id), "raw/pp2-tp16-ep4_c8_r1.jsonl");
  EXPECT_EQ(run.raw(id), "results/r1/raw/pp2-tp16-ep4_c8_r1.jsonl");
  EXPECT_EQ(run.raw(id), run.raw(id.str()));
  EXPECT_EQ(place.bench(id), "bench/pp2-tp16-ep4_c8_r1.json");
  EXPECT_EQ(place.gpu(id, "601"), "gpu/pp2-tp16-ep4_c8_r1/601.csv");
  EXPECT_EQ(place.service(id, "601"), "service/pp2-tp16-ep4_c8_r1/601.log");
  EXPECT_EQ(place.gpu_dir(id.str()) + "/601.csv", place.gpu(id, "601"));
  EXPECT_EQ(place.service(id, "../x"),
            "service/pp2-tp16-ep4_c8_r1/" + SafePathComponent("../x") + ".log");
  EXPECT_EQ(place.profile(id, "601"), "profile/pp2-tp16-ep4_c8_r1/601.json");
  EXPECT_EQ(place.run_json(), "metadata/run.json");
  EXPECT_EQ(place.spec_toml(), "metadata/spec.toml");
  EXPECT_EQ(place.trajectory_jsonl(), std::string("metadata/") + kTrajectoryFile);
  EXPECT_EQ(place.baseline_csv(), "metadata/baseline.csv");
  EXPECT_EQ(place.summary_csv(), "summary.csv");
  EXPECT_EQ(place.manifest(), "manifest.jsonl");
  EXPECT_EQ(place.server_state("n0:30000"),
            "state/servers/" + SafePathComponent("n0:30000") + ".json");
  EXPECT_EQ(run.summary_csv(), "results/r1/summary.csv");
  EXPECT_EQ(RunPaths{"results/r1/"}.summary_csv(), "results/r1/summary.csv");
  EXPECT_EQ(run.interrupted_dir(), "results/r1/interrupted");
}

}  // namespace
}  // namespace ppsearch::evidence
