// The markdown form of a backtest's results (validation/README.md shows it):
// one table row per figure, sign and refusal, cells that cannot break a
// table, and no local path from the planner's reason.

#include "backtest/backtest_render.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "decide/steady_state.h"

namespace ppsearch::backtest {
namespace {

CaseResult OneCase() {
  CaseResult c;
  c.name = "lab/model|x";
  c.tolerance = 0.15;
  FamilyFit fit;
  fit.model = "/data/models/deepseek-v3/config.json";
  fit.configurations = {"pp1-tp8"};
  c.fits.push_back(fit);
  c.figures.push_back(MakeFigure("input TPS pp4-tp8 / pp1-tp8", "x", 3.2, 3.52, c.tolerance));
  c.signs.push_back({"pp4-tp8", "pp1-tp8", "input TPS", "ratio", true});
  RefusalResult r;
  r.configuration = "pp1-tp32-fp8";
  r.layout = {1, 32, 1, {}};
  r.refused = true;
  r.reason =
      "/home/u/case.toml:3:1: splits blocks in /home/u/config.json: \"Weight "
      "output_partition_size = 576 is not divisible by weight quantization block_n = "
      "128.\" (gate_proj); use ep = 32";
  c.refusals.push_back(r);
  return c;
}

TEST(RenderMarkdown, TablesRowsAndTotals) {
  const std::string md = RenderMarkdown({OneCase()});
  EXPECT_NE(md.find("| lab/model\\|x "), std::string::npos) << md;  // '|' escaped
  EXPECT_NE(md.find("| deepseek-v3 "), std::string::npos) << md;
  EXPECT_NE(md.find("| input TPS pp4-tp8 / pp1-tp8 |    3.20 x |    3.52 x | +10.0% | yes (15%) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| pp4-tp8 beats pp1-tp8 in input TPS "), std::string::npos) << md;
  EXPECT_NE(md.find("| pp1-tp32-fp8 PP1/TP32/EP1 "), std::string::npos) << md;
  EXPECT_NE(md.find("| refuses it: \"Weight output_partition_size = 576 is not divisible by "
                    "weight quantization block_n = 128.\" |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("/home/u"), std::string::npos) << md;
  EXPECT_TRUE(md.ends_with(
      "\nTotals: 1 cases, 1/1 figures within tolerance, 1/1 signs right, 1/1 refusals right: "
      "PASS.\n"))
      << md;
}

TEST(RenderMarkdown, OffPriorParametersAreMarkedInTheFitsColumn) {
  CaseResult c = OneCase();
  cost::Calibration& cal = c.fits[0].calibration;
  cal.Set(cost::Param::kIntraLink, 1.646);
  cal.status[cost::Index(cost::Param::kIntraLink)] = cost::ParamStatus::kDetermined;
  cal.Set(cost::Param::kWorkspace, 8505);
  cal.status[cost::Index(cost::Param::kWorkspace)] = cost::ParamStatus::kDetermined;
  cal.off_prior.push_back("intra_bw_scale = 1.646 is 1.4 prior widths outside its prior");
  const std::string md = RenderMarkdown({c});
  EXPECT_NE(md.find("intra_bw_scale 1.646 (determined, OFF PRIOR), runtime_workspace_mib 8505 "
                    "(determined) |"),
            std::string::npos)
      << md;
  EXPECT_NE(RenderText({c}).find("#   off prior: intra_bw_scale = 1.646 is 1.4 prior widths"),
            std::string::npos);
}

// A case with a decode configuration of two waves (short of its steady
// state) and one of eight.
CaseResult DecodeCase() {
  CaseResult c = OneCase();
  for (const auto& [name, requests] : {std::pair{"tp8-c64", 128}, std::pair{"tp8-c16", 128}}) {
    ConfigurationResult r;
    r.name = name;
    r.layout = {1, 8, 1, {}};
    r.concurrency = name == std::string("tp8-c64") ? 64 : 16;
    r.sample = {r.name, r.concurrency, requests};
    c.configurations.push_back(r);
  }
  return c;
}

TEST(Render, EachConfigurationIsJudgedByTheSteadyStateRule) {
  const CaseResult c = DecodeCase();
  const std::string text = RenderText({c});
  EXPECT_NE(text.find("# steady state: " + decide::SteadyRule() +
                      "; short of it at tp8-c64: 128 requests are 2.0 waves of 64, fewer "
                      "than 4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(RenderMarkdown({c}).find("\nShort of their steady state (" + decide::SteadyRule() +
                                     "):\n\n- lab/model|x: tp8-c64: 128 requests are 2.0 waves "
                                     "of 64, fewer than 4\n"),
            std::string::npos);
  const nlohmann::ordered_json j = RenderJson({c});
  EXPECT_EQ(j["cases"][0]["configurations"][0]["requests"], 128);
  EXPECT_EQ(j["cases"][0]["configurations"][0]["steady_state"], false);
  EXPECT_EQ(j["cases"][0]["configurations"][0]["not_steady"],
            "128 requests are 2.0 waves of 64, fewer than 4");
  EXPECT_EQ(j["cases"][0]["configurations"][1]["steady_state"], true);
  EXPECT_TRUE(j["cases"][0]["configurations"][1]["not_steady"].is_null());

  CaseResult steady = c;
  steady.configurations[0].sample.requests = 256;
  EXPECT_NE(RenderText({steady}).find("# steady state: " + decide::SteadyRule() +
                                      "; every configuration holds it\n"),
            std::string::npos);
  EXPECT_EQ(RenderMarkdown({steady}).find("Short of their steady state"), std::string::npos);
}

}  // namespace
}  // namespace ppsearch::backtest
