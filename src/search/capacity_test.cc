// Capacity planning on hand-built search results: instances of each
// qualifying candidate enough for the target rate, the fewest GPUs first and
// the ranking's order among equals.

#include "search/capacity.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "search/search_render.h"

namespace ppsearch::search {
namespace {

Evaluated Served(int instances, int pp, int tp, double rps, int concurrency) {
  Evaluated e;
  e.candidate.layout.instances = instances;
  e.candidate.layout.pp = pp;
  e.candidate.layout.tp = tp;
  e.candidate.layout.ep = 1;
  e.gpus = instances * pp * tp;
  PointFigures at;
  at.load.concurrency = concurrency;
  at.request_rps = rps;
  e.at = at;
  return e;
}

TEST(Capacity, TheFewestGpusFirstThenTheRanking) {
  SearchResult r;
  // Ranked first: one 16-GPU instance serving 3 requests/s; second: two
  // 8-GPU instances serving 4 between them (2 each); third: 4 instances of
  // 4 GPUs serving 2.5 each; a fourth that completes nothing is left out; a
  // fifth the same as the third.
  r.evaluated = {Served(1, 1, 16, 3, 32), Served(2, 1, 8, 4, 32), Served(4, 1, 4, 10, 16),
                 Served(1, 2, 8, 0, 8), Served(4, 1, 4, 10, 16)};
  r.qualifying = 5;
  const CapacityPlan plan = PlanCapacity(r, 5, 16);
  ASSERT_EQ(plan.rows.size(), 4u);
  // 5 requests/s: 2 instances of 4 GPUs at 2.5 (8 GPUs; the third, then
  // the fifth: equal GPUs keep the ranking's order), 3 of 8 GPUs at 2 (24),
  // 2 of 16 GPUs at 3 (32).
  EXPECT_EQ(plan.rows[0].evaluated, 2u);
  EXPECT_EQ(plan.rows[1].evaluated, 4u);
  EXPECT_EQ(plan.rows[0].instances, 2);
  EXPECT_EQ(plan.rows[0].gpus, 8);
  EXPECT_DOUBLE_EQ(plan.rows[0].instance_rps, 2.5);
  EXPECT_EQ(plan.rows[0].instance_load.concurrency, 4);  // C=16 over 4 instances
  EXPECT_EQ(plan.rows[0].instance.Label(), "PP1/TP4/EP1");
  EXPECT_EQ(plan.rows[2].evaluated, 1u);
  EXPECT_EQ(plan.rows[2].gpus, 24);
  EXPECT_EQ(plan.rows[2].instances, 3);
  EXPECT_EQ(plan.rows[3].gpus, 32);
  EXPECT_EQ(plan.rows[3].instances, 2);
  // Exactly a multiple: 10 / 2.5 is 4 instances, not 5.
  EXPECT_EQ(PlanCapacity(r, 10, 16).rows[0].instances, 4);

  const std::string text = RenderCapacityText(r, plan, 10);
  EXPECT_NE(text.find("Capacity for 5.00 requests/s: the fewest GPUs first"), std::string::npos)
      << text;
  EXPECT_NE(text.find("fewest GPUs: 2 instance(s) of PP1/TP4/EP1, 8 GPUs, each at C=4"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("no: the cluster has 16"), std::string::npos) << text;
  const nlohmann::json j = CapacityToJson(plan);
  EXPECT_EQ(j["rows"][0]["gpus"], 8);
  EXPECT_EQ(j["rows"][0]["rank"], 3);
  EXPECT_EQ(j["rows"][0]["fits_cluster"], true);
  EXPECT_EQ(j["rows"][3]["fits_cluster"], false);
}

// Capacity judged at the heaviest load listed is a floor: the text says so
// for the fewest-GPU row, and says nothing where that row's best load is
// lighter than the list reaches.
TEST(Capacity, ABestLoadAtTheHeaviestListedSaysMoreMayBeServed) {
  SearchResult r;
  r.load_points = {LoadPoint{8, 0}, LoadPoint{16, 0}, LoadPoint{32, 0}};
  r.evaluated = {Served(1, 1, 16, 3, 32), Served(4, 1, 4, 10, 16)};
  r.qualifying = 2;
  CapacityPlan plan = PlanCapacity(r, 5, 16);
  ASSERT_EQ(plan.rows.size(), 2u);
  EXPECT_FALSE(plan.rows[0].at_heaviest_load);  // 4 x PP1/TP4 at C=16
  EXPECT_TRUE(plan.rows[1].at_heaviest_load);   // PP1/TP16 at C=32
  EXPECT_EQ(RenderCapacityText(r, plan, 10).find("heaviest listed"), std::string::npos);
  EXPECT_EQ(CapacityToJson(plan)["rows"][1]["at_heaviest_load"], true);

  r.evaluated = {Served(1, 1, 16, 3, 32)};
  r.qualifying = 1;
  plan = PlanCapacity(r, 5, 16);
  const std::string text = RenderCapacityText(r, plan, 10);
  EXPECT_NE(text.find("its best load is the heaviest listed (C=32 for the candidate): an instance "
                      "that meets the SLA there may serve more at a heavier load, so fewer "
                      "instances may do; list a heavier --concurrency to find out"),
            std::string::npos)
      << text;
}

// An open loop's instance serves its share of the rate offered, not the
// sample's measured requests/s, and runs at its share of the cap: 4
// instances at 2 req/s, C<=64 are 0.5 req/s, C<=16 each, so 4 req/s takes
// 8 of them; the "each at" column and the requests/s column agree.
TEST(Capacity, AnOpenLoopsInstanceServesItsShareOfTheRate) {
  SearchResult r;
  // 512 requests sent at 2/s over 256 s, the last done about 30 s later:
  // 1.79 requests/s is keeping up.
  Evaluated e = Served(4, 1, 8, 1.79, 0);
  e.at->load = LoadPoint{64, 2.0};
  e.at->requests = 512;
  e.at->e2e_p50_s = 30;
  r.evaluated = {e};
  r.qualifying = 1;
  const CapacityPlan plan = PlanCapacity(r, 4, 32);
  ASSERT_EQ(plan.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(plan.rows[0].instance_rps, 0.5);
  EXPECT_EQ(plan.rows[0].instances, 8);
  EXPECT_EQ(plan.rows[0].gpus, 64);
  EXPECT_EQ(plan.rows[0].instance_load, (LoadPoint{16, 0.5}));
  const std::string text = RenderCapacityText(r, plan, 10);
  EXPECT_NE(text.find("0.50   0.50 req/s, C<=16"), std::string::npos) << text;
  EXPECT_NE(text.find("fewest GPUs: 8 instance(s) of PP1/TP8/EP1, 64 GPUs, each at 0.50 req/s, "
                      "C<=16"),
            std::string::npos)
      << text;
  const nlohmann::json j = CapacityToJson(plan);
  EXPECT_EQ(j["rows"][0]["instance_rps"], 0.5);
  EXPECT_EQ(j["rows"][0]["instance_request_rate"], 0.5);
  EXPECT_EQ(j["rows"][0]["instance_concurrency"], 16);
  // Within the arrivals' spread (3 / sqrt(512) = 13%) of the 1.79/s that
  // keeping up gives, it kept up.
  r.evaluated[0].at->request_rps = 1.6;
  EXPECT_DOUBLE_EQ(PlanCapacity(r, 4, 32).rows[0].instance_rps, 0.5);
  // Offered 2/s, it completed 1/s: it fell behind, and serves what it
  // completed, 0.25/s per instance, not the rate it could not keep up with.
  r.evaluated[0].at->request_rps = 1.0;
  const CapacityPlan behind = PlanCapacity(r, 4, 32);
  ASSERT_EQ(behind.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(behind.rows[0].instance_rps, 0.25);
  EXPECT_EQ(behind.rows[0].instances, 16);
}

}  // namespace
}  // namespace ppsearch::search
