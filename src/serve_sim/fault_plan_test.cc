#include "serve_sim/fault_plan.h"

#include <gtest/gtest.h>

namespace ppsearch::serve_sim {
namespace {

constexpr const char* kPlan =
    "# faults of the rehearsal\n"
    "\n"
    "pp2-tp16-ep4_c8_r1/n2 --fault-die-after-s 3   # node 2 dies mid-benchmark\n"
    "pp2-tp16-ep4_c8_r1/n0 --fault-log oom --fault-never-ready\n";

TEST(FaultPlanTest, TheMatchingLinesFlags) {
  auto n2 = FindFaultPlanLine(kPlan, "f.txt", "pp2-tp16-ep4_c8_r1/n2");
  ASSERT_TRUE(n2.ok()) << n2.error().message;
  EXPECT_EQ(n2->line, 3);
  EXPECT_EQ(n2->words, (std::vector<std::string>{"--fault-die-after-s", "3"}));
  auto n0 = FindFaultPlanLine(kPlan, "f.txt", "pp2-tp16-ep4_c8_r1/n0");
  ASSERT_TRUE(n0.ok());
  EXPECT_EQ(n0->words, (std::vector<std::string>{"--fault-log", "oom", "--fault-never-ready"}));
  auto none = FindFaultPlanLine(kPlan, "f.txt", "pp2-tp16-ep4_c8_r1/n1");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->line, 0);
  EXPECT_TRUE(none->words.empty());
}

TEST(FaultPlanTest, MalformedLinesPointAtFileAndLine) {
  auto msg = [](const std::string& text) {
    auto r = FindFaultPlanLine(text, "plan.txt", "k");
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(msg("a --fault-log oom\nk --tp-size 8\n"),
            "plan.txt:2: only --fault-* flags may appear in a fault plan, not '--tp-size'");
  EXPECT_EQ(msg("k oom\n"), "plan.txt:1: 'oom' is not a --fault-* flag or the value of one");
  EXPECT_EQ(msg("\n--fault-log oom\n"),
            "plan.txt:2: a line starts with its key (e.g. pp2-tp16-ep4_c8_r1/n2), not a flag: "
            "'--fault-log'");
  EXPECT_EQ(msg("k\n"), "plan.txt:1: key 'k' has no --fault-* flags");
  EXPECT_EQ(msg("k --fault-never-ready\nk --fault-log oom\n"),
            "plan.txt:2: key 'k' is also on line 1");
  EXPECT_EQ(msg("k --fault-log oom extra\n"),
            "plan.txt:1: 'extra' is not a --fault-* flag or the value of one");
}

}  // namespace
}  // namespace ppsearch::serve_sim
