#include "evidence/bench_summary.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace ppsearch::evidence {
namespace {

constexpr const char* kFile = "bench/pp4-tp8-ep4_c8_r1.json";

// A real sample of a layout of two instances, every group the real engine writes.
BenchSummary RealSample() {
  BenchSummary s;
  s.sample = "pp4-tp8-ep4_c8_r1";
  s.simulated = false;
  s.seed = 42;
  s.stop_notes = {"node 1 (n1) ignored SIGTERM for 0.2 s and was killed"};
  s.release_wait = "GPU memory not released within 60 s";
  s.snapshot_errors = {"n1: nvidia-smi failed"};
  s.server_version_error = "GET /server_info: 404";
  s.ready = BenchServerReady{812.5, ""};
  BenchClientSummary& c = s.client.emplace();
  c.url = "http://n0:30000";
  c.api = "native";
  c.concurrency = 8;
  c.requests = 40;
  c.input_tokens = 1024;
  c.output_tokens = 64;
  c.range_ratio = 0.5;
  c.timeout_s = 600;
  c.seed = 42;
  c.requests_total = 40;
  c.requests_completed = 39;
  c.request_errors = 1;
  c.total_input_tokens = 39936;
  c.duration_s = 12.25;
  c.input_tps = 3260.1;
  c.ttft_s = {0.5, 0.4, 0.9, 1.1, 1.3, 1.5};
  c.tpot_requests = 39;
  c.tpot_s = stats::LatencySummary{0.02, 0.02, 0.03, 0.03, 0.04, 0.05};
  c.itl_values = 2457;
  c.itl_s = stats::LatencySummary{0.02, 0.019, 0.03, 0.035, 0.05, 0.2};
  c.client_cpu_s = 0.125;
  c.routing = "least-outstanding";
  s.instances = {{0, std::vector<std::string>{"n0", "n1"}, "http://n0:30000", 20, 20},
                 {1, std::vector<std::string>{"n2", "n3"}, "http://n2:30000", 20, 19}};
  s.sample_wall_s = 840.0;
  return s;
}

TEST(BenchSummary, ASimulatedSampleIsWrittenAsItWasAlways) {
  BenchSummary s;
  s.sample = "pp2-tp16-ep4_c8_r1";
  s.simulated = true;
  s.seed = 7;
  s.noise_factor = 1.0;
  s.sim = BenchSimFigures{1, 96, 0.25, 0.125};
  EXPECT_EQ(BenchSummaryText(s), R"({
  "bubble_share": 0.125,
  "exposed_comm_share": 0.25,
  "micro_batches": 96,
  "noise_factor": 1.0,
  "pp_max_micro_batch_size": 1,
  "sample": "pp2-tp16-ep4_c8_r1",
  "seed": 7,
  "simulated": true
}
)");
}

