// An adaptive run on the rehearsal: real server processes (serve-sim) on
// four loopback "nodes", started, reused and stopped by the real engine,
// one point at a time as the adaptive session chooses, killed mid-run and
// resumed.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include "real_run_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(RealRunTest, AnAdaptiveRehearsalMeasuresLessResumesAfterAKillAndShowsItsTrajectory) {
  // One repeat per point keeps the test short; a step cut in its middle is
  // resumed in src/run/adaptive_run_test.cc.
  const std::string spec = WriteSpec("pp = [2, 4, 8]\nconcurrency = [8, 16]\nrepeats = 1",
                                     "reuse_server = true", "", "local", "", 30);
  const pid_t pid = StartRunInBackground(spec, "--adaptive");
  ASSERT_GT(pid, 0);
  // Bounded wait for the first completed sample, then a kill mid-step.
  fs::path run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    run = RunDir();
    if (!run.empty() && fs::exists(run / "manifest.jsonl") &&
        ReadText(run / "manifest.jsonl").find("\"completed\"") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_FALSE(run.empty());
  ASSERT_TRUE(fs::exists(run / "metadata" / "adaptive.jsonl")) << "the first step is recorded";

  // Resumed without --adaptive: the run's own way of choosing is recorded.
  CommandResult resumed = Run("run --resume " + run.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto verdicts = Verdicts(run);
  int completed = 0;
  for (const auto& [sample, line] : verdicts) {
    EXPECT_EQ(CountState(run, sample, "completed"), 1) << sample << " ran twice";
    completed += line.value("state", "") == "completed" ? 1 : 0;
  }
  EXPECT_LT(completed, 6) << "fewer samples than the full sweep";

  // The trajectory: steps, then a settled stop naming a measured primary and fallback.
  std::vector<nlohmann::json> lines;
  {
    std::istringstream in(ReadText(run / "metadata" / "adaptive.jsonl"));
    for (std::string l; std::getline(in, l);) lines.push_back(nlohmann::json::parse(l));
  }
  ASSERT_GE(lines.size(), 3u);
  const nlohmann::json& stop = lines.back();
  ASSERT_EQ(stop["event"], "stop");
  EXPECT_EQ(stop["reason"], "settled") << stop.dump();
  EXPECT_EQ(stop["samples_spent"], completed);
  for (const char* role : {"primary", "fallback"}) {
    std::string label = stop[role];
    ASSERT_FALSE(label.empty()) << role;
    // "PP8/TP4/EP4" -> "pp8-tp4-ep4": every load point and repeat of it ran.
    std::string id;
    for (char c : label) id += c == '/' ? '-' : static_cast<char>(std::tolower(c));
    for (const char* point : {"_c8_r1", "_c16_r1"})
      EXPECT_EQ(verdicts.count(id + point), 1u) << id + point;
  }
  // A step's timed server start is in what it spent (the real engine's ready_s).
  EXPECT_GT(stop["gpu_hours_spent"].get<double>(), 0);
  const std::string md = ReadText(run / "report.md");
  EXPECT_NE(md.find("## Adaptive measurement"), std::string::npos);
  EXPECT_NE(md.find("Stopped: the choice is settled."), std::string::npos);
  // What was not needed is said to be so, not reported missing.
  EXPECT_NE(md.find("The adaptive run did not need"), std::string::npos) << md;
  EXPECT_NE(ReadText(run / "report.html").find("id=\"trajectory\""), std::string::npos);
  EXPECT_TRUE(LeftoverServers().empty());
}

}  // namespace
}  // namespace ppsearch::testing
