#include "report/uncertainty_tables.h"

#include <gtest/gtest.h>

namespace ppsearch::report {
namespace {

uncertainty::UncertaintySummary TwoRanked() {
  uncertainty::UncertaintySummary s;
  s.ranking.resize(2);
  s.ranking[0].layout.pp = 8;
  s.ranking[0].layout.tp = 4;
  s.ranking[0].layout.ep = 4;
  s.ranking[0].score = 1.0;
  s.ranking[1].layout.pp = 4;
  s.ranking[1].layout.tp = 8;
  s.ranking[1].layout.ep = 4;
  s.ranking[1].score = 0.8;
  s.overlap_note = "no overlap";
  return s;
}

// The draws rank by input TPS (or TTFT p50): under another objective the
// line says what it ranked by, not the objective it did not.
TEST(DecisionUncertaintyLines, NameWhatTheDrawsRankedBy) {
  EXPECT_EQ(DecisionUncertaintyLines(TwoRanked(), decide::Objective())[0],
            "predicted best PP8/TP4/EP4, runner-up PP4/TP8/EP4 (20.00% lower score by objective "
            "`input_tps`: the geometric mean over the concurrency levels, as the decision ranks)");
  EXPECT_EQ(DecisionUncertaintyLines(TwoRanked(),
                                     decide::Objective(decide::Objective::Kind::kGoodput))[0],
            "predicted best PP8/TP4/EP4, runner-up PP4/TP8/EP4 (20.00% lower score by input TPS: "
            "the geometric mean over the concurrency levels; the draws do not carry objective "
            "`goodput`)");
}

}  // namespace
}  // namespace ppsearch::report
