// Which server takes the next request: least-outstanding and round-robin,
// by hand-worked sequences.

#include "loadgen/routing.h"

#include <gtest/gtest.h>

namespace ppsearch::loadgen {
namespace {

TEST(Router, LeastOutstandingFillsTheEmptiestAndTakesTurnsOnTies) {
  Router r(3, Routing::kLeastOutstanding);
  EXPECT_EQ(r.Pick(), 0u);  // all empty: in turn
  EXPECT_EQ(r.Pick(), 1u);
  EXPECT_EQ(r.Pick(), 2u);
  r.Done(1);
  EXPECT_EQ(r.Pick(), 1u);  // the only one with room
  r.Done(2);
  r.Done(0);
  EXPECT_EQ(r.Pick(), 2u);  // 0 and 2 tie at none; 2 is next after 1
  EXPECT_EQ(r.Pick(), 0u);
  EXPECT_EQ(r.in_flight(), (std::vector<int>{1, 1, 1}));
}

TEST(Router, RoundRobinIgnoresWhatEachHolds) {
  Router r(2, Routing::kRoundRobin);
  EXPECT_EQ(r.Pick(), 0u);
  EXPECT_EQ(r.Pick(), 1u);
  r.Done(1);
  EXPECT_EQ(r.Pick(), 0u);  // 0 holds two now, 1 none
  EXPECT_EQ(r.in_flight(), (std::vector<int>{2, 0}));
}

TEST(Router, NamesParseBack) {
  for (Routing routing : {Routing::kLeastOutstanding, Routing::kRoundRobin})
    EXPECT_EQ(ParseRouting(RoutingName(routing)), routing);
  EXPECT_FALSE(ParseRouting("random").has_value());
}

}  // namespace
}  // namespace ppsearch::loadgen