TEST(BenchSummary, EveryGroupSurvivesAWriteAndARead) {
  const BenchSummary real = RealSample();
  const std::string text = BenchSummaryText(real);
  Result<BenchSummary> back = ParseBenchSummary(text, kFile);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(BenchSummaryText(*back), text);
  ASSERT_TRUE(back->client && back->ready);
  EXPECT_EQ(back->client->ttft_s.p90, 0.9);
  EXPECT_EQ(back->client->routing, "least-outstanding");
  EXPECT_EQ(back->ready->server_version, "") << "null in the file: no version reported";
  ASSERT_EQ(back->instances.size(), 2u);
  EXPECT_EQ(*back->instances[1].hosts, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(back->instances[1].requests_ok, 19);

  // A sample synthesized from a CSV of medians, then replayed from that run.
  BenchSummary medians;
  medians.sample = "pp8-tp4-ep4_c16_r3";
  medians.seed = 3;
  medians.noise_factor = 0.97;
  medians.replayed_from = BenchReplayedFrom{"", "", "/data/medians.csv", 4};
  medians.synthesis = BenchSynthesis{0.0115,          "the file's spread, 0.02 over 3 repeats",
                                     "from the file", "not in the file",
                                     "peak_gpu_mib",  {"input_tps", "ttft_p50_s"}};
  for (BenchReplayedFrom from :
       {*medians.replayed_from, BenchReplayedFrom{"/runs/a", medians.sample, "", 0}}) {
    medians.replayed_from = from;
    const std::string bytes = BenchSummaryText(medians);
    Result<BenchSummary> read = ParseBenchSummary(bytes, kFile);
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(BenchSummaryText(*read), bytes);
    EXPECT_FALSE(read->simulated) << "a synthesized sample says neither";
    ASSERT_TRUE(read->synthesis);
    EXPECT_EQ(read->synthesis->figures_from_file,
              (std::vector<std::string>{"input_tps", "ttft_p50_s"}));
  }
}

// A disaggregated deployment's sample: its pools, each server's hosts and
// requests, the TTFT's parts and the bottleneck, written and read back.
TEST(BenchSummary, ADeploymentsPoolsSurviveAWriteAndARead) {
  BenchSummary s;
  s.sample = "1p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8_c64_r1";
  s.simulated = true;
  BenchDisaggregation& d = s.disaggregation.emplace();
  d.pools.push_back({"prefill", 8, {{0, std::vector<std::string>{"n0"}, "", 64, 64}}, 0.14, 0.01});
  d.pools.push_back({"decode",
                     24,
                     {{0, std::vector<std::string>{"n1"}, "", 22, 22},
                      {1, std::vector<std::string>{"n2"}, "", 21, 20},
                      {2, std::vector<std::string>{"n3"}, "", 21, 21}},
                     0.99,
                     0.04});
  d.prefill_s = 0.31;
  d.transfer_s = 0.001;
  d.decode_join_s = 0.012;
  d.transfer_share_of_ttft = 0.003;
  d.transfer_bytes = 1 << 30;
  d.bottleneck = "neither";
  const std::string text = BenchSummaryText(s);
  Result<BenchSummary> back = ParseBenchSummary(text, kFile);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(BenchSummaryText(*back), text);
  ASSERT_TRUE(back->disaggregation);
  ASSERT_EQ(back->disaggregation->pools.size(), 2u);
  EXPECT_EQ(back->disaggregation->pools[1].servers[1].requests_ok, 20);
  EXPECT_EQ(*back->disaggregation->pools[1].servers[2].hosts, std::vector<std::string>{"n3"});
  EXPECT_EQ(back->disaggregation->prefill_s, 0.31);
  EXPECT_EQ(back->disaggregation->bottleneck, "neither");
  Result<BenchSummary> bad = ParseBenchSummary(
      R"({"sample": "s", "disaggregation": {"pools": [{"role": "prefill", "gpus": "eight"}]}})",
      kFile);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "bench/pp4-tp8-ep4_c8_r1.json: key 'disaggregation.pools[0].gpus' must be an "
            "integer, got \"eight\"");
}

// One-token answers have no decode time: their TPOT and ITL figures are
// null, not a 0 s that would be made up, and read back as none; so do the
// zeros files held before.
TEST(BenchSummary, DecodeLatenciesOfOneTokenAnswersAreNullAndReadAsNone) {
  BenchSummary s = RealSample();
  s.client->tpot_requests = 0;
  s.client->tpot_s.reset();
  s.client->itl_values = 0;
  s.client->itl_s.reset();
  const nlohmann::json j = BenchSummaryToJson(s);
  for (const char* group : {"tpot_s", "itl_s"})
    for (const char* key : {"mean", "p50", "p90", "p95", "p99", "max"})
      EXPECT_TRUE(j.at(group).at(key).is_null()) << group << "." << key;
  Result<BenchSummary> back = ParseBenchSummary(BenchSummaryText(s), kFile);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->client->tpot_s);
  EXPECT_FALSE(back->client->itl_s);

  nlohmann::json old = j;
  for (const char* group : {"tpot_s", "itl_s"})
    for (auto& [key, value] : old[group].items()) value = 0.0;
  Result<BenchSummary> old_back = ParseBenchSummary(old.dump(), kFile);
  ASSERT_TRUE(old_back.ok()) << old_back.error().message;
  EXPECT_FALSE(old_back->client->tpot_s) << "a count of 0 says the zeros were made up";
  EXPECT_FALSE(old_back->client->itl_s);

  const BenchSummary real = RealSample();
  Result<BenchSummary> measured = ParseBenchSummary(BenchSummaryText(real), kFile);
  ASSERT_TRUE(measured.ok()) << measured.error().message;
  ASSERT_TRUE(measured->client->tpot_s && measured->client->itl_s);
  EXPECT_EQ(measured->client->tpot_s->p99, 0.04);
  EXPECT_EQ(measured->client->itl_s->max, 0.2);

  nlohmann::json half = BenchSummaryToJson(real);
  half["tpot_s"]["p99"] = nullptr;
  Result<BenchSummary> bad = ParseBenchSummary(half.dump(), kFile);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "bench/pp4-tp8-ep4_c8_r1.json: key 'tpot_s.p99' must be a number where "
            "tpot_requests is 39");
}

