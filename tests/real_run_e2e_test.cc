// `ppsearch run --engine sglang` with the local launcher, end to end: four
// serve-sim "nodes" per sample, the whole lifecycle, every fault verdict
// with the sweep going on, preflight, SIGKILL of the runner and --resume,
// the run-directory lock.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "process_fixture.h"
#include "real_run_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(RealRunTest, WholeSearchLeavesTheEvidenceOfEveryNode) {
  const std::string spec = WriteSpec("pp = [4, 8]\nconcurrency = [8]\nrepeats = 2", "");
  CommandResult r = Run("run " + spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = RunDir();
  const auto verdicts = Verdicts(run);
  ASSERT_EQ(verdicts.size(), 4u) << ReadText(run / "manifest.jsonl");
  for (const auto& [sample, line] : verdicts) {
    EXPECT_EQ(line["state"], "completed") << sample;
    EXPECT_EQ(line["verdict"], "ok") << line.dump();
    EXPECT_TRUE(fs::exists(run / "raw" / (sample + ".jsonl")));
    EXPECT_TRUE(fs::exists(run / "bench" / (sample + ".json")));
    for (const char* host : {"n0", "n1", "n2", "n3"}) {
      EXPECT_TRUE(fs::exists(run / "service" / sample / (std::string(host) + ".log"))) << host;
      EXPECT_FALSE(ReadText(run / "gpu" / sample / (std::string(host) + ".csv")).empty()) << host;
    }
    EXPECT_NE(ReadText(run / "service" / sample / "n0.log")
                  .find("The server is fired up and ready to roll!"),
              std::string::npos);
  }
  EXPECT_NE(ReadText(run / "metadata" / "run.json").find("\"engine\": \"sglang\""),
            std::string::npos);
  EXPECT_NE(ReadText(run / "metadata" / "commands.txt").find("serve-sim"), std::string::npos);
  EXPECT_TRUE(fs::exists(run / "report.md"));
  EXPECT_TRUE(fs::exists(run / "metadata" / "spec.resolved.json"));
  EXPECT_FALSE(fs::exists(run / "live")) << "streamed logs are removed once in service/";
  EXPECT_TRUE(fs::is_empty(run / "state" / "servers"));
  EXPECT_TRUE(LeftoverServers().empty());
  EXPECT_NE(r.out.find("Primary"), std::string::npos) << r.out;
}

TEST_F(RealRunTest, EveryFaultGetsItsVerdictAndTheSweepGoesOn) {
  const fs::path plan = dir_ / "faults.txt";
  // Node 2 dies on an event, not a time: the runner's readiness probe is
  // the deployment's first answer, so the second is the benchmark's, and
  // node 2 dies mid-benchmark however busy the machine is.
  std::ofstream(plan) << "# one fault per repeat\n"
                      << "pp4-tp8-ep4_c8_r1/n2 --fault-die-after-requests 2\n"
                      << "pp4-tp8-ep4_c8_r2/n0 --fault-never-ready\n"
                      << "pp4-tp8-ep4_c8_r3/n1 --fault-exit-during-start\n"
                      << "pp4-tp8-ep4_c8_r4/n0 --fault-log oom\n"
                      << "pp4-tp8-ep4_c8_r5/n0 --fault-http500 0.25\n"
                      << "pp4-tp8-ep4_c8_r6/n0 --fault-hang-after 3\n"
                      << "pp4-tp8-ep4_c8_r7/n3 --fault-leak-gpu-s 3\n";
  // Four nodes must start within start_timeout_s on every repeat but the
  // never-ready one, whose verdict waits it out: 3 s on an idle machine,
  // scaled with the load per core on a busy one.
  const int start_s = static_cast<int>(std::ceil(3 * LoadFactor()));
  const std::string spec = WriteSpec(
      "pp = [4]\nconcurrency = [8]\nrepeats = 8",
      "start_timeout_s = " + std::to_string(start_s) +
          "\nrequest_timeout_s = 3\nmemory_release_timeout_s = 1",
      ", \"--fault-plan\", \"" + plan.string() + "\", \"--fault-key\", \"{sample}/{host}\"",
      "local", "", 40);
  CommandResult r = Run("run " + spec);
  EXPECT_NE(r.exit_code, 1) << r.err;  // the run itself succeeded; the decision may exclude
  const fs::path run = RunDir();
  auto v = Verdicts(run);
  ASSERT_EQ(v.size(), 8u) << r.err << ReadText(run / "manifest.jsonl");
  auto verdict = [&](int repeat) {
    return v["pp4-tp8-ep4_c8_r" + std::to_string(repeat)].value("verdict", "?");
  };
  auto detail = [&](int repeat) {
    return v["pp4-tp8-ep4_c8_r" + std::to_string(repeat)].value("detail", "");
  };
  EXPECT_EQ(verdict(1), "engine_died") << detail(1);
  EXPECT_NE(detail(1).find("node 2 (n2)"), std::string::npos) << detail(1);
  EXPECT_EQ(verdict(2), "engine_failed_to_start") << detail(2);
  EXPECT_NE(detail(2).find("did not become ready within " + std::to_string(start_s) + " s"),
            std::string::npos)
      << detail(2);
  EXPECT_EQ(verdict(3), "engine_failed_to_start") << detail(3);
  EXPECT_NE(detail(3).find("node 1 (n1) exited with status 1"), std::string::npos) << detail(3);
  EXPECT_NE(detail(3).find("Traceback"), std::string::npos) << "the tail of its log";
  // An OOM line ends the sample at once, though the server stays up.
  EXPECT_EQ(verdict(4), "engine_died") << detail(4);
  EXPECT_NE(detail(4).find("node 0 (n0) log line "), std::string::npos) << detail(4);
  EXPECT_NE(detail(4).find("out of memory"), std::string::npos) << detail(4);
  EXPECT_EQ(verdict(5), "requests_failed") << detail(5);
  EXPECT_EQ(verdict(6), "timeout") << detail(6);
  EXPECT_NE(detail(6).find("timed out"), std::string::npos) << detail(6);
  EXPECT_EQ(verdict(7), "timeout") << detail(7);
  EXPECT_NE(detail(7).find("GPU memory not released"), std::string::npos) << detail(7);
  EXPECT_NE(verdict(8), "?");
  // Evidence is kept whatever the verdict: every node's log of every sample.
  for (int rep = 1; rep <= 8; ++rep)
    for (const char* host : {"n0", "n1", "n2", "n3"})
      EXPECT_TRUE(fs::exists(run / "service" / ("pp4-tp8-ep4_c8_r" + std::to_string(rep)) /
                             (std::string(host) + ".log")))
          << rep << " " << host;
  EXPECT_GT(ReadText(run / "raw" / "pp4-tp8-ep4_c8_r1.jsonl").size(), 0u) << "partial records";
  EXPECT_NE(ReadText(run / "service" / "pp4-tp8-ep4_c8_r3" / "n1.log").find("Traceback"),
            std::string::npos);
  const std::string report = ReadText(run / "report.md");
  EXPECT_NE(report.find("engine_died"), std::string::npos) << report;
  EXPECT_TRUE(LeftoverServers().empty());
}

