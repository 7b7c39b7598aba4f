// A disaggregated deployment run for real on this machine: serve-sim as
// SGLang's prefill and decode servers (--disaggregation-mode), router-sim as
// its router in PD mode, smi-sim as nvidia-smi, each "node" on its own
// loopback address; 1P1D and 2P1D end to end, a failed KV transfer, and a
// runner killed mid-sweep then resumed.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "process_fixture.h"
#include "real_run_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

class PdRehearsalTest : public RealRunTest {
 protected:
  // Runs `spec` (3 repeats of one point of deployment `slug`), kills the
  // runner with SIGKILL once a sample has completed and the next one's
  // `processes` (its servers and router) are recorded, resumes it, and checks
  // that every sample completed once, ok, and nothing was left running.
  void KillMidSweepThenResume(const std::string& spec, size_t processes, const std::string& slug) {
    const pid_t pid = StartRunInBackground(spec);
    ASSERT_GT(pid, 0);
    fs::path run;
    size_t recorded = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      run = RunDir();
      recorded = 0;
      if (!run.empty() && fs::exists(run / "manifest.jsonl") && fs::exists(run / "state/servers")) {
        // Whole records only: one being written is a temporary file beside them.
        for (const auto& e : fs::directory_iterator(run / "state/servers"))
          if (e.path().extension() == ".json" &&
              nlohmann::json::parse(ReadText(e.path()), nullptr, false).is_object())
            ++recorded;
        if (ReadText(run / "manifest.jsonl").find("\"completed\"") != std::string::npos &&
            recorded == processes)
          break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_EQ(recorded, processes) << "the second sample's servers and router";
    EXPECT_FALSE(LeftoverRouters().empty()) << "the killed runner left its router behind";

    CommandResult resumed = Run("run --resume " + run.string());
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("stopped pid"), std::string::npos) << resumed.err;
    for (int repeat = 1; repeat <= 3; ++repeat) {
      const std::string s = slug + "_c8_r" + std::to_string(repeat);
      EXPECT_EQ(CountState(run, s, "completed"), 1) << s;
    }
    for (const auto& [sample, j] : Verdicts(run))
      EXPECT_EQ(j.value("verdict", ""), "ok") << sample << j.dump();
    EXPECT_TRUE(fs::is_empty(run / "state" / "servers"));
    EXPECT_FALSE(fs::exists(run / "live"));
    EXPECT_TRUE(LeftoverServers().empty());
    EXPECT_TRUE(LeftoverRouters().empty());
  }

  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
};

constexpr const char* kSample = "1p1d-pp1-tp8-ep8+pp1-tp8-ep8_c8_r1";

TEST_F(PdRehearsalTest, OnePrefillAndOneDecodeServerRunEndToEndThroughTheRouter) {
  const std::string spec = WritePdSpec("concurrency = [8]\nrepeats = 1");
  CommandResult r = Run("run " + spec + " --run-id pd");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run = fs::path(results_) / "pd";
  const auto v = Verdicts(run);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.at(kSample).value("verdict", ""), "ok") << v.at(kSample).dump();

  // Each pool's evidence apart: a log and a GPU snapshot per server's node,
  // none for the spare n2; the router's log beside its node's.
  const fs::path service = run / "service" / kSample;
  const std::string prefill = ReadText(service / "n0.log");
  const std::string decode = ReadText(service / "n1.log");
  const std::string router = ReadText(service / "n0.router.log");
  EXPECT_NE(prefill.find("disaggregation_mode='prefill'"), std::string::npos) << prefill;
  EXPECT_GT(Count(prefill, "Prefill batch"), 0) << prefill;
  EXPECT_EQ(Count(prefill, "Decode batch"), 0) << "a prefill server never decodes";
  EXPECT_NE(decode.find("disaggregation_mode='decode'"), std::string::npos) << decode;
  EXPECT_GT(Count(decode, "Decode batch"), 0) << decode;
  EXPECT_EQ(Count(decode, "Prefill batch"), 0) << "the decode server takes prompts prefilled";
  EXPECT_NE(router.find(
                "Starting router on 127.0.0.1:" + std::to_string(router_port_) +
                " | mode: PrefillDecode { prefill_urls: [(\"http://127.0.0.1:" +
                std::to_string(server_port_) + "\", Some(" + std::to_string(bootstrap_port_) +
                "))], decode_urls: [\"http://127.0.0.2:" + std::to_string(server_port_) + "\"] }"),
            std::string::npos)
      << router;
  // The report's pools: each one's hosts and the GPU memory its snapshots hold.
  const std::string report = ReadText(run / "report.md");
  EXPECT_NE(report.find("A disaggregated deployment on real servers"), std::string::npos) << report;
  EXPECT_NE(report.find("| prefill |       1 | n0    |    8 |"), std::string::npos) << report;
  EXPECT_NE(report.find("| decode  |       1 | n1    |    8 |"), std::string::npos) << report;
  EXPECT_TRUE(fs::exists(run / "gpu" / kSample / "n0.csv"));
  EXPECT_TRUE(fs::exists(run / "gpu" / kSample / "n1.csv"));
  EXPECT_FALSE(fs::exists(run / "gpu" / kSample / "n2.csv"));
  EXPECT_FALSE(fs::exists(service / "n2.log"));

  // Every request came back through the router, with the decode server's tokens.
  std::istringstream raw(ReadText(run / "raw" / (std::string(kSample) + ".jsonl")));
  int ok = 0;
  for (std::string line; std::getline(raw, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("status", "") == "ok" && j.value("output_tokens", 0) == 40) ++ok;
  }
  EXPECT_EQ(ok, 24);

  // The servers time what the simulator predicts: at 10 x real time the
  // output throughput is 10 x simulate's for the same deployment (HTTP
  // between the processes adds wall time to each TTFT, little to the
  // throughput of a 40-token decode).
  CommandResult sim = Run("simulate " + spec + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  const auto predicted = nlohmann::json::parse(sim.out);
  double predicted_tps = 0;
  for (const auto& p : predicted["points"])
    if (p.value("concurrency", 0) == 8) predicted_tps = p.value("output_tps", 0.0);
  const auto summary = nlohmann::json::parse(ReadText(run / "summary.json"));
  double measured_tps = 0;
  for (const auto& p : summary["points"])
    if (p.value("concurrency", 0) == 8) measured_tps = p.value("output_tps_median", 0.0);
  ASSERT_GT(predicted_tps, 0) << sim.out;
  ASSERT_GT(measured_tps, 0) << summary.dump();
  EXPECT_NEAR(measured_tps / 10 / predicted_tps, 1.0, 0.35)
      << "measured " << measured_tps << " at 10x, predicted " << predicted_tps;
  EXPECT_TRUE(LeftoverServers().empty());
  EXPECT_TRUE(LeftoverRouters().empty());
}

