// A disaggregated spec as a user meets it: `plan` and `validate` accept the
// shipped example and print both pools, `simulate` predicts it, `run
// --engine sim` runs it into a run directory that keeps each pool's
// evidence (killed and resumed as any run); the commands that cannot take
// one yet refuse it with exit 2 rather than treat it as aggregated.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli_fixture.h"

namespace {

namespace fs = std::filesystem;

using ppsearch::testing::CliTest;
using ppsearch::testing::CommandResult;
using ppsearch::testing::ReadText;

constexpr char kExample[] = "examples/deepseek-v3-1p3d.toml";

// The example's [sweep.prefill] table starts on this line.
constexpr char kRefusal[] =
    "error: examples/deepseek-v3-1p3d.toml:47:1: [sweep.prefill] and [sweep.decode] make this a "
    "disaggregated deployment; only `ppsearch plan`, `ppsearch validate`, `ppsearch simulate`, "
    "`ppsearch run` and `ppsearch backtest` understand disaggregated deployments so far "
    "(`ppsearch search` of an aggregated spec adds them itself)\n";

// The example's one deployment, as its samples are named.
constexpr char kDeployment[] = "1p3d-pp1-tp8-ep8+3x-pp1-tp8-ep8-dp8";

int CountCompleted(const fs::path& run) {
  const std::string m = ReadText(run / "manifest.jsonl");
  int n = 0;
  for (size_t p = m.find("\"completed\""); p != std::string::npos;
       p = m.find("\"completed\"", p + 1))
    ++n;
  return n;
}

class DisaggregationE2e : public CliTest {};

TEST_F(DisaggregationE2e, PlanPrintsBothPoolsOfTheExample) {
  CommandResult r = Run(std::string("plan ") + kExample);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# prefill   PP1/TP8/EP8 on n0 (8 GPUs)\n"
                       "# decode    3xPP1/TP8/EP8/DP8 on n1 n2 n3 (24 GPUs)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n## prefill pool\n"), std::string::npos);
  EXPECT_NE(r.out.find("\n## decode pool\n"), std::string::npos);
  EXPECT_NE(r.out.find("--disaggregation-mode prefill"), std::string::npos);
  EXPECT_NE(r.out.find("\n# disaggregated deployment valid (0 errors)\n"), std::string::npos);
}

TEST_F(DisaggregationE2e, ValidateAcceptsTheExample) {
  CommandResult r = Run(std::string("validate ") + kExample);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(kExample) +
                       ": ok (disaggregated: prefill PP1/TP8/EP8, decode 3xPP1/TP8/EP8/DP8; plan, "
                       "validate, simulate, run and backtest understand it so far)\n");
}

TEST_F(DisaggregationE2e, PlanAndValidateRefuseAPdMismatchWithExit2) {
  // SGLang: "Decode pp size should be equal to prefill pp size or 1".
  const std::string set =
      " --set sweep.decode.pp=3 --set sweep.decode.tp=8 "
      "--set sweep.decode.dp=1 --set sweep.decode.instances=1";
  CommandResult plan =
      Run(std::string("plan ") + kExample + set +
          " --set sweep.prefill.pp=2 --set sweep.prefill.tp=4 --set sweep.prefill.ep=4");
  EXPECT_EQ(plan.exit_code, 2) << plan.err;
  EXPECT_NE(plan.out.find("the decode pool's PP 3 must equal the prefill pool's PP 2 or be 1"),
            std::string::npos)
      << plan.out;
  CommandResult validate =
      Run(std::string("validate ") + kExample + set +
          " --set sweep.prefill.pp=2 --set sweep.prefill.tp=4 --set sweep.prefill.ep=4");
  EXPECT_EQ(validate.exit_code, 2);
  EXPECT_NE(validate.err.find("the decode pool's PP 3 must equal the prefill pool's PP 2 or be 1"),
            std::string::npos)
      << validate.err;
}

