// A disaggregated spec as a user meets it: `plan` and `validate` accept the
// shipped example and print both pools; the commands that predict, search or
// run refuse it with exit 2 rather than treat it as aggregated.

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_fixture.h"

namespace {

namespace fs = std::filesystem;

using ppsearch::testing::CliTest;
using ppsearch::testing::CommandResult;

constexpr char kExample[] = "examples/deepseek-v3-1p1d.toml";

// The example's [sweep.prefill] table starts on this line.
constexpr char kRefusal[] =
    "error: examples/deepseek-v3-1p1d.toml:42:1: [sweep.prefill] and [sweep.decode] make this a "
    "disaggregated deployment; only `ppsearch plan` and `ppsearch validate` understand "
    "disaggregated deployments so far (prediction, search and runs of them are not built yet)\n";

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
                       ": ok (disaggregated: prefill PP1/TP8/EP8, decode 3xPP1/TP8/EP8/DP8; only "
                       "plan and validate understand it so far)\n");
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

TEST_F(DisaggregationE2e, SimulateRefusesWithExit2) {
  CommandResult r = Run(std::string("simulate ") + kExample);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, kRefusal);
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
  EXPECT_NE(r.err.find("only `ppsearch plan` and `ppsearch validate` understand"),
            std::string::npos)
      << r.err;
}

TEST_F(DisaggregationE2e, ServeSimRefusesAPdServerWithExit2) {
  CommandResult r = Run(
      "serve-sim --model-path data/models/deepseek-v3 --tp-size 8 --disaggregation-mode decode");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err,
            "error: --disaggregation-mode decode: serve-sim plays aggregated SGLang servers only; "
            "only `ppsearch plan` and `ppsearch validate` understand disaggregated deployments so "
            "far\n");
}

}  // namespace
