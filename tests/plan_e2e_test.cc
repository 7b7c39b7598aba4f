// `ppsearch plan` as a user runs it: the built binary (PPSEARCH_BIN) on the
// shipped example spec and on temporary specs, from the repository root.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_fixture.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using ppsearch::testing::CliTest;
using ppsearch::testing::CommandResult;

class PlanE2e : public CliTest {
 protected:
  // A small spec on the mission's cluster whose [sweep] holds `layouts`.
  fs::path WriteSpec(const std::string& layouts, const std::string& model_config) {
    const fs::path path = dir_ / "spec.toml";
    std::ofstream out(path);
    out << "[experiment]\nname = \"e2e\"\n\n"
        << "[cluster]\nhosts = [\"601\", \"602\", \"603\", \"604\"]\ngpus_per_node = 8\n"
        << "hardware = \"rtx-6000d\"\n\n"
        << "[engine]\nmodel_path = \"/models/kimi-k3\"\nmodel_config = \"" << model_config
        << "\"\n\n[engine.args]\ndisable-radix-cache = true\n\n"
        << "[sweep]\nlayouts = " << layouts << "\nconcurrency = [8, 16]\n\n"
        << "[workload]\ninput_tokens = 16000\nrequests = 48\n";
    return path;
  }

  std::string KimiConfig() const {
    return (fs::current_path() / "data/models/kimi-k3/config.json").string();
  }
};