TEST_F(DisaggregationE2e, SimulatePredictsBothPoolsAtEachLoadPoint) {
  CommandResult r = Run(std::string("simulate ") + kExample + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["disaggregated"].get<bool>());
  ASSERT_EQ(j["points"].size(), 2u);  // the sweep's concurrency 64 and 256
  for (const auto& p : j["points"]) {
    EXPECT_EQ(p["requests_completed"].get<int>(), 512) << p.dump();
    EXPECT_GT(p["output_tps_per_gpu"].get<double>(), 0);
    // TTFT's parts: a prefill, a transfer and the decode loop's turn.
    EXPECT_GT(p["ttft_parts"]["prefill_s"].get<double>(), 0);
    EXPECT_GT(p["ttft_parts"]["transfer_s"].get<double>(), 0);
    EXPECT_GT(p["ttft_parts"]["decode_join_s"].get<double>(), 0);
    EXPECT_EQ(p["pools"]["prefill"]["gpus"].get<int>(), 8);
    EXPECT_EQ(p["pools"]["decode"]["gpus"].get<int>(), 24);
    // Model-form intervals around the central figures.
    const auto& iv = p["intervals"]["output_tps"];
    EXPECT_LT(iv[0].get<double>(), p["output_tps"].get<double>());
    EXPECT_GT(iv[1].get<double>(), p["output_tps"].get<double>());
    EXPECT_GT(p["intervals"]["transfer_sigma"].get<double>(), 0);
  }
  EXPECT_GT(j["points"][1]["output_tps"].get<double>(), j["points"][0]["output_tps"].get<double>());

  CommandResult text = Run(std::string("simulate ") + kExample + " --concurrency 64");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("# deepseek-v3 disaggregated on 4 x 8 NVIDIA H200: prefill 1 x "
                          "PP1/TP8/EP8 on n0; decode 3 x PP1/TP8/EP8/DP8 on n1,n2,n3\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Where the time to first token went"), std::string::npos);
  EXPECT_NE(text.out.find("bottleneck"), std::string::npos);
  EXPECT_NE(text.out.find("Intervals (10th-90th percentile"), std::string::npos);

  CommandResult bare = Run(std::string("simulate ") + kExample + " --samples 0 --json");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_FALSE(nlohmann::json::parse(bare.out)["points"][0].contains("intervals"));
}

TEST_F(DisaggregationE2e, SimulateRefusesAnInvalidDeploymentWithExit2) {
  CommandResult r = Run(std::string("simulate ") + kExample + " --set sweep.decode.pp=3");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
}

// A chat search ranks disaggregated deployments beside the aggregated
// layouts; with the aggregated ones bounded away (no EP size of 5 divides
// any TP), its best is disaggregated and --emit-spec writes that deployment,
// which plan, validate and simulate then take. The context is capped as a
// chat service would (at DeepSeek-V3's 163,840 tokens each decode server's
// request table takes 1.3 GiB), and at SGLang's default fraction a decode
// server leaves about 1.9 GiB by this model: a 1 GiB rule lets them rank.
TEST_F(DisaggregationE2e, SearchEmitsItsBestDisaggregatedDeploymentForSimulate) {
  const std::string out = (dir_ / "best.toml").string();
  const std::string html = (dir_ / "search.html").string();
  CommandResult r =
      Run("search examples/deepseek-v3-chat-search.toml --ep 5 --concurrency 16 --samples 0 "
          "--set workload.requests=64 --set engine.args.context-length=8192 "
          "--set decision.min_headroom_mib=1024 --emit-spec " +
          out + " --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The page's front chart has a series of its own for them.
  EXPECT_NE(ReadText(html).find("<text x=\"18\" y=\"10\">disaggregated</text>"), std::string::npos);
  EXPECT_NE(r.out.find("1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the disaggregated deployment"), std::string::npos) << r.err;
  CommandResult v = Run("validate " + out);
  EXPECT_EQ(v.exit_code, 0) << v.err;
  CommandResult s = Run("simulate " + out + " --json --samples 0");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const nlohmann::json j = nlohmann::json::parse(s.out);
  EXPECT_TRUE(j["disaggregated"].get<bool>());
  EXPECT_EQ(j["points"][0]["requests_completed"].get<int>(), 64);
  // ... and `run --engine sim` runs it.
  CommandResult ran = Run("run " + out + " --engine sim --run-id best --set sweep.repeats=1" +
                          " --set experiment.results_dir=" + (dir_ / "runs").string());
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ReadText(dir_ / "runs" / "best" / "report.md").find("## Pools"), std::string::npos);
}

