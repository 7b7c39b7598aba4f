// The markdown form of a backtest's results (validation/README.md shows it):
// one table row per figure, sign and refusal, cells that cannot break a
// table, and no local path from the planner's reason.

#include "backtest/render.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace ppsearch::backtest
