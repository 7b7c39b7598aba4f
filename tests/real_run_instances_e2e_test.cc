// Instances end to end: a layout run as two independent deployments on
// disjoint hosts (n0-n1 and n2-n3), the load spread over both by the
// built-in client, each instance's evidence kept apart. The rehearsal's
// real engine over serve-sim, and the simulated engine on the same spec.

#include <set>

#include "evidence/bench_summary.h"
#include "real_run_fixture.h"

namespace ppsearch::testing {
namespace {

namespace fs = std::filesystem;

// Kimi K3 needs all 32 GPUs; Qwen3-235B fits an instance of 16.
std::string ForQwen(const std::string& spec) {
  std::string text = ReadText(spec);
  for (size_t at; (at = text.find("kimi-k3/config.json")) != std::string::npos;)
    text.replace(at, 7, "qwen3-235b-a22b");
  std::ofstream(spec) << text;
  return spec;
}

// The instance of every record of a raw/<sample>.jsonl file (absent: 0).
std::multiset<int> RecordInstances(const fs::path& raw) {
  std::multiset<int> out;
  std::istringstream in(ReadText(raw));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) out.insert(j.value("instance", 0));
  }
  return out;
}

evidence::BenchSummary ReadBench(const fs::path& run, const std::string& sample) {
  const std::string rel = "bench/" + sample + ".json";
  Result<evidence::BenchSummary> bench = evidence::ParseBenchSummary(ReadText(run / rel), rel);
  EXPECT_TRUE(bench.ok()) << bench.error().message;
  return bench.ok() ? *bench : evidence::BenchSummary{};
}

// The bench summary's instances: each one's hosts and the requests it served.
void ExpectTwoInstancesApart(const fs::path& run, const std::string& sample, int requests) {
  const evidence::BenchSummary bench = ReadBench(run, sample);
  const std::vector<evidence::BenchInstance>& instances = bench.instances;
  ASSERT_EQ(instances.size(), 2u) << evidence::BenchSummaryText(bench);
  EXPECT_EQ(instances[0].hosts, (std::vector<std::string>{"n0", "n1"}));
  EXPECT_EQ(instances[1].hosts, (std::vector<std::string>{"n2", "n3"}));
  // C = 8 over two instances: 4 in flight each, half the requests each.
  EXPECT_EQ(instances[0].requests + instances[1].requests, requests);
  EXPECT_GT(instances[0].requests, 0);
  EXPECT_GT(instances[1].requests, 0);
  const std::multiset<int> served = RecordInstances(run / "raw" / (sample + ".jsonl"));
  EXPECT_EQ(static_cast<int>(served.count(0)), instances[0].requests);
  EXPECT_EQ(static_cast<int>(served.count(1)), instances[1].requests);
  for (const char* host : {"n0", "n1", "n2", "n3"}) {
    EXPECT_TRUE(fs::exists(run / "service" / sample / (std::string(host) + ".log"))) << host;
    EXPECT_FALSE(ReadText(run / "gpu" / sample / (std::string(host) + ".csv")).empty()) << host;
  }
}

TEST_F(RealRunTest, TwoInstancesRunAsTwoDeploymentsWithTheLoadSpreadOverBoth) {
  const std::string spec =
      ForQwen(WriteSpec("pp = [2]\ninstances = [2]\nconcurrency = [8]\nrepeats = 1", ""));
  CommandResult r = Run("run " + spec);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const fs::path run = RunDir();
  const std::string sample = "2x-pp2-tp8-ep4_c8_r1";
  const auto verdicts = Verdicts(run);
  ASSERT_EQ(verdicts.size(), 1u) << ReadText(run / "manifest.jsonl");
  EXPECT_EQ(verdicts.at(sample)["verdict"], "ok") << verdicts.at(sample).dump();
  ExpectTwoInstancesApart(run, sample, 16);
  const evidence::BenchSummary bench = ReadBench(run, sample);
  ASSERT_TRUE(bench.client);
  EXPECT_EQ(bench.client->routing, "least-outstanding");
  ASSERT_EQ(bench.instances.size(), 2u);
  EXPECT_EQ(bench.instances[1].url, "http://127.0.0.3:" + std::to_string(server_port_));
  // Each instance's first node is a node 0: it serves, and starts its peers.
  for (const char* head : {"n0", "n2"})
    EXPECT_NE(ReadText(run / "service" / sample / (std::string(head) + ".log"))
                  .find("The server is fired up and ready to roll!"),
              std::string::npos)
        << head;
  const std::string commands = ReadText(run / "metadata" / "commands.txt");
  EXPECT_NE(commands.find("--nnodes 2 --node-rank 1 --dist-init-addr 127.0.0.3:" +
                          std::to_string(dist_port_)),
            std::string::npos)
      << commands;
  EXPECT_NE(commands.find("--routing least-outstanding"), std::string::npos) << commands;
  EXPECT_TRUE(fs::is_empty(run / "state" / "servers"));
  EXPECT_TRUE(LeftoverServers().empty());
}

TEST_F(RealRunTest, TheSimulatedEngineKeepsEachInstancesEvidenceApartToo) {
  const std::string spec =
      ForQwen(WriteSpec("pp = [2]\ninstances = [2]\nconcurrency = [8]\nrepeats = 1", ""));
  CommandResult r = Run("run " + spec + " --engine sim");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const fs::path run = RunDir();
  ExpectTwoInstancesApart(run, "2x-pp2-tp8-ep4_c8_r1", 16);
  EXPECT_NE(r.out.find("2 x 2 / 8 / 4"), std::string::npos) << r.out;
}

// A search's instances reach the run spec it emits, which validates and runs.
TEST_F(RealRunTest, ASearchEmitsInstancesThatValidateAndRun) {
  const std::string spec = ForQwen(WriteSpec("pp = [2]\nconcurrency = [8]", ""));
  const std::string emitted = (dir_ / "emitted.toml").string();
  CommandResult s = Run("search " + spec +
                        " --instances 1,2 --pp 2 --ep 4 --concurrency 8 --samples 0 --json"
                        " --emit-spec " +
                        emitted);
  ASSERT_EQ(s.exit_code, 0) << s.err << s.out;
  const auto j = nlohmann::json::parse(s.out);
  std::set<int> counts;
  for (const auto& c : j["candidates"]) counts.insert(c["candidate"]["instances"].get<int>());
  EXPECT_EQ(counts, (std::set<int>{1, 2}));
  EXPECT_NE(ReadText(emitted).find("instances = 2"), std::string::npos) << ReadText(emitted);
  EXPECT_EQ(Run("validate " + emitted).exit_code, 0);
  CommandResult r = Run("run " + emitted + " --engine sim");
  EXPECT_NE(r.exit_code, 1) << r.err;
  EXPECT_NE(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace ppsearch::testing