TEST_F(PlanE2e, ExampleSpecJson) {
  CommandResult r = Run("plan examples/kimi-k3-pp-search.toml --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json plan = json::parse(r.out);
  EXPECT_GT(plan["model"]["total_params"].get<int64_t>(), 2'000'000'000'000);
  EXPECT_GT(plan["model"]["active_params"].get<int64_t>(), 0);
  EXPECT_LT(plan["model"]["active_params"].get<int64_t>(),
            plan["model"]["total_params"].get<int64_t>());
  const json& layouts = plan["layouts"];
  ASSERT_EQ(layouts.size(), 4u);
  const int pps[] = {1, 2, 4, 8}, tps[] = {32, 16, 8, 4}, moe_tps[] = {8, 4, 2, 1};
  const int crossing[] = {0, 1, 3, 3};
  for (size_t i = 0; i < 4; ++i) {
    const json& l = layouts[i];
    EXPECT_EQ(l["pp"], pps[i]);
    EXPECT_EQ(l["tp"], tps[i]);
    EXPECT_EQ(l["ep"], 4);
    EXPECT_EQ(l["moe_tp"], moe_tps[i]);
    EXPECT_EQ(l["valid"], true) << l["errors"].dump();
    EXPECT_TRUE(l["errors"].empty());
    EXPECT_EQ(l["cross_node_stage_boundaries"], crossing[i]);
    EXPECT_EQ(l["allreduce_per_forward"], 187);  // 2 x 93 layers + the embedding's
    EXPECT_GT(l["weight_mib_per_rank_max"].get<double>(), 0);
    EXPECT_LT(l["weight_mib_per_rank_max"].get<double>(), 85651);
    EXPECT_EQ(l["tp_groups"].size(), static_cast<size_t>(pps[i]));
    EXPECT_EQ(l["stages"].size(), static_cast<size_t>(pps[i]));
  }
  EXPECT_EQ(layouts[0]["tp_groups"][0]["nodes"], json({"601", "602", "603", "604"}));
  EXPECT_EQ(layouts[0]["tp_groups"][0]["ranks"].size(), 32u);
  EXPECT_EQ(layouts[1]["tp_groups"][0]["nodes"], json({"601", "602"}));
  EXPECT_EQ(layouts[1]["tp_groups"][1]["nodes"], json({"603", "604"}));
  for (size_t s = 0; s < 4; ++s) {
    EXPECT_EQ(layouts[2]["tp_groups"][s]["nodes"].size(), 1u);
    EXPECT_EQ(layouts[2]["stages"][s]["nodes"], layouts[2]["tp_groups"][s]["nodes"]);
  }
  const json& pp8 = layouts[3];
  const int ends[] = {11, 22, 33, 45, 57, 69, 81, 93};
  for (size_t s = 0; s < 8; ++s) {
    EXPECT_EQ(pp8["stages"][s]["layers"], json({s == 0 ? 0 : ends[s - 1], ends[s]}));
    EXPECT_EQ(pp8["stages"][s]["nodes"], json({std::to_string(601 + s / 2)}));
  }
  // The example sends 40 requests at C = 16: a partial last wave.
  ASSERT_EQ(plan["warnings"].size(), 1u);
  const json& warning = plan["warnings"][0];
  EXPECT_NE(warning["message"].get<std::string>().find("40 requests per sample"),
            std::string::npos);
  EXPECT_EQ(warning["location"]["file"], "examples/kimi-k3-pp-search.toml");
  EXPECT_GT(warning["location"]["line"].get<int>(), 0);
  EXPECT_EQ(warning["location"]["key"], "workload.requests");
}

TEST_F(PlanE2e, ExampleSpecText) {
  CommandResult r = Run("plan examples/kimi-k3-pp-search.toml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("spans 4 nodes: 601 602 603 604"), std::string::npos);
  EXPECT_NE(r.out.find("spans 2 nodes: 601 602"), std::string::npos);
  EXPECT_NE(r.out.find("node-local (601)"), std::string::npos);
  EXPECT_NE(r.out.find("crosses nodes 601->602"), std::string::npos);
  EXPECT_NE(r.out.find("== PP8/TP4/EP4  valid"), std::string::npos);
}

TEST_F(PlanE2e, OverridesAndLayoutSelection) {
  CommandResult r = Run("plan examples/kimi-k3-pp-search.toml --json --set sweep.pp=[8]");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json plan = json::parse(r.out);
  ASSERT_EQ(plan["layouts"].size(), 1u);
  EXPECT_EQ(plan["layouts"][0]["tp"], 4);

  r = Run("plan examples/kimi-k3-pp-search.toml --json --layout PP4/TP8/EP4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  plan = json::parse(r.out);
  ASSERT_EQ(plan["layouts"].size(), 1u);
  EXPECT_EQ(plan["layouts"][0]["pp"], 4);
  EXPECT_EQ(plan["layouts"][0]["origin"]["key"], "sweep.pp[2]");  // the spec's own entry
}

// A layout given twice is refused, as a spec listing one twice is, rather
// than planned and printed twice; so is a concurrency given twice.
TEST_F(PlanE2e, ALayoutGivenTwiceIsRefused) {
  CommandResult r = Run("plan examples/kimi-k3-pp-search.toml --layout 8/4/4 --layout PP8/TP4/EP4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: --layout PP8/TP4/EP4 is given twice; give each layout once\n");
  r = Run("simulate examples/kimi-k3-pp-search.toml --layout 8/4/4 --concurrency 8,8 --samples 0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --concurrency 8 is given twice; give each concurrency once\n");
}

TEST_F(PlanE2e, InvalidLayoutExitsWithConfigError) {
  const fs::path spec =
      WriteSpec("[{pp = 4, tp = 8, ep = 4}, {pp = 3, tp = 8, ep = 4}]", KimiConfig());
  CommandResult r = Run("plan " + spec.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("error: " + spec.string() +
                       ":17:38: key 'sweep.layouts[1]': PP3/TP8/EP4 uses 24 GPUs but the cluster "
                       "has 32 (4 hosts x 8); TP x PP must equal the GPU count\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("== PP4/TP8/EP4  valid"), std::string::npos);  // the plan is still printed
}

TEST_F(PlanE2e, AdHocLayoutPointsAtTheArgument) {
  const fs::path spec = WriteSpec("[{pp = 4, tp = 8, ep = 4}]", KimiConfig());
  CommandResult r = Run("plan " + spec.string() + " --json --layout 8/4/3");
  EXPECT_EQ(r.exit_code, 2);
  const json plan = json::parse(r.out);
  ASSERT_EQ(plan["layouts"].size(), 1u);
  EXPECT_EQ(plan["layouts"][0]["valid"], false);
  EXPECT_EQ(plan["layouts"][0]["errors"][0]["message"],
            "--layout 8/4/3: PP8/TP4/EP3 has TP 4 not divisible by EP 3; SGLang builds EP groups "
            "inside each TP group, so EP must divide TP");

  r = Run("plan " + spec.string() + " --layout 8x4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: --layout 8x4: expected PP/TP/EP or PP/TP/EP/DP, optionally after an "
            "instance count NX, e.g. --layout 8/4/4, --layout PP8/TP4/EP4, --layout "
            "PP1/TP8/EP8/DP8 or --layout 2xPP2/TP8/EP4\n");
}

TEST_F(PlanE2e, MissingModelConfigIsAConfigError) {
  const fs::path spec =
      WriteSpec("[{pp = 4, tp = 8, ep = 4}]", (dir_ / "no-such-model/config.json").string());
  CommandResult r = Run("plan " + spec.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("no-such-model"), std::string::npos) << r.err;
}

}  // namespace
