// `ppsearch run --engine sglang` options around the lifecycle: one server per
// layout with lifecycle.reuse_server, the run directory named by RUN_ID, and
// what --resume cleans up before it runs anything.

#include <cstdlib>

#include "real_run_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(RealRunTest, ReuseServerKeepsOneServerPerLayoutAndRunIdNamesTheRun) {
  const std::string spec =
      WriteSpec("pp = [4, 8]\nconcurrency = [8, 16]\nrepeats = 1", "reuse_server = true");
  ::setenv("RUN_ID", "night-1", 1);
  CommandResult r = Run("run " + spec);
  ::unsetenv("RUN_ID");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = fs::path(results_) / "night-1";
  ASSERT_TRUE(fs::exists(run / "manifest.jsonl")) << "RUN_ID names the run directory";
  const auto v = Verdicts(run);
  ASSERT_EQ(v.size(), 4u);
  for (const auto& [sample, line] : v) EXPECT_EQ(line["verdict"], "ok") << line.dump();
  const std::string ready = "The server is fired up and ready to roll!";
  // The first sample of a layout starts its server; the next one reuses it.
  for (const char* layout : {"pp4-tp8-ep4", "pp8-tp4-ep4"}) {
    const std::string first =
        ReadText(run / "service" / (std::string(layout) + "_c8_r1") / "n0.log");
    const std::string second =
        ReadText(run / "service" / (std::string(layout) + "_c16_r1") / "n0.log");
    EXPECT_EQ(Count(first, ready), 1) << layout;
    EXPECT_EQ(Count(second, ready), 0) << layout << ": a second server was started";
    EXPECT_GT(Count(second, "Prefill batch"), 0) << "the second sample's own part of the log";
  }
  // A named run that exists is not run again: it is resumed.
  CommandResult again = Run("run " + spec + " --run-id night-1");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already exists; continue it with ppsearch run --resume "),
            std::string::npos)
      << again.err;
  EXPECT_TRUE(LeftoverServers().empty());
}

TEST_F(RealRunTest, ResumeRemovesTornTempFilesAndRefusesAnotherSpecOrSet) {
  const std::string spec = WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 2", "");
  CommandResult first = Run("run " + spec + " --run-id r");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path run = fs::path(results_) / "r";
  // What a SIGKILL in the middle of an atomic write leaves behind.
  std::ofstream(run / "bench" / "pp8-tp4-ep4_c8_r2.json.tmp.4242") << "{\"par";
  CommandResult set = Run("run --resume " + run.string() + " --set workload.requests=8");
  EXPECT_EQ(set.exit_code, 2);
  EXPECT_NE(set.err.find("--resume runs the recorded spec with its recorded --set values"),
            std::string::npos)
      << set.err;
  const fs::path other = dir_ / "other.toml";
  fs::copy_file(spec, other);
  CommandResult spec2 = Run("run " + other.string() + " --resume " + run.string());
  EXPECT_EQ(spec2.exit_code, 2);
  EXPECT_NE(spec2.err.find("--resume runs the spec recorded in"), std::string::npos) << spec2.err;
  CommandResult resumed = Run("run --resume " + run.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("removed 1 unfinished temporary file"), std::string::npos)
      << resumed.err;
  EXPECT_FALSE(fs::exists(run / "bench" / "pp8-tp4-ep4_c8_r2.json.tmp.4242"));
}

}  // namespace
}  // namespace ppsearch::testing
