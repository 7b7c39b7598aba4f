#include "report/adaptive_section.h"

#include <gtest/gtest.h>

namespace ppsearch::report {
namespace {

evidence::TrajectoryStep Step(int n, const std::string& label, int c, double spent, double p) {
  evidence::TrajectoryStep s;
  s.step = n;
  s.label = label;
  s.concurrency = c;
  s.gpu_hours_spent = spent;
  s.p_wrong_before = p;
  s.p_wrong_expected_after = p / 2;
  s.cost_gpu_hours = 18.3;
  s.server_start = n == 1;
  s.reason = "reason " + std::to_string(n);
  return s;
}

evidence::Trajectory TwoSteps() {
  evidence::Trajectory t;
  t.steps = {Step(1, "PP8/TP4/EP4", 8, 0, 0.9), Step(2, "PP4/TP8/EP4", 16, 18.3, 0.5)};
  evidence::TrajectoryStop stop;
  stop.reason = "settled";
  stop.gpu_hours_spent = 36.6;
  stop.p_wrong = 0.02;
  stop.message = "Stopped: the choice is settled.";
  t.stop = stop;
  return t;
}

TEST(AdaptiveSection, TheStopParagraphAndOneRowPerStep) {
  analysis::RunAnalysis a;
  EXPECT_FALSE(AdaptiveSection(a).has_value());  // a run that measured its whole sweep
  a.evidence.trajectory = TwoSteps();
  const std::optional<Section> s = AdaptiveSection(a);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->title, "Adaptive measurement");
  ASSERT_EQ(s->blocks.size(), 4u);
  EXPECT_EQ(s->blocks[1].text, "Stopped: the choice is settled.");
  const table::Table& table = s->blocks[2].table;
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"2", "PP4/TP8/EP4 C=16", "no", "50.0%",
                                                     "25.0%", "18.30", "18.30", "reason 2"}));
  EXPECT_EQ(table.rows[0][2], "yes");
  EXPECT_EQ(s->blocks[3].kind, Block::Kind::kFigure);
  EXPECT_EQ(s->blocks[3].text, kFigureTrajectory);
}

TEST(AdaptiveSection, AnUnfinishedRunSaysHowToResumeIt) {
  analysis::RunAnalysis a;
  a.evidence.run_dir = "/r/run";
  a.evidence.trajectory = TwoSteps();
  a.evidence.trajectory->stop.reset();
  const std::optional<Section> s = AdaptiveSection(a);
  ASSERT_TRUE(s.has_value());
  EXPECT_NE(s->blocks[1].text.find("resume it with `ppsearch run --resume /r/run`"),
            std::string::npos)
      << s->blocks[1].text;
}

// P(wrong) against GPU-hours spent: a point before each step and one at the stop.
TEST(TrajectoryChart, APointPerStepAndTheStop) {
  const std::string svg = TrajectoryChart(TwoSteps());
  EXPECT_NE(svg.find("id=\"trajectory\""), std::string::npos);
  EXPECT_NE(svg.find("data-key=\"step 1: PP8/TP4/EP4 C=8\" data-value=\"90.0\" data-x=\"0.00\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("data-key=\"step 2: PP4/TP8/EP4 C=16\" data-value=\"50.0\" data-x=\"18.30\""),
            std::string::npos);
  EXPECT_NE(svg.find("data-key=\"stop: settled\" data-value=\"2.0\" data-x=\"36.60\""),
            std::string::npos);
}

}  // namespace
}  // namespace ppsearch::report
