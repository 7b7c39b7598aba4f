// A disaggregated spec as a user meets it: `plan` and `validate` accept the
// shipped example and print both pools, `simulate` predicts it; the commands
// that search or run refuse it with exit 2 rather than treat it as
// aggregated.

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_fixture.h"

namespace {

namespace fs = std::filesystem;

using ppsearch::testing::CliTest;
using ppsearch::testing::CommandResult;

constexpr char kExample[] = "examples/deepseek-v3-1p1d.toml";

// The example's [sweep.prefill] table starts on this line.
constexpr char kRefusal[] =
    "error: examples/deepseek-v3-1p1d.toml:44:1: [sweep.prefill] and [sweep.decode] make this a "
    "disaggregated deployment; only `ppsearch plan`, `ppsearch validate` and `ppsearch "
    "simulate` understand disaggregated deployments so far (running them is not built yet; "
    "`ppsearch search` of an aggregated spec adds them itself)\n";

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
                       "validate and simulate understand it so far)\n");
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
// which plan, validate and simulate then take.
TEST_F(DisaggregationE2e, SearchEmitsItsBestDisaggregatedDeploymentForSimulate) {
  const std::string out = (dir_ / "best.toml").string();
  const std::string html = (dir_ / "search.html").string();
  CommandResult r =
      Run("search examples/deepseek-v3-chat-search.toml --ep 5 --concurrency 16 --samples 0 "
          "--set workload.requests=64 --emit-spec " +
          out + " --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The page's front chart has a series of its own for them.
  EXPECT_NE(ppsearch::testing::ReadText(html).find("<text x=\"18\" y=\"10\">disaggregated</text>"),
            std::string::npos);
  EXPECT_NE(r.out.find("1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the disaggregated deployment"), std::string::npos) << r.err;
  CommandResult v = Run("validate " + out);
  EXPECT_EQ(v.exit_code, 0) << v.err;
  CommandResult s = Run("simulate " + out + " --json --samples 0");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const nlohmann::json j = nlohmann::json::parse(s.out);
  EXPECT_TRUE(j["disaggregated"].get<bool>());
  EXPECT_EQ(j["points"][0]["requests_completed"].get<int>(), 64);
}

TEST_F(DisaggregationE2e, SearchRefusesWithExit2) {
  CommandResult r = Run(std::string("search ") + kExample);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, kRefusal);
}

TEST_F(DisaggregationE2e, RunRefusesWithExit2) {
  const fs::path out = dir_ / "run";
  CommandResult r = Run(std::string("run ") + kExample +
                        " --engine sim --set experiment.results_dir=" + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("only `ppsearch plan`, `ppsearch validate` and `ppsearch simulate`"),
            std::string::npos)
      << r.err;
}

TEST_F(DisaggregationE2e, ServeSimRefusesAPdServerWithExit2) {
  CommandResult r = Run(
      "serve-sim --model-path data/models/deepseek-v3 --tp-size 8 --disaggregation-mode decode");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err,
            "error: --disaggregation-mode decode: serve-sim plays aggregated SGLang servers only; "
            "only `ppsearch plan`, `ppsearch validate` and `ppsearch simulate` understand "
            "disaggregated deployments so far\n");
}

}  // namespace