TEST_F(DisaggregationE2e, SearchRefusesWithExit2) {
  CommandResult r = Run(std::string("search ") + kExample);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, kRefusal);
}

// The example on the simulated engine: its samples are the deployment's;
// each node's log and GPU snapshot are its pool's server's (its
// --disaggregation-mode, its memory), bench/<sample>.json names each pool's
// servers with the requests each served, commands.txt holds both pools'
// servers, the router in PD mode and the benchmark through it, and the
// report has a Pools section that `report` rebuilds from the evidence.
TEST_F(DisaggregationE2e, RunOnTheSimulatedEngineKeepsEachPoolsEvidence) {
  const fs::path results = dir_ / "results";
  CommandResult r = Run(std::string("run ") + kExample + " --engine sim --run-id pd" +
                        " --set experiment.results_dir=" + results.string() +
                        " --set sweep.concurrency=[16] --set sweep.repeats=1 "
                        "--set workload.requests=64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = results / "pd";
  const std::string sample = std::string(kDeployment) + "_c16_r1";
  EXPECT_EQ(CountCompleted(run), 1);
  const std::string prefill_log = ReadText(run / "service" / sample / "n0.log");
  EXPECT_NE(prefill_log.find("disaggregation_mode='prefill'"), std::string::npos) << prefill_log;
  EXPECT_NE(prefill_log.find("tp_size=8, pp_size=1, ep_size=8, dp_size=1"), std::string::npos);
  const std::string decode_log = ReadText(run / "service" / sample / "n3.log");
  EXPECT_NE(decode_log.find("disaggregation_mode='decode'"), std::string::npos) << decode_log;
  EXPECT_NE(decode_log.find("enable_dp_attention=True"), std::string::npos);
  // Each pool's memory, from its own plan: the decode servers (KV pool for
  // 512 running requests a rank) hold more than the prefill server.
  auto used_mib = [&](const std::string& host) {
    const std::string csv = ReadText(run / "gpu" / sample / (host + ".csv"));
    // index, uuid, name, memory.used, memory.total, ...: the first GPU's used.
    size_t at = 0;
    for (int comma = 0; comma < 3 && at != std::string::npos; ++comma) at = csv.find(',', at + 1);
    return at == std::string::npos ? -1.0 : std::stod(csv.substr(at + 1));
  };
  const double prefill_mib = used_mib("n0");
  const double decode_mib = used_mib("n1");
  EXPECT_GT(prefill_mib, 0);
  EXPECT_GT(decode_mib, prefill_mib);
  EXPECT_EQ(used_mib("n3"), decode_mib);

  const nlohmann::json bench = nlohmann::json::parse(ReadText(run / "bench" / (sample + ".json")));
  const nlohmann::json& pools = bench.at("disaggregation").at("pools");
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0]["role"], "prefill");
  EXPECT_EQ(pools[0]["gpus"], 8);
  EXPECT_EQ(pools[1]["role"], "decode");
  ASSERT_EQ(pools[1]["servers"].size(), 3u);
  EXPECT_EQ(pools[1]["servers"][2]["hosts"], nlohmann::json::array({"n3"}));
  int served = 0;
  for (const auto& server : pools[1]["servers"]) served += server["requests_ok"].get<int>();
  EXPECT_EQ(served, 64) << "every request decoded on one of the decode servers";
  EXPECT_EQ(pools[0]["servers"][0]["requests_ok"], 64);

  const std::string commands = ReadText(run / "metadata" / "commands.txt");
  EXPECT_NE(commands.find("n0 (prefill): python3 -m sglang.launch_server"), std::string::npos);
  EXPECT_NE(commands.find("--disaggregation-mode decode --disaggregation-transfer-backend "
                          "mooncake --disaggregation-bootstrap-port 8998"),
            std::string::npos)
      << commands;
  EXPECT_NE(commands.find("n0 (router): python3 -m sglang_router.launch_router "
                          "--pd-disaggregation --prefill http://n0:30000 8998 --decode "
                          "http://n1:30000 --decode http://n2:30000 --decode http://n3:30000 "
                          "--policy cache_aware --host n0 --port 8000"),
            std::string::npos)
      << commands;
  EXPECT_NE(commands.find("ppsearch bench --url http://n0:8000 "), std::string::npos);

  const std::string summary = ReadText(run / "summary.csv");
  EXPECT_NE(summary.find("\n1,,,,16,"), std::string::npos) << summary;
  EXPECT_NE(summary.find(std::string(",") + kDeployment + "\n"), std::string::npos) << summary;
  const std::string report = ReadText(run / "report.md");
  EXPECT_NE(report.find("## Pools"), std::string::npos) << report;
  EXPECT_NE(report.find("| prefill |       1 | n0       |    8 |"), std::string::npos) << report;
  EXPECT_NE(report.find("**Primary: 1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8/DP8**"), std::string::npos)
      << report;
  const std::string html = ReadText(run / "report.html");
  EXPECT_NE(html.find("id=\"pools-ttft\""), std::string::npos);
  EXPECT_NE(html.find("data-key=\"C = 16 decode pool fill\""), std::string::npos);
  fs::remove(run / "report.md");
  fs::remove(run / "summary.csv");
  CommandResult rebuilt = Run("report " + run.string());
  ASSERT_EQ(rebuilt.exit_code, 0) << rebuilt.err;
  EXPECT_EQ(ReadText(run / "summary.csv"), summary);
  EXPECT_EQ(ReadText(run / "report.md"), report);
}