TEST_F(PdRehearsalTest, TwoPrefillServersShareTheRequestsOfOneDecodeServer) {
  const std::string spec = WritePdSpec("concurrency = [8]\nrepeats = 1", "", "[\"n0\", \"n2\"]", 2);
  CommandResult r = Run("run " + spec + " --run-id pd");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const fs::path run = fs::path(results_) / "pd";
  const std::string sample = "2p1d-2x-pp1-tp8-ep8+pp1-tp8-ep8_c8_r1";
  const auto v = Verdicts(run);
  ASSERT_EQ(v.count(sample), 1u) << ReadText(run / "manifest.jsonl");
  EXPECT_EQ(v.at(sample).value("verdict", ""), "ok") << v.at(sample).dump();
  const fs::path service = run / "service" / sample;
  EXPECT_GT(Count(ReadText(service / "n0.log"), "Prefill batch"), 0);
  EXPECT_GT(Count(ReadText(service / "n2.log"), "Prefill batch"), 0)
      << "the router sends requests to both prefill servers";
  EXPECT_GT(Count(ReadText(service / "n1.log"), "Decode batch"), 0);
  const std::string router = ReadText(service / "n0.router.log");
  EXPECT_NE(router.find("(\"http://127.0.0.3:" + std::to_string(server_port_) + "\", Some(" +
                        std::to_string(bootstrap_port_) + "))"),
            std::string::npos)
      << router;
}

TEST_F(PdRehearsalTest, AFailedKvTransferIsALogFindingThatKeepsTheSampleOutOfTheDecision) {
  const fs::path plan = dir_ / "faults.txt";
  std::ofstream(plan) << kSample << "/n0 --fault-kv-fail-after 3\n";
  const std::string spec =
      WritePdSpec("concurrency = [8]\nrepeats = 1", ", \"--fault-plan\", \"" + plan.string() +
                                                        "\", \"--fault-key\", \"{sample}/{host}\"");
  CommandResult r = Run("run " + spec + " --run-id pd");
  const fs::path run = fs::path(results_) / "pd";
  const auto v = Verdicts(run);
  ASSERT_EQ(v.count(kSample), 1u) << r.err;
  EXPECT_NE(v.at(kSample).value("verdict", ""), "ok") << v.at(kSample).dump();
  // Both sides logged it in SGLang's words; the report names the finding.
  const fs::path service = run / "service" / kSample;
  EXPECT_NE(ReadText(service / "n0.log").find("Prefill transfer failed for request"),
            std::string::npos);
  EXPECT_NE(ReadText(service / "n1.log").find("Decode transfer failed for request"),
            std::string::npos);
  EXPECT_NE(ReadText(run / "report.md").find("KV transfer failure"), std::string::npos)
      << ReadText(run / "report.md");
  // One request of 24 failed; the others completed through the router.
  std::istringstream raw(ReadText(run / "raw" / (std::string(kSample) + ".jsonl")));
  int ok = 0, failed = 0;
  for (std::string line; std::getline(raw, line);)
    (nlohmann::json::parse(line).value("status", "") == "ok" ? ok : failed)++;
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(ok, 23);
}

TEST_F(PdRehearsalTest, AKilledRunnerIsResumedWithoutOrphansOrDuplicates) {
  KillMidSweepThenResume(WritePdSpec("concurrency = [8]\nrepeats = 3"), 3,
                         "1p1d-pp1-tp8-ep8+pp1-tp8-ep8");
}

TEST_F(PdRehearsalTest, AKilledTwoPrefillRunnerIsResumedWithoutOrphansOrDuplicates) {
  KillMidSweepThenResume(WritePdSpec("concurrency = [8]\nrepeats = 3", "", "[\"n0\", \"n2\"]", 2),
                         4, "2p1d-2x-pp1-tp8-ep8+pp1-tp8-ep8");
}

}  // namespace
}  // namespace ppsearch::testing