TEST_F(RealRunTest, PreflightNamesTheBusyPortAndTheProcessHoldingGpuMemory) {
  // Something already listens on n1's server port, and this test process
  // holds 40 GB on n3's GPU 0.
  const int fd = ListenOn("127.0.0.2", server_port_);
  ASSERT_GE(fd, 0);
  HoldGpuMemory(fs::path(gpu_dir_) / "n3", 3, 40000);
  const std::string spec = WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 1", "");
  CommandResult r = Run("run " + spec);
  ::close(fd);
  // The cluster check before the first sample: exit 2, no run directory.
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(RunDir().empty()) << "no sample ran";
  const std::string& d = r.err;
  // The holder is named as `ss` on the host reports it: this test process.
  EXPECT_NE(d.find("n1: port: server port " + std::to_string(server_port_) +
                   " on 127.0.0.2 is already in use by pid " + std::to_string(::getpid()) + " ("),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("n3: gpu: GPU memory is held by another process: pid " +
                   std::to_string(::getpid()) + " (python3) uses 40000 MiB"),
            std::string::npos)
      << d;
  EXPECT_TRUE(LeftoverServers().empty()) << "nothing was started";
}

TEST_F(RealRunTest, KilledRunnerIsResumedWithoutOrphansOrDuplicates) {
  // The interrupted sample's node 1 keeps its GPU memory 3 s after it stops,
  // as a GPU does while the driver frees it: the resume stops it and must
  // wait for the memory before its first preflight, not fail that sample.
  const fs::path plan = dir_ / "faults.txt";
  std::ofstream(plan) << "pp4-tp8-ep4_c8_r2/n1 --fault-leak-gpu-s 3\n";
  const std::string spec = WriteSpec(
      "pp = [4, 8]\nconcurrency = [8]\nrepeats = 2", "",
      ", \"--fault-plan\", \"" + plan.string() + "\", \"--fault-key\", \"{sample}/{host}\"",
      "local", "", 8);
  const pid_t pid = StartRunInBackground(spec);
  ASSERT_GT(pid, 0);
  // Bounded wait: one sample completed and the next one's servers recorded.
  fs::path run;
  std::vector<std::pair<int64_t, uint64_t>> recorded;  // pid, start time
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    run = RunDir();
    if (!run.empty() && fs::exists(run / "manifest.jsonl")) {
      const std::string m = ReadText(run / "manifest.jsonl");
      recorded.clear();
      if (fs::exists(run / "state" / "servers"))
        for (const auto& e : fs::directory_iterator(run / "state" / "servers")) {
          auto j = nlohmann::json::parse(ReadText(e.path()), nullptr, false);
          if (j.is_object())
            recorded.emplace_back(j.value("pid", int64_t{0}), j.value("start_ticks", uint64_t{0}));
        }
      if (m.find("\"completed\"") != std::string::npos && recorded.size() == 4) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_EQ(recorded.size(), 4u) << "the second sample's four servers were running";
  int alive = 0;
  for (const auto& [p, ticks] : recorded) alive += StartTicks(p) == ticks ? 1 : 0;
  EXPECT_GT(alive, 0) << "the killed runner left its servers behind";

  CommandResult resumed = Run("run --resume " + run.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("stopped pid"), std::string::npos) << resumed.err;
  // Pids are reused quickly on a busy machine: the same pid with the same
  // start time is the same process.
  for (const auto& [p, ticks] : recorded) {
    const std::string stat = ReadText("/proc/" + std::to_string(p) + "/stat");
    const size_t close = stat.rfind(')');
    const bool zombie = close != std::string::npos && stat[close + 2] == 'Z';
    EXPECT_TRUE(StartTicks(p) != ticks || zombie) << "pid " << p << " still runs";
  }
  for (const char* s :
       {"pp4-tp8-ep4_c8_r1", "pp4-tp8-ep4_c8_r2", "pp8-tp4-ep4_c8_r1", "pp8-tp4-ep4_c8_r2"})
    EXPECT_EQ(CountState(run, s, "completed"), 1) << s;
  const auto v = Verdicts(run);
  for (const auto& [sample, j] : v) EXPECT_EQ(j.value("verdict", ""), "ok") << sample << j.dump();
  EXPECT_TRUE(fs::is_empty(run / "state" / "servers"));
  EXPECT_TRUE(fs::exists(run / "interrupted")) << "the interrupted sample's logs are kept";
  // Only the interrupted sample's: the completed one's logs are in service/.
  std::vector<std::string> kept;
  for (const auto& when : fs::directory_iterator(run / "interrupted"))
    for (const auto& sample : fs::directory_iterator(when.path()))
      kept.push_back(sample.path().filename().string());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_NE(kept[0], "pp4-tp8-ep4_c8_r1") << "a completed sample's logs were kept twice";
  EXPECT_FALSE(fs::exists(run / "live"));
  EXPECT_TRUE(LeftoverServers().empty());
}

TEST_F(RealRunTest, ASecondProcessOnTheSameRunDirectoryIsRefused) {
  const std::string spec =
      WriteSpec("pp = [4]\nconcurrency = [8]\nrepeats = 2", "", "", "local", "", 10);
  const pid_t pid = StartRunInBackground(spec);
  ASSERT_GT(pid, 0);
  fs::path run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    run = RunDir();
    if (!run.empty() && fs::exists(run / "manifest.jsonl")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(run.empty());
  CommandResult second = Run("run --resume " + run.string());
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(
      second.err.find("is in use by another ppsearch process (pid " + std::to_string(pid) + ")"),
      std::string::npos)
      << second.err;
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(CountState(run, "pp4-tp8-ep4_c8_r1", "completed"), 1);
  EXPECT_EQ(CountState(run, "pp4-tp8-ep4_c8_r2", "completed"), 1);
}

TEST_F(RealRunTest, DryRunPrintsEachNodesCommandAsItsLauncherRunsItAndStartsNothing) {
  const std::string spec =
      WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 1", "", "", "ssh",
                "[cluster.ssh]\nuser = \"ops\"\nport = 2222\n"
                "[engine.pp_layer_partition]\n8 = [12, 12, 12, 12, 12, 11, 11, 11]\n");
  CommandResult r = Run("run " + spec + " --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The layout's layer split reaches every node's server as SGLang's variable.
  size_t nodes = 0;
  for (size_t at = 0; (at = r.out.find("SGLANG_PP_LAYER_PARTITION=12,12,12,12,12,11,11,11", at)) !=
                      std::string::npos;
       ++at)
    ++nodes;
  EXPECT_EQ(nodes, 4u) << r.out;
  EXPECT_NE(r.out.find("n2: ssh -n -T -o BatchMode=yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-p 2222 -l ops -- 127.0.0.3 'exec /bin/sh -c"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--node-rank 2"), std::string::npos);
  EXPECT_NE(r.out.find("n0 (bench, built in): ppsearch bench --url http://127.0.0.1:" +
                       std::to_string(server_port_)),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(results_));
}

// The local launcher hands the runner's environment to every server: a
// variable SGLang reads and the model follows, set there but not by the
// spec, would make the servers run what the predictions do not; `run` says so.
TEST_F(RealRunTest, AnSglangVariableOnlyInTheRunnersEnvironmentIsWarnedAbout) {
  const std::string spec = WriteSpec("pp = [8]\nconcurrency = [8]\nrepeats = 1", "");
  CommandResult r = RunCommand("SGLANG_PP_LAYER_PARTITION=12,12,12,12,12,11,11,11 " + bin_ +
                               " run " + spec + " --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: SGLANG_PP_LAYER_PARTITION='12,12,12,12,12,11,11,11' is set in "
                       "ppsearch's environment and the local launcher passes it to every server, "
                       "but the spec does not set it"),
            std::string::npos)
      << r.err;
  CommandResult clean = Run("run " + spec + " --dry-run");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.err.find("SGLANG_PP_LAYER_PARTITION"), std::string::npos) << clean.err;
}

}  // namespace
}  // namespace ppsearch::testing