// A cluster host in neither pool runs no server: it leaves no log or
// snapshot, and its absence is not missing evidence.
TEST_F(DisaggregationE2e, AHostInNeitherPoolIsNotMissedByTheAnalysis) {
  const fs::path results = dir_ / "results";
  CommandResult r =
      Run(std::string("run ") + kExample + " --engine sim --run-id spare" +
          " --set experiment.results_dir=" + results.string() +
          " --set 'cluster.hosts=[\"n0\", \"n1\", \"n2\", \"n3\", \"n4\"]'"
          " --set sweep.concurrency=[16] --set sweep.repeats=1 --set workload.requests=64");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path run = results / "spare";
  const std::string sample = std::string(kDeployment) + "_c16_r1";
  EXPECT_FALSE(fs::exists(run / "service" / sample / "n4.log"));
  const std::string report = ReadText(run / "report.md");
  EXPECT_EQ(report.find("is missing"), std::string::npos) << report;
  EXPECT_NE(report.find("Verdicts: 1 ok."), std::string::npos) << report;
  EXPECT_NE(report.find("## Pools"), std::string::npos) << report;
}

// A failed KV transfer injected into a deployment's sample is logged on its
// prefill server as SGLang logs one, found by the scan, and keeps the
// sample out of the decision; an aggregated sample cannot take that fault.
TEST_F(DisaggregationE2e, AnInjectedKvTransferFailureIsALogFinding) {
  const fs::path results = dir_ / "results";
  const std::string sample = std::string(kDeployment) + "_c16_r1";
  CommandResult r = Run(std::string("run ") + kExample + " --engine sim --run-id kv" +
                        " --set experiment.results_dir=" + results.string() +
                        " --set sweep.concurrency=[16] --set sweep.repeats=1 "
                        "--set workload.requests=64 --set 'sim.inject=[{sample=\"" +
                        sample + "\", fault=\"kv_transfer\"}]'");
  EXPECT_EQ(r.exit_code, 4) << r.err;  // the one deployment no longer qualifies
  const std::string report = ReadText(results / "kv" / "report.md");
  EXPECT_NE(report.find("Verdicts: 1 log_findings."), std::string::npos) << report;
  EXPECT_NE(report.find("KV transfer failure in service/" + sample + "/n0.log:"), std::string::npos)
      << report;
  CommandResult aggregated =
      Run("validate examples/kimi-k3-pp-search.toml --set "
          "'sim.inject=[{sample=\"pp2-tp16-ep4_c8_r1\", fault=\"kv_transfer\"}]'");
  EXPECT_EQ(aggregated.exit_code, 2);
  EXPECT_NE(aggregated.err.find("\"kv_transfer\" fails a disaggregated deployment's KV transfer"),
            std::string::npos)
      << aggregated.err;
}