TEST(BenchSummary, TheLoadGeneratorsPartIsWhatBenchJsonPrints) {
  const BenchSummary real = RealSample();
  const nlohmann::json file = BenchSummaryToJson(real);
  const nlohmann::json printed = BenchClientJson(*real.client, real.instances);
  for (const auto& [key, value] : printed.items()) EXPECT_EQ(file.at(key), value) << key;
  EXPECT_FALSE(BenchClientJson(*real.client, {}).contains("instances"));
}

TEST(BenchSummary, AMalformedFieldIsNamedWithTheFileAndWhatWasExpected) {
  auto error = [](const std::string& text) {
    Result<BenchSummary> s = ParseBenchSummary(text, kFile);
    return s.ok() ? std::string("parsed") : s.error().message;
  };
  EXPECT_EQ(error(R"({"sample": "s", "ttft_s": {"p50": "fast"}})"),
            "bench/pp4-tp8-ep4_c8_r1.json: key 'ttft_s.p50' must be a number, got \"fast\"");
  EXPECT_EQ(error(R"({"sample": "s", "instances": [{"instance": 0}, {"requests": -1.5}]})"),
            "bench/pp4-tp8-ep4_c8_r1.json: key 'instances[1].requests' must be an integer, got "
            "-1.5");
  EXPECT_EQ(error(R"({"sample": "s", "seed": -3})"),
            "bench/pp4-tp8-ep4_c8_r1.json: key 'seed' must be an integer of at least 0, got -3");
  EXPECT_EQ(error(R"({"sample": "s", "stop_notes": "killed"})"),
            "bench/pp4-tp8-ep4_c8_r1.json: key 'stop_notes' must be an array of strings, got "
            "\"killed\"");
  EXPECT_EQ(error(R"({"sample": 4})"),
            "bench/pp4-tp8-ep4_c8_r1.json: key 'sample' must be a string naming the sample, got 4");
  EXPECT_EQ(error(R"({"sample": "s")"), "bench/pp4-tp8-ep4_c8_r1.json: not valid JSON");
  // A key this version does not write is left alone, as a later version's would be.
  EXPECT_EQ(error(R"({"sample": "s", "gpu_temperature_c": "hot"})"), "parsed");
}

TEST(BenchSummary, IsReadFromTheRunDirectoryByPath) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("bench_summary_test_" + std::to_string(getpid()));
  const RunPaths paths{dir.string()};
  const SampleId id = *ParseSampleId("pp4-tp8-ep4_c8_r1");
  BenchSummary s = RealSample();
  s.sample = id.str();
  ASSERT_TRUE(WriteBenchSummary(paths, id, s).ok());
  Result<BenchSummary> read = ReadBenchSummary(paths, id);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(BenchSummaryText(*read), BenchSummaryText(s));
  std::filesystem::remove_all(dir);
  Result<BenchSummary> gone = ReadBenchSummary(paths, id);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message.find(paths.bench(id)), std::string::npos) << gone.error().message;
}

}  // namespace
}  // namespace ppsearch::evidence