// Killed mid-run and resumed, a deployment's run completes each sample
// exactly once and ends as a run left alone does.
TEST_F(DisaggregationE2e, AKilledRunResumesToTheSameSummary) {
  const std::string sets = std::string(" --set sweep.concurrency=[16,32] --set sweep.repeats=2 ") +
                           "--set workload.requests=64";
  const fs::path results = dir_ / "results";
  CommandResult full = Run(std::string("run ") + kExample + " --engine sim --run-id full" + sets +
                           " --set experiment.results_dir=" + results.string());
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const std::string set_dir = "experiment.results_dir=" + results.string();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::freopen("/dev/null", "w", stdout);
    ::freopen("/dev/null", "w", stderr);
    ::execl(bin_.c_str(), bin_.c_str(), "run", kExample, "--engine", "sim", "--run-id", "killed",
            "--set", "sweep.concurrency=[16,32]", "--set", "sweep.repeats=2", "--set",
            "workload.requests=64", "--set", set_dir.c_str(), "--pace-ms", "400",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const fs::path run = results / "killed";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline &&
         !(fs::exists(run / "manifest.jsonl") && CountCompleted(run) >= 1))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int before = CountCompleted(run);
  ASSERT_GE(before, 1);
  ASSERT_LT(before, 4);
  CommandResult resumed = Run("run --resume " + run.string());
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(CountCompleted(run), 4) << "every sample completed exactly once";
  EXPECT_EQ(ReadText(run / "summary.csv"), ReadText(results / "full" / "summary.csv"));
}

// Real servers run a deployment: its dry run shows each pool's servers,
// the router and the benchmark through it. What is not built for one is
// refused before anything runs: an adaptive run, which chooses among
// layouts, and a replay.
TEST_F(DisaggregationE2e, RealServersAreDryRunAndAnAdaptiveRunOrAReplayIsRefusedWithExit2) {
  const std::string results = " --set experiment.results_dir=" + (dir_ / "r").string();
  CommandResult dry = Run(std::string("run ") + kExample + " --dry-run" + results);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("engine sglang, launcher ssh"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("n3 (decode): "), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("n0 (router): "), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("python3 -m sglang_router.launch_router --pd-disaggregation --prefill "
                         "http://n0:30000 8998"),
            std::string::npos)
      << dry.out;
  CommandResult adaptive =
      Run(std::string("run ") + kExample + " --engine sim --adaptive" + results);
  EXPECT_EQ(adaptive.exit_code, 2) << adaptive.out;
  EXPECT_NE(adaptive.err.find("a disaggregated spec holds one deployment; run it without "
                              "--adaptive"),
            std::string::npos)
      << adaptive.err;
  CommandResult replay = Run(std::string("run ") + kExample +
                             " --engine replay:" + (dir_ / "none").string() + results);
  EXPECT_NE(replay.exit_code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "r")) << "nothing was written";
}

// serve-sim plays SGLang's PD servers; a mode SGLang lacks is refused.
TEST_F(DisaggregationE2e, ServeSimRefusesAModeSglangLacksWithExit2) {
  CommandResult r = Run(
      "serve-sim --model-path data/models/deepseek-v3 --tp-size 8 --disaggregation-mode encode");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err,
            "error: --disaggregation-mode must be one of null, prefill, decode (got 'encode')\n");
}

}  // namespace
