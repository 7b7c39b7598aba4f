// The search on hand-sized spaces: what is enumerated, why candidates are
// refused, the Pareto front, and screening that gives the result exhaustive
// evaluation gives.

#include "search/search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "inputs/search_inputs.h"
#include "plan/disaggregation.h"
#include "plan/plan_testing.h"
#include "ppsearch_source_dir.h"
#include "predict/disaggregated.h"
#include "search/best_load.h"
#include "search/measure.h"
#include "search/search_render.h"
#include "spec/engine_env.h"
#include "testkit/example_search.h"
#include "uncertainty/model_error.h"
#include "util/format.h"

namespace ppsearch::search {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<int> Concurrencies(const std::vector<LoadPoint>& loads) {
  std::vector<int> out;
  for (const LoadPoint& l : loads) {
    EXPECT_FALSE(l.open());
    out.push_back(l.concurrency);
  }
  return out;
}

// The engine as planned on an 80 GiB GPU, where SGLang's default chunk is 8,192.
plan::EngineConfig EngineOn80GiB(const spec::Spec& spec) {
  return plan::ResolveEngineConfig(spec.engine, 80 * 1024);
}

std::vector<std::string> Labels(const std::vector<Candidate>& candidates) {
  std::vector<std::string> out;
  for (const Candidate& c : candidates) out.push_back(c.Label());
  return out;
}

// One node of 8 GPUs and the tiny 4-layer model: PP 1, 2, 4 (PP 8 would
// exceed the layers), TP = 8 / PP, EP every divisor of TP.
TEST(SearchSpace, EveryPpDividingTheGpusWithTpFillingThemAndEpDividingTp) {
  spec::Spec spec = plan::testing::MissionSpec();
  spec.cluster.hosts.resize(1);
  Bounds b;
  b.chunked_prefill_size = {8192};
  b.dp = {1};
  const std::vector<Candidate> all =
      Enumerate(b, spec, plan::testing::TinyGqaModel(), EngineOn80GiB(spec));
  EXPECT_THAT(
      Labels(all),
      ElementsAre("PP1/TP8/EP1 chunk 8192", "PP1/TP8/EP2 chunk 8192", "PP1/TP8/EP4 chunk 8192",
                  "PP1/TP8/EP8 chunk 8192", "PP2/TP4/EP1 chunk 8192", "PP2/TP4/EP2 chunk 8192",
                  "PP2/TP4/EP4 chunk 8192", "PP4/TP2/EP1 chunk 8192", "PP4/TP2/EP2 chunk 8192"));
  // DP attention by default: every divisor of TP, as EP; a bound that does
  // not divide TP is no candidate.
  b.dp.clear();
  b.pp = {4};
  EXPECT_THAT(Labels(Enumerate(b, spec, plan::testing::TinyGqaModel(), EngineOn80GiB(spec))),
              ElementsAre("PP4/TP2/EP1 chunk 8192", "PP4/TP2/EP1/DP2 chunk 8192",
                          "PP4/TP2/EP2 chunk 8192", "PP4/TP2/EP2/DP2 chunk 8192"));
  b.pp = {2};
  b.ep = {4};
  b.dp = {2, 3};
  EXPECT_THAT(Labels(Enumerate(b, spec, plan::testing::TinyGqaModel(), EngineOn80GiB(spec))),
              ElementsAre("PP2/TP4/EP4/DP2 chunk 8192"));
  b.dp = {1};
  b.ep.clear();
  b.pp.clear();
  // The default chunks: the spec's (SGLang's per-GPU default when unset), half and twice it.
  b.chunked_prefill_size.clear();
  b.pp = {2};
  b.ep = {4};
  EXPECT_THAT(
      Labels(Enumerate(b, spec, plan::testing::TinyGqaModel(), EngineOn80GiB(spec))),
      ElementsAre("PP2/TP4/EP4 chunk 4096", "PP2/TP4/EP4 chunk 8192", "PP2/TP4/EP4 chunk 16384"));
  EXPECT_EQ(Concurrencies(LoadPoints(b)), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
}

// The spec's [search] lists are the bounds; a flag replaces its own
// dimension's list and leaves the others as the section set them.
TEST(SearchSpace, FlagsReplaceTheSectionsListsOneDimensionAtATime) {
  spec::SearchSpec section;
  section.pp = {4, 8, 16};
  section.ep = {1, 2, 4};
  section.chunked_prefill_size = {4096, 8192};
  section.max_running_requests = {32, 64};
  section.concurrency = {1, 4, 16, 64};
  Bounds flags;
  flags.pp = {8};
  flags.concurrency = {16};
  const Bounds b = WithFlags(SpecBounds(section), flags);
  EXPECT_EQ(b.pp, (std::vector<int>{8}));
  EXPECT_EQ(b.ep, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(b.chunked_prefill_size, (std::vector<int64_t>{4096, 8192}));
  EXPECT_EQ(b.max_running_requests, (std::vector<int>{32, 64}));
  EXPECT_EQ(b.concurrency, (std::vector<int>{16}));
  EXPECT_TRUE(b.dp.empty());

  // Without a section the flags alone are the bounds; without either, the defaults.
  flags.ep = {4};
  const Bounds only_flags = WithFlags(SpecBounds({}), flags);
  EXPECT_EQ(only_flags.pp, (std::vector<int>{8}));
  EXPECT_EQ(only_flags.ep, (std::vector<int>{4}));
  EXPECT_TRUE(only_flags.chunked_prefill_size.empty());
  EXPECT_EQ(Concurrencies(LoadPoints(WithFlags(SpecBounds({}), {}))), DefaultConcurrency());
}

// [search] disaggregated is --disaggregated's value, and the flag replaces it.
TEST(SearchSpace, TheSectionsDisaggregatedIsTheFlagsDefault) {
  spec::SearchSpec section;
  section.disaggregated = "off";
  EXPECT_EQ(WithFlags(SpecBounds(section), {}).disaggregated, "off");
  Bounds flags;
  flags.disaggregated = "on";
  EXPECT_EQ(WithFlags(SpecBounds(section), flags).disaggregated, "on");
  EXPECT_EQ(WithFlags(SpecBounds({}), {}).disaggregated, "");
}

TEST(SearchSpace, BoundsThatDescribeNoSpaceNameTheFlag) {
  Bounds b;
  b.pp = {0};
  EXPECT_EQ(CheckBounds(b).error().message, "--pp: expected values >= 1, got 0");
  b = {};
  b.pp = {8, 4, 8};
  EXPECT_EQ(CheckBounds(b).error().message, "--pp: 8 is listed twice");
  b = {};
  b.request_rate = {0.5, 0.5};
  EXPECT_EQ(CheckBounds(b).error().message, "--request-rate: 0.5 is listed twice");
  b = {};
  b.chunked_prefill_size = {0};
  EXPECT_EQ(CheckBounds(b).error().message,
            "--chunked-prefill-size: 0 is not a chunk size (-1 disables chunking)");
  // Past the spec's own bounds: --emit-spec could not write them into a spec.
  b = {};
  b.concurrency = {8, 65537};
  EXPECT_EQ(CheckBounds(b).error().message, "--concurrency: expected values <= 65536, got 65537");
  b = {};
  b.max_running_requests = {2147483647};
  EXPECT_EQ(CheckBounds(b).error().message,
            "--max-running-requests: expected an integer in [1, 65536], got 2147483647");
  // 0 is no cap SGLang takes, as in [search] max_running_requests.
  b.max_running_requests = {0, 64};
  EXPECT_EQ(CheckBounds(b).error().message,
            "--max-running-requests: expected an integer in [1, 65536], got 0");
  b = {};
  b.chunked_prefill_size = {8192, 33554432};
  EXPECT_EQ(CheckBounds(b).error().message,
            "--chunked-prefill-size: expected values <= 16777216, got 33554432");
}

// Instances split the hosts: each count that divides them, TP filling an
// instance's GPUs. 2 nodes of 8 GPUs, the tiny model, EP 2.
TEST(SearchSpace, InstancesSplitTheClusterIntoWholeNodeCopies) {
  spec::Spec spec = plan::testing::MissionSpec();
  spec.cluster.hosts.resize(2);
  Bounds b;
  b.chunked_prefill_size = {8192};
  b.ep = {2};
  b.dp = {1};
  EXPECT_EQ(InstanceCounts(b, spec), (std::vector<int>{1, 2}));
  EXPECT_THAT(Labels(Enumerate(b, spec, plan::testing::TinyGqaModel(), EngineOn80GiB(spec))),
              ElementsAre("PP1/TP16/EP2 chunk 8192", "PP2/TP8/EP2 chunk 8192",
                          "PP4/TP4/EP2 chunk 8192", "2xPP1/TP8/EP2 chunk 8192",
                          "2xPP2/TP4/EP2 chunk 8192", "2xPP4/TP2/EP2 chunk 8192"));
  // A count that does not divide the GPUs has no TP to give.
  b.instances = {3};
  EXPECT_TRUE(Enumerate(b, spec, plan::testing::TinyGqaModel(), EngineOn80GiB(spec)).empty());
  b.instances = {0};
  EXPECT_EQ(CheckBounds(b).error().message, "--instances: expected values >= 1, got 0");
}

TEST(Search, InstancesThatSplitNodesAreRefusedAndTheRestCarryTheirCount) {
  SearchOptions o;
  o.bounds.instances = {1, 2, 8};
  o.bounds.pp = {1};
  o.bounds.ep = {4};
  o.bounds.dp = {1};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {8};
  o.ensemble.members = 0;
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->candidates, 3);
  // 8 instances of 4 GPUs on 4 hosts would share nodes.
  EXPECT_EQ(r->rejected_by_reason.at("instance_nodes"), 1);
  for (const Evaluated& e : r->evaluated) EXPECT_EQ(e.gpus, 32) << e.candidate.Label();
  const nlohmann::json j = SearchToJson(*r);
  std::vector<int> counts;
  for (const auto& c : j["candidates"]) counts.push_back(c["candidate"]["instances"].get<int>());
  for (const auto& c : j["rejections"]) counts.push_back(c["candidate"]["instances"].get<int>());
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 8}));
}

// The example's cluster and model, a small space around its layouts (one
// instance: the instances dimension has its own test).
SearchOptions Small(int members) {
  SearchOptions o;
  o.bounds.instances = {1};
  o.bounds.pp = {1, 2, 4, 8, 64};
  o.bounds.ep = {4, 8};
  o.bounds.dp = {1};
  o.bounds.chunked_prefill_size = {4096, 8192};
  o.bounds.concurrency = {8, 16};
  o.bounds.disaggregated = "off";  // these spaces are the aggregated layouts'
  o.ensemble.members = members;
  return o;
}

// The estimate counts what Enumerate would list without listing it, and
// the simulator's work as the example's 40 requests of 16,000 tokens.
TEST(SearchSpace, TheEstimateCountsCandidatesPredictionsAndWorkBeforeAnything) {
  SearchOptions o = Small(0);
  const plan::EngineConfig engine = EngineOn80GiB(testkit::Example().spec);
  const SpaceEstimate e =
      EstimateSpace(o.bounds, testkit::Example().spec, testkit::Example().model, engine, 2, 0);
  EXPECT_EQ(e.candidates, 14);
  EXPECT_EQ(
      e.candidates,
      static_cast<double>(
          Enumerate(o.bounds, testkit::Example().spec, testkit::Example().model, engine).size()));
  EXPECT_EQ(e.predictions, 28);
  // 40 requests x (ceil(16000 / 4096) + ceil(16000 / 8192)) steps x 2 load
  // points x the shapes' PP sizes (PP1, PP2, PP4 with EP 4 and 8; PP8 with EP 4).
  EXPECT_EQ(e.work_units, 40.0 * (4 + 2) * 2 * (2 * 1 + 2 * 2 + 2 * 4 + 1 * 8));
  EXPECT_DOUBLE_EQ(e.seconds,
                   (28 * kSecondsPerPrediction + e.work_units * kSecondsPerWorkUnit) / 2);
  // Each draw of an interval re-simulates a kept candidate's best load
  // point, prompts and all: 32 draws over 2 load points add kIntervalShare
  // x 16 of the central work, the chunks' steps included.
  const SpaceEstimate drawn =
      EstimateSpace(o.bounds, testkit::Example().spec, testkit::Example().model, engine, 2, 32);
  EXPECT_EQ(drawn.predictions, e.predictions);
  EXPECT_EQ(drawn.work_units, e.work_units);
  EXPECT_DOUBLE_EQ(drawn.interval_factor, 1 + kIntervalShare * 32 / 2);
  EXPECT_DOUBLE_EQ(drawn.seconds, e.seconds * (1 + kIntervalShare * 16));
  // A request's decode counts its stretches' boundaries, not its tokens: a
  // 1,000-token answer kDecodeUnitsPerRequest units per chunk size, a
  // 5-token one its 4 steps.
  spec::Spec chat = testkit::Example().spec;
  chat.workload.output_tokens = 1000;
  EXPECT_EQ(EstimateSpace(o.bounds, chat, testkit::Example().model, engine, 2, 0).work_units,
            40.0 * (4 + 2 + 2 * kDecodeUnitsPerRequest) * 2 * 22);
  chat.workload.output_tokens = 5;
  EXPECT_EQ(EstimateSpace(o.bounds, chat, testkit::Example().model, engine, 2, 0).work_units,
            40.0 * (4 + 2 + 2 * 4) * 2 * 22);
  // Disaggregated candidates count one prefill pass and one decode per
  // request each (PP 1): the example's 4 hosts give 8 of them with --dp 1.
  chat.workload.output_tokens = 1000;
  o.bounds.disaggregated = "on";
  const SpaceEstimate with_pd =
      EstimateSpace(o.bounds, chat, testkit::Example().model, engine, 2, 0);
  EXPECT_EQ(with_pd.candidates, 14 + 8);
  // Predicted with the spec's engine: its chunk, not the bounds'.
  ASSERT_EQ(engine.chunked_prefill_size, 8192);
  EXPECT_EQ(with_pd.work_units, 40.0 * (4 + 2 + 2 * kDecodeUnitsPerRequest) * 2 * 22 +
                                    8 * 2 * 40.0 * (2 + kDecodeUnitsPerRequest));
  o.bounds.disaggregated = "off";
  // Six dimensions of 64 values each: counted, never listed (2^36 candidates).
  Bounds wide = o.bounds;
  wide.chunked_prefill_size.clear();
  wide.max_running_requests.clear();
  wide.concurrency.clear();
  for (int v = 1; v <= 64; ++v) {
    wide.chunked_prefill_size.push_back(v * 512);
    wide.max_running_requests.push_back(v);
    wide.concurrency.push_back(v);
  }
  const SpaceEstimate huge = EstimateSpace(wide, testkit::Example().spec, testkit::Example().model,
                                           EngineOn80GiB(testkit::Example().spec), 2, 0);
  EXPECT_EQ(huge.candidates, 7.0 * 64 * 64);
  EXPECT_EQ(huge.predictions, 7.0 * 64 * 64 * 64);
}

TEST(Search, ASearchEstimatedPastItsBoundIsRefusedBeforeItStarts) {
  SearchOptions o = Small(0);
  o.bounds.chunked_prefill_size = {1};
  o.max_search_s = 0.1;
  const SpaceEstimate e =
      EstimateSpace(o.bounds, testkit::Example().spec, testkit::Example().model,
                    EngineOn80GiB(testkit::Example().spec), o.threads, o.ensemble.members);
  ASSERT_GT(e.seconds, 0.1);
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            fmt::format("the search would predict 7 candidates at 2 load points (14 "
                        "predictions, x{} with the interval draws), an estimated {} s of "
                        "simulation, past --max-search-s 0.1; narrow it (--pp, --ep, --dp, "
                        "--chunked-prefill-size, --max-running-requests, --concurrency, "
                        "workload.requests, --samples 0 for no intervals) or raise "
                        "--max-search-s (0: no bound)",
                        FormatNumber(e.interval_factor, 2), FormatNumber(e.seconds, 0)));
  // The default bound passes the ordinary search, and reports its progress.
  SearchOptions ordinary = Small(0);
  std::vector<std::pair<std::string, size_t>> seen;
  std::map<std::string, size_t> total_of;
  ordinary.progress = [&](const char* phase, size_t done, size_t of) {
    seen.emplace_back(phase, done);
    total_of[phase] = of;
  };
  const Result<SearchResult> done = Search(testkit::Example(), cost::Calibration{}, ordinary);
  ASSERT_TRUE(done.ok());
  const size_t splits = static_cast<size_t>(done->split_candidates);
  ASSERT_GT(splits, 0u);
  // Each phase counts up to its total: the space, then the candidates
  // predicted again with a layer split.
  EXPECT_EQ(total_of, (std::map<std::string, size_t>{{"predicting", 14},
                                                     {"predicting with layer splits", splits}}));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), (std::pair<std::string, size_t>{"predicting with layer splits", splits}));
  for (size_t i = 1; i < seen.size(); ++i)
    if (seen[i].first == seen[i - 1].first) {
      EXPECT_GT(seen[i].second, seen[i - 1].second);
    }
}

// Bounds that describe no layout on the cluster are an error in them (exit
// 2), not a search in which nothing qualifies.
TEST(Search, BoundsThatDescribeNoLayoutAreAnError) {
  for (const auto& [pp, ep] : std::vector<std::pair<int, int>>{{3, 1}, {1000, 1}, {8, 3}}) {
    SearchOptions o = Small(0);
    o.bounds.pp = {pp};
    o.bounds.ep = {ep};
    const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, o);
    ASSERT_FALSE(r.ok()) << "PP" << pp << " EP" << ep;
    EXPECT_EQ(r.error().message,
              "the bounds describe no candidate on the cluster's 32 GPUs (4 hosts x 8): a layout "
              "is instances of whole nodes x PP x TP using every GPU, with EP and DP dividing TP; "
              "widen --instances, --pp, --ep or --dp");
  }
}

TEST(Search, RefusalsAreCountedByTheirReason) {
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, Small(0));
  ASSERT_TRUE(r.ok()) << r.error().message;
  // PP64 on 32 GPUs cannot be laid out (TP 0 is never enumerated: 32 % 64 != 0).
  // PP 1, 2, 4 x EP 4, 8 and PP 8 (TP 4) x EP 4, each with 2 chunks.
  EXPECT_EQ(r->candidates, 14);
  int counted = 0;
  for (const auto& [reason, n] : r->rejected_by_reason) counted += n;
  EXPECT_EQ(counted, static_cast<int>(r->rejected.size()));
  EXPECT_EQ(static_cast<int>(r->rejected.size() + r->evaluated.size()),
            r->candidates + r->split_candidates);
  for (const Rejection& x : r->rejected) {
    EXPECT_FALSE(x.reason.empty()) << x.message;
    EXPECT_THAT(x.message, HasSubstr(x.candidate.layout.Label()));
  }
  for (const Evaluated& e : r->evaluated) ASSERT_EQ(e.points.size(), 2u);
}

// A decode workload of the example: 64 output tokens per request, ranked by
// output throughput per GPU.
// The inputs with SGLang's context capped at `tokens` (--context-length).
// Uncapped, K3's 1,048,576 tokens give each running request a 4 MiB row of
// the request table (2-3 GiB a server), which leaves the chunk-4096
// pipelines below the headroom rule, and DeepSeek-V3's 163,840 leave its
// decode servers below it; the tests that need several qualifying
// candidates cap it as a user serving short requests would.
inputs::SearchInputs WithContextLength(inputs::SearchInputs in, int64_t tokens) {
  spec::ArgValue v;
  v.kind = spec::ArgValue::Kind::kInt;
  v.int_value = tokens;
  v.text = std::to_string(tokens);
  in.spec.engine.args.push_back({"context-length", v});
  return in;
}

inputs::SearchInputs DecodeExample() {
  inputs::SearchInputs in = testkit::Example();
  in.spec.workload.output_tokens = 64;
  in.spec.decision.objective = decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu);
  return in;
}

void ExpectScreeningGivesTheExhaustiveResult(const inputs::SearchInputs& in) {
  SearchOptions screened = Small(8);
  SearchOptions exhaustive = Small(8);
  exhaustive.screen = false;
  const Result<SearchResult> a = Search(in, cost::Calibration{}, screened);
  const Result<SearchResult> b = Search(in, cost::Calibration{}, exhaustive);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->evaluated.size(), b->evaluated.size());
  EXPECT_EQ(b->with_intervals, b->qualifying);
  EXPECT_LE(a->with_intervals, b->with_intervals);
  EXPECT_EQ(a->could_be_best, b->could_be_best);
  for (size_t i = 0; i < a->evaluated.size(); ++i) {
    EXPECT_EQ(a->evaluated[i].candidate.Label(), b->evaluated[i].candidate.Label());
    EXPECT_DOUBLE_EQ(a->evaluated[i].score, b->evaluated[i].score);
    EXPECT_EQ(a->evaluated[i].could_be_best, b->evaluated[i].could_be_best)
        << a->evaluated[i].candidate.Label();
  }
  EXPECT_GE(a->could_be_best, 1);
  EXPECT_TRUE(a->evaluated.front().could_be_best);
  for (size_t i = 0; i < static_cast<size_t>(a->qualifying); ++i)
    if (a->evaluated[i].score_interval && b->evaluated[i].score_interval) {
      EXPECT_DOUBLE_EQ(a->evaluated[i].score_interval->low, b->evaluated[i].score_interval->low);
      EXPECT_DOUBLE_EQ(a->evaluated[i].score_interval->high, b->evaluated[i].score_interval->high);
    }
}

TEST(Search, ScreeningGivesTheExhaustiveResult) {
  ExpectScreeningGivesTheExhaustiveResult(testkit::Example());
}

TEST(Search, ScreeningGivesTheExhaustiveResultOnADecodeObjective) {
  ExpectScreeningGivesTheExhaustiveResult(DecodeExample());
}

// The intervals are drawn a candidate per thread and judged in rank order
// as they arrive: on one thread or three, the same candidates get the same
// intervals, the screen stops at the same one, and the result is the same
// to the last digit.
TEST(Search, TheScreenedIntervalsAreTheSameOnAnyNumberOfThreads) {
  for (const inputs::SearchInputs& in :
       std::vector<inputs::SearchInputs>{WithContextLength(testkit::Example(), 65536),
                                         WithContextLength(DecodeExample(), 65536)}) {
    SearchOptions one = Small(8);
    one.threads = 1;
    SearchOptions three = Small(8);
    three.threads = 3;
    const Result<SearchResult> a = Search(in, cost::Calibration{}, one);
    const Result<SearchResult> b = Search(in, cost::Calibration{}, three);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_GT(a->with_intervals, 1);
    EXPECT_EQ(a->with_intervals, b->with_intervals);
    EXPECT_EQ(SearchToJson(*a).dump(), SearchToJson(*b).dump());
  }
}

// Output throughput carries its interval into the score, and the front is
// output throughput per GPU against throughput per user, both more is better.
TEST(Search, ADecodeWorkloadRanksByOutputThroughputAndFrontsItAgainstThroughputPerUser) {
  SearchOptions o = Small(8);
  o.bounds.pp = {4, 8};
  o.bounds.ep = {4};
  const Result<SearchResult> r = Search(DecodeExample(), cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->decode);
  ASSERT_GT(r->qualifying, 1);
  ASSERT_GT(r->with_intervals, 0);
  for (int k = 0; k < r->qualifying; ++k) {
    const Evaluated& e = r->evaluated[k];
    if (k > 0) {
      EXPECT_GE(r->evaluated[k - 1].score, e.score);
    }
    for (const PointFigures& f : e.points) {
      ASSERT_GT(f.tpot_p50_s, 0) << e.candidate.Label();
      EXPECT_DOUBLE_EQ(f.output_tps_per_user, 1 / f.tpot_p50_s);
      EXPECT_DOUBLE_EQ(f.output_tps_per_gpu, f.output_tps / e.gpus);
    }
    if (!e.score_interval) continue;
    EXPECT_LE(e.score_interval->low, e.score_interval->high);
    EXPECT_LT(e.score_interval->low, e.score_interval->high) << "an output TPS band was drawn";
    // Drawn at the best load point, the one the score reads.
    const PointFigures& at = *e.at;
    ASSERT_TRUE(at.output_tps_interval && at.tpot_p50_interval) << e.candidate.Label();
    EXPECT_LT(at.output_tps_interval->low, at.output_tps_interval->high);
    for (const PointFigures& f : e.points)
      EXPECT_EQ(f.output_tps_interval.has_value(), f.load == at.load) << f.load.Label();
  }
  ASSERT_FALSE(r->pareto.empty());
  for (const ParetoPoint& p : r->pareto)
    for (int k = 0; k < r->qualifying; ++k)
      for (const PointFigures& f : r->evaluated[k].points)
        EXPECT_FALSE(f.output_tps_per_gpu >= p.output_tps_per_gpu &&
                     f.output_tps_per_user >= p.output_tps_per_user &&
                     (f.output_tps_per_gpu > p.output_tps_per_gpu ||
                      f.output_tps_per_user > p.output_tps_per_user))
            << r->evaluated[k].candidate.Label() << " " << f.load.Label() << " dominates "
            << r->evaluated[p.evaluated].candidate.Label() << " " << p.load.Label();
  const nlohmann::json j = SearchToJson(*r);
  EXPECT_EQ(j["pareto_axes"], nlohmann::json::array({"output_tps_per_gpu", "output_tps_per_user"}));
  EXPECT_TRUE(j["pareto"][0].contains("output_tps_per_user"));
  const nlohmann::json& point = j["candidates"][0]["at"];
  EXPECT_GT(point["tpot_p50_ms"].get<double>(), 0);
  EXPECT_LT(point["output_tps_low"].get<double>(), point["output_tps_high"].get<double>());
  const std::string text = RenderSearchText(*r, 3);
  EXPECT_THAT(text, HasSubstr("Pareto front (output TPS per GPU against throughput per user"));
  EXPECT_THAT(text, HasSubstr("output TPS/GPU"));
  EXPECT_THAT(text, HasSubstr("TPOT p50"));
}

TEST(Search, RankingFollowsTheObjectiveAndTheFrontIsNonDominated) {
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, Small(0));
  ASSERT_TRUE(r.ok());
  ASSERT_GT(r->qualifying, 1);
  for (int k = 1; k < r->qualifying; ++k)
    EXPECT_GE(r->evaluated[k - 1].score, r->evaluated[k].score);
  ASSERT_FALSE(r->pareto.empty());
  for (const ParetoPoint& p : r->pareto)
    for (int k = 0; k < r->qualifying; ++k)
      for (const PointFigures& f : r->evaluated[k].points)
        EXPECT_FALSE(f.input_tps_per_gpu > p.input_tps_per_gpu && f.ttft_p50_s < p.ttft_p50_s)
            << r->evaluated[k].candidate.Label() << " " << f.load.Label() << " beats "
            << r->evaluated[p.evaluated].candidate.Label() << " " << p.load.Label();
  const nlohmann::json j = SearchToJson(*r);
  EXPECT_EQ(j["candidates"].size(), r->evaluated.size());
  EXPECT_EQ(j["pareto"].size(), r->pareto.size());
  EXPECT_TRUE(j["rejected"].is_object());
  EXPECT_THAT(RenderSearchText(*r, 3), HasSubstr("Pareto front"));
}

// Steady state, said out loud: the example's 40 requests are 5 waves at
// C = 8 and 2.5 at C = 16, short of the 4 waves the rule asks for.
TEST(Search, ALoadPointShortOfItsSteadyStateIsSaid) {
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, Small(0));
  ASSERT_TRUE(r.ok());
  ASSERT_GT(r->qualifying, 0);
  const Evaluated& e = r->evaluated.front();
  EXPECT_EQ(e.points[0].not_steady, "");
  EXPECT_EQ(e.points[1].not_steady, "40 requests are 2.5 waves of 16, fewer than 4");
  EXPECT_THAT(RenderSearchText(*r, 3),
              HasSubstr("waves (requests / requests in flight): the first wave's start and the "
                        "last one's drain are then at most half of it; short of it at C=16: 40 "
                        "requests are 2.5 waves of 16, fewer than 4"));
  const nlohmann::json j = SearchToJson(*r);
  EXPECT_EQ(j["candidates"][0]["points"][0]["steady_state"], true);
  EXPECT_EQ(j["candidates"][0]["points"][1]["steady_state"], false);
  // 80 requests: 5 waves at C = 16, steady everywhere, and nothing said.
  inputs::SearchInputs in = testkit::Example();
  in.spec.workload.requests = 80;
  const Result<SearchResult> more = Search(in, cost::Calibration{}, Small(0));
  ASSERT_TRUE(more.ok());
  EXPECT_THAT(RenderSearchText(*more, 3), ::testing::Not(HasSubstr("steady state")));
}

// Request rates as load points: each candidate predicted at each rate in an
// open loop under the cap, the points labelled and carried into the JSON.
TEST(Search, RequestRatesAreOpenLoopLoadPointsUnderTheCap) {
  SearchOptions o = Small(0);
  o.bounds.pp = {4, 8};
  o.bounds.ep = {4};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {32};
  o.bounds.request_rate = {0.05, 0.4};
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->load_points.size(), 2u);
  EXPECT_EQ(r->load_points[0].Label(), "0.05 req/s, C<=32");
  ASSERT_EQ(r->evaluated.size(), 2u);
  for (const Evaluated& e : r->evaluated) {
    ASSERT_EQ(e.points.size(), 2u) << e.candidate.Label();
    EXPECT_EQ(e.points[0].load, r->load_points[0]);
    EXPECT_EQ(e.points[1].load, r->load_points[1]);
    // An open loop's throughput follows the arrivals while the layout keeps
    // up: eight times the rate, more input tokens per second.
    EXPECT_GT(e.points[1].input_tps, 2 * e.points[0].input_tps) << e.candidate.Label();
  }
  // The same candidates at a closed loop of the cap give other figures: the
  // rate, not the concurrency, set the load.
  SearchOptions closed = o;
  closed.bounds.request_rate.clear();
  const Result<SearchResult> c = Search(testkit::Example(), cost::Calibration{}, closed);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->evaluated.front().points.front().input_tps,
            r->evaluated.front().points.front().input_tps);
  const nlohmann::json j = SearchToJson(*r);
  EXPECT_EQ(j["load_points"][1]["request_rate"], 0.4);
  EXPECT_EQ(j["load_points"][1]["concurrency"], 32);
  EXPECT_EQ(j["candidates"][0]["points"][1]["request_rate"], 0.4);
  EXPECT_THAT(RenderSearchText(*r, 3),
              HasSubstr("2 load points (Poisson arrivals at 0.05, 0.40 requests/s, at most 32 in "
                        "flight)"));

  // 2 requests/s of 16,000-token prompts is several times what either
  // serves: they fall behind there, and their best load is the highest rate
  // below it they keep up with, bisected. (200 requests: the spread of 40
  // Poisson sends, 3 / sqrt(40) = 47%, leaves the rule nothing to tell.)
  SearchOptions beyond = o;
  beyond.bounds.request_rate = {0.05, 0.4, 2};
  testkit::ExampleInputs many = testkit::Example();
  many.spec.workload.requests = 200;
  const Result<SearchResult> b = Search(many, cost::Calibration{}, beyond);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_GT(b->probes, 0);
  for (const Evaluated& e : b->evaluated) {
    ASSERT_EQ(e.points.size(), 3u);
    EXPECT_FALSE(KeepsUpAt(e.points[2])) << e.candidate.Label();
    EXPECT_FALSE(e.points[2].meets_sla) << e.candidate.Label();
    ASSERT_TRUE(e.at) << e.candidate.Label();
    EXPECT_TRUE(KeepsUpAt(*e.at)) << e.candidate.Label();
    EXPECT_GE(e.at->load.request_rate, 0.4) << e.candidate.Label();
    EXPECT_LT(e.at->load.request_rate, 2) << e.candidate.Label();
  }
  EXPECT_THAT(RenderSearchText(*b, 3), HasSubstr("each candidate at the highest offered rate it "
                                                 "keeps up with"));

  o.bounds.concurrency = {8, 16};
  EXPECT_EQ(Search(testkit::Example(), cost::Calibration{}, o).error().message,
            "--concurrency: with request rates it is the one cap on requests in flight; got 2 "
            "values");
  o.bounds.concurrency.clear();
  o.bounds.request_rate = {0};
  EXPECT_EQ(Search(testkit::Example(), cost::Calibration{}, o).error().message,
            "--request-rate: expected requests/s >= 0.001, got 0");
  // 1e-308 req/s once predicted an exposed communication share of 2e12%.
  o.bounds.request_rate = {1e-308};
  EXPECT_EQ(Search(testkit::Example(), cost::Calibration{}, o).error().message,
            "--request-rate: expected requests/s >= 0.001, got 1e-308");
}

// DP attention is a dimension of the default space: predicted where the
// simulator models it (PP 1), refused as not modelled with pipeline stages.
TEST(Search, DpAttentionCandidatesArePredictedAtPp1AndRefusedWithPipelineStages) {
  SearchOptions o = Small(0);
  o.bounds.pp = {1, 8};
  o.bounds.ep = {4};
  o.bounds.dp.clear();
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {8};
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // TP4: DP 2 and 4, each refused (a planner check first, else not modelled).
  int pp8_dp = 0, not_modelled = 0;
  for (const Rejection& x : r->rejected)
    if (x.candidate.layout.pp == 8 && x.candidate.layout.dp > 1) {
      ++pp8_dp;
      not_modelled += x.reason == "not_modelled" ? 1 : 0;
    }
  EXPECT_EQ(pp8_dp, 2);
  EXPECT_GE(not_modelled, 1);
  for (const Evaluated& e : r->evaluated)
    EXPECT_FALSE(e.candidate.layout.pp > 1 && e.candidate.layout.dp > 1) << e.candidate.Label();
  bool predicted_dp = false;
  for (const Rejection& x : r->rejected)
    EXPECT_FALSE(x.candidate.layout.pp == 1 && x.reason == "not_modelled") << x.message;
  for (const Evaluated& e : r->evaluated) predicted_dp |= e.candidate.layout.dp > 1;
  int pp1_dp_refused_for_memory = 0;
  for (const Rejection& x : r->rejected)
    pp1_dp_refused_for_memory += x.candidate.layout.pp == 1 && x.candidate.layout.dp > 1;
  // Each PP1 DP candidate is either predicted or refused by a planner check
  // (K3's attention weights on every DP rank may not fit).
  EXPECT_TRUE(predicted_dp || pp1_dp_refused_for_memory > 0);
}

// The predicted TTFT p99 of a candidate at its lightest load point.
double LightestTtftP99(const Evaluated& e) {
  return e.points.front().sla[decide::SlaMetric::kTtft].value_or(0);
}

// A limit qualifies the candidates that meet it at some load point (their
// lightest), each ranked at a load that meets it; the others are counted by
// the limit they miss.
TEST(Search, AnSlaFiltersOnThePredictedFiguresAndCountsByKey) {
  const Result<SearchResult> free = Search(testkit::Example(), cost::Calibration{}, Small(0));
  ASSERT_TRUE(free.ok());
  std::vector<double> lightest;
  for (int k = 0; k < free->qualifying; ++k)
    lightest.push_back(LightestTtftP99(free->evaluated[k]));
  std::sort(lightest.begin(), lightest.end());
  ASSERT_GT(lightest.size(), 2u);
  const double limit = (lightest[lightest.size() / 2 - 1] + lightest[lightest.size() / 2]) / 2;
  int over = 0;
  for (double w : lightest) over += w > limit ? 1 : 0;
  ASSERT_GT(over, 0);

  inputs::SearchInputs in = testkit::Example();
  in.spec.decision.sla[decide::SlaMetric::kTtft] = limit;
  const Result<SearchResult> r = Search(in, cost::Calibration{}, Small(0));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->qualifying, free->qualifying - over);
  EXPECT_EQ(r->sla_failed_by_key.at("ttft_p99_s"), over);
  EXPECT_TRUE(r->sla_unchecked.empty());
  for (int k = 0; k < r->qualifying; ++k) {
    const Evaluated& e = r->evaluated[k];
    EXPECT_TRUE(e.meets_sla);
    ASSERT_TRUE(e.at);
    EXPECT_LE(*e.at->sla[decide::SlaMetric::kTtft], limit);
    ASSERT_TRUE(e.binds_next);
    EXPECT_EQ(e.binds_next->metric, decide::SlaMetric::kTtft);
  }
  int missed = 0;  // of those within the headroom, as the summary counts them
  for (const Evaluated& e : r->evaluated)
    if (e.meets_headroom && !e.meets_sla) {
      ++missed;
      EXPECT_THAT(e.sla_miss, HasSubstr("C=8: TTFT p99"));
      EXPECT_GT(LightestTtftP99(e), limit);
      EXPECT_FALSE(e.at);
    }
  EXPECT_EQ(missed, over);
  EXPECT_THAT(
      RenderSearchText(*r, 3),
      HasSubstr(fmt::format("miss it at every load point (first missed: ttft_p99_s {})", over)));
  const nlohmann::json j = SearchToJson(*r);
  EXPECT_EQ(j["sla_failed"]["ttft_p99_s"], over);
  EXPECT_EQ(j["candidates"][0]["binds_next"]["limit"], "ttft_p99_s");
  EXPECT_LE(j["candidates"][0]["at"]["sla_figures"]["ttft_p99_s"].get<double>(), limit);
}

// The bisection on a real prediction: one candidate predicted at every
// concurrency from 4 to 16 gives a TTFT p99 limit that holds up to a known
// C and is missed above it; listed at 4 and 16 only, the search finds that C.
TEST(Search, BisectionFindsTheKnownBreakOfAPredictedCandidate) {
  SearchOptions o = Small(0);
  o.bounds.pp = {8};
  o.bounds.ep = {4};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency.clear();
  for (int c = 4; c <= 16; ++c) o.bounds.concurrency.push_back(c);
  const Result<SearchResult> every = Search(testkit::Example(), cost::Calibration{}, o);
  ASSERT_TRUE(every.ok());
  ASSERT_EQ(every->evaluated.size(), 1u);
  std::vector<double> p99;
  for (const PointFigures& f : every->evaluated[0].points)
    p99.push_back(*f.sla[decide::SlaMetric::kTtft]);
  // The break: the C whose figures up to it all stay below every figure above it.
  int known = 0;
  double limit = 0;
  for (size_t k = 1; k + 2 < p99.size() && known == 0; ++k) {
    const double below = *std::max_element(p99.begin(), p99.begin() + static_cast<long>(k) + 1);
    const double above = *std::min_element(p99.begin() + static_cast<long>(k) + 1, p99.end());
    if (below < above) {
      known = 4 + static_cast<int>(k);
      limit = (below + above) / 2;
    }
  }
  ASSERT_GT(known, 4) << "TTFT p99 does not rise with the load";

  inputs::SearchInputs in = testkit::Example();
  in.spec.decision.sla[decide::SlaMetric::kTtft] = limit;
  o.bounds.concurrency = {4, 16};
  const Result<SearchResult> r = Search(in, cost::Calibration{}, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->qualifying, 1);
  const Evaluated& e = r->evaluated.front();
  ASSERT_TRUE(e.at);
  EXPECT_EQ(e.at->load.concurrency, known);
  EXPECT_TRUE(e.at->probed);
  EXPECT_EQ(r->probes, static_cast<int>(e.probed.size()));
  EXPECT_LE(e.probed.size(), 4u);  // 12 concurrencies between: at most 4 halvings
  EXPECT_DOUBLE_EQ(e.at->input_tps, every->evaluated[0].points[known - 4].input_tps);
  EXPECT_EQ(e.binds_next->missed_at->concurrency, known + 1);
  const std::string text = RenderSearchText(*r, 3);
  EXPECT_THAT(text, HasSubstr(fmt::format("missed at C={}", known + 1)));
  EXPECT_THAT(text, HasSubstr(fmt::format("({} more predictions)", r->probes)));
  // A run spec of it measures the load the search judged it at, and not
  // C=16, where it misses the limit (a run would exclude it for that).
  EXPECT_EQ(WorthMeasuring(*r, "spec.toml", 40).sweep.concurrency, (std::vector<int>{4, known}));
}

// The example's requests generate one token: the simulator predicts no
// TPOT, so a TPOT limit is left to the measurement, and said so.
TEST(Search, AnSlaWithoutAPredictedFigureIsCheckedOnlyOnMeasurement) {
  inputs::SearchInputs in = testkit::Example();
  in.spec.decision.sla[decide::SlaMetric::kTpot] = 0.001;
  const Result<SearchResult> r = Search(in, cost::Calibration{}, Small(0));
  const Result<SearchResult> free = Search(testkit::Example(), cost::Calibration{}, Small(0));
  ASSERT_TRUE(r.ok() && free.ok());
  EXPECT_EQ(r->qualifying, free->qualifying);
  EXPECT_EQ(r->sla_unchecked, std::vector<std::string>{"tpot_p99_ms"});
  EXPECT_THAT(RenderSearchText(*r, 3),
              HasSubstr("not checked here: tpot_p99_ms (no predicted figure); checked only on "
                        "measurement"));
}

// Kimi K3 at PP1/TP32/DP2 with chunk 8192: SGLang's reserve for the chunk
// leaves a KV pool of about 11,000 tokens per DP rank, shorter than one
// 16,000-token prompt, so SGLang aborts every request. The planner refuses
// it (kv_room); it is never predicted at zero and ranked, with or without an
// SLA no one meets.
TEST(Search, APoolShorterThanOnePromptIsRefusedNeverRankedAtZero) {
  SearchOptions o = Small(0);
  o.bounds.pp = {1};
  o.bounds.ep = {4};
  o.bounds.dp = {1, 2};
  o.bounds.chunked_prefill_size = {8192};
  for (double ttft_limit : {0.0, 0.001}) {
    inputs::SearchInputs in = testkit::Example();
    if (ttft_limit > 0) in.spec.decision.sla[decide::SlaMetric::kTtft] = ttft_limit;
    const Result<SearchResult> r = Search(in, cost::Calibration{}, o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->rejected.size(), 1u);
    EXPECT_EQ(r->rejected[0].candidate.Label(), "PP1/TP32/EP4/DP2 chunk 8192");
    EXPECT_EQ(r->rejected[0].reason, "kv_room");
    EXPECT_THAT(r->rejected[0].message,
                HasSubstr("per DP rank, too few for one prompt of 16,000 tokens: SGLang aborts "
                          "every request whose input exceeds the pool - 1"));
    for (const Evaluated& e : r->evaluated) {
      EXPECT_EQ(e.candidate.layout.dp, 1);
      for (const PointFigures& f : e.points) EXPECT_GT(f.requests_completed, 0);
    }
    EXPECT_EQ(r->qualifying, ttft_limit > 0 ? 0 : 1);
  }
}

// A prediction in which no request completes is refused as no_prediction,
// counted with the other refusals: a pool the planner passes (18,000 tokens
// for 16,000-token prompts) that the simulator fills before any request's
// 4,096 answer tokens fit.
TEST(Search, APredictionWithoutACompletedRequestIsRefusedAsNoPrediction) {
  inputs::SearchInputs in = testkit::Example();
  plan::testing::SetArg(in.spec, "max-total-tokens", plan::testing::IntArg(18000, {}));
  in.spec.workload.output_tokens = 4096;
  SearchOptions o = Small(0);
  o.bounds.pp = {4};
  o.bounds.ep = {4};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {1, 2};
  const Result<SearchResult> r = Search(in, cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->evaluated.empty());
  EXPECT_EQ(r->rejected_by_reason.at("no_prediction"), 1);
  ASSERT_EQ(r->rejected.size(), 1u);
  EXPECT_EQ(r->rejected[0].message,
            "PP4/TP8/EP4 chunk 8192: no simulated request completed at C=1 (of 40 sent)");
  EXPECT_THAT(RenderSearchText(*r, 3),
              HasSubstr("no candidate could be predicted: all 1 were refused"));
  EXPECT_EQ(SearchToJson(*r)["rejected"]["no_prediction"], 1);
}

// A point is no result when a figure an SLA limit or the objective needs is
// missing; TPOT only where the workload's answers have a second token.
TEST(Search, APointWithoutAFigureTheLimitsOrObjectiveNeedIsNoResult) {
  PointFigures f;
  f.load.concurrency = 8;
  f.requests = f.requests_completed = 16;
  f.input_tps = f.output_tps = 100;
  f.sla[decide::SlaMetric::kTtft] = 1;
  decide::SlaLimits limits;
  limits[decide::SlaMetric::kTpot] = 0.05;
  EXPECT_EQ(NoPredictionReason(f, limits, decide::Objective(), /*decode=*/false), "");
  EXPECT_EQ(NoPredictionReason(f, limits, decide::Objective(), /*decode=*/true),
            "no predicted TPOT p99 at C=8 for tpot_p99_ms");
  EXPECT_EQ(NoPredictionReason(f, {}, decide::Objective(decide::Objective::Kind::kOutputTpsPerGpu),
                               false),
            "no predicted output TPS per GPU at C=8");
  EXPECT_EQ(NoPredictionReason(f, {}, decide::Objective(decide::Objective::Kind::kGoodput), false),
            "");  // none may meet the limits
  f.requests_completed = 0;
  EXPECT_EQ(NoPredictionReason(f, {}, decide::Objective(), false),
            "no simulated request completed at C=8 (of 16 sent)");
}

// The all-to-all backend as a dimension: each backend's candidates carry it
// in their knobs; DeepEP forces EP = TP, so its other EP sizes are refused by
// the planner (a2a_backend) and its PP > 1 layouts are not modelled.
TEST(Search, MoeA2aBackendsAreADimensionAndDeepEpKeepsOnlyEpEqualToTp) {
  Bounds b;
  b.moe_a2a_backend = {"none", "deepep"};
  EXPECT_TRUE(CheckBounds(b).ok());
  b.moe_a2a_backend = {"none", "nccl"};
  EXPECT_THAT(CheckBounds(b).error().message,
              HasSubstr("--moe-a2a-backend: \"nccl\" is not an SGLang backend (none, deepep"));

  // DeepSeek-V3 on the example's four nodes of H200s (SGLang runs DeepEP
  // only where there is NVLink), its dense MLPs whole (moe-dense-tp-size 1):
  // at TP32 its block-FP8 shared experts load only whole, as DeepEP builds
  // them.
  spec::Spec spec = testkit::Example().spec;
  spec.cluster.hardware = "h200";
  spec.engine.model_config =
      std::string(PPSEARCH_SOURCE_DIR) + "/data/models/deepseek-v3/config.json";
  plan::testing::SetArg(spec, "moe-dense-tp-size", plan::testing::IntArg(1, {}));
  const Result<inputs::SearchInputs> deepseek = inputs::LoadSearchInputs(spec);
  ASSERT_TRUE(deepseek.ok()) << deepseek.error().message;
  SearchOptions o = Small(0);
  o.bounds.pp = {1, 2};
  o.bounds.ep = {4, 16, 32};
  o.bounds.dp = {1};
  o.bounds.instances = {1};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {8};
  o.bounds.moe_a2a_backend = {"none", "deepep"};
  const Result<SearchResult> r = Search(*deepseek, cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Per backend: PP1 (TP32) x EP 4, 16, 32 and PP2 (TP16) x EP 4, 16.
  EXPECT_EQ(r->candidates, 2 * (3 + 2));
  std::vector<std::string> deepep_predicted;
  for (const Evaluated& e : r->evaluated)
    if (e.candidate.knobs.moe_a2a_backend == "deepep")
      deepep_predicted.push_back(e.candidate.Label());
  EXPECT_THAT(deepep_predicted, ElementsAre("PP1/TP32/EP32 chunk 8192, a2a deepep"));
  std::map<std::string, std::string> refused;  // deepep candidate -> reason
  for (const Rejection& x : r->rejected)
    if (x.candidate.knobs.moe_a2a_backend == "deepep")
      refused[x.candidate.layout.Label()] = x.reason;
  EXPECT_EQ(refused["PP1/TP32/EP4"], "a2a_backend");
  EXPECT_EQ(refused["PP2/TP16/EP4"], "a2a_backend");
  EXPECT_EQ(refused["PP1/TP32/EP16"], "a2a_backend");
  EXPECT_EQ(refused["PP2/TP16/EP16"], "not_modelled");
  const nlohmann::json j = SearchToJson(*r);
  bool in_json = false;
  for (const auto& c : j["candidates"])
    in_json |=
        c["candidate"]["moe_a2a_backend"] == "deepep" && c["alltoall_per_forward"].get<int>() > 0;
  EXPECT_TRUE(in_json);
}

// The candidates that could be the best say how much of their input TPS at
// their best load point the rtx-6000d's tensor burst gives: none without a
// TP collective before a phase (TP1), some with one; a profile without a
// burst gives no share and no line.
// No calibration widens every candidate's absolute interval alike: the
// score, a ratio to the best, is compared without that term, so which
// candidates could be the best does not move with it.
TEST(Search, TheScoreLeavesOutTheModelFormTermEveryCandidateShares) {
  SearchOptions o = Small(8);
  o.model_form = cost::ModelFormScales{};
  o.model_form->s0 = 0.02;
  const inputs::SearchInputs in = WithContextLength(testkit::Example(), 65536);
  const Result<SearchResult> narrow = Search(in, cost::Calibration{}, o);
  o.model_form->uncalibrated = 0.5;
  const Result<SearchResult> uncalibrated = Search(in, cost::Calibration{}, o);
  ASSERT_TRUE(narrow.ok() && uncalibrated.ok());
  ASSERT_EQ(narrow->evaluated.size(), uncalibrated->evaluated.size());
  EXPECT_EQ(narrow->could_be_best, uncalibrated->could_be_best);
  int compared = 0;
  for (size_t i = 0; i < narrow->evaluated.size(); ++i) {
    const Evaluated& a = narrow->evaluated[i];
    const Evaluated& b = uncalibrated->evaluated[i];
    ASSERT_EQ(a.candidate.Label(), b.candidate.Label());
    if (!a.score_interval || !b.score_interval || !a.at || !b.at) continue;
    ++compared;
    EXPECT_DOUBLE_EQ(a.score_interval->low, b.score_interval->low) << a.candidate.Label();
    EXPECT_DOUBLE_EQ(a.score_interval->high, b.score_interval->high) << a.candidate.Label();
    // The absolute interval carries it: exp(+-1.28 x 0.5) is a factor of 1.9.
    ASSERT_TRUE(a.at->input_tps_interval && b.at->input_tps_interval);
    EXPECT_GT(b.at->input_tps_interval->high / b.at->input_tps,
              1.8 * (a.at->input_tps_interval->high / a.at->input_tps - 1) + 1);
    EXPECT_GT(b.at->input_tps_interval->high, 1.8 * b.at->input_tps);
  }
  EXPECT_GT(compared, 1);
}

TEST(Search, TheCandidatesThatCouldBeBestSayWhatTheTensorBurstGivesThem) {
  SearchOptions o = Small(16);
  o.bounds.pp = {8, 32};
  o.bounds.ep = {1};
  o.bounds.chunked_prefill_size = {8192};
  const Result<SearchResult> r = Search(testkit::Example(), cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(r->tensor_burst, HasSubstr("rtx-6000d: 241 TFLOPS"));
  int shares = 0;
  for (const Evaluated& e : r->evaluated) {
    EXPECT_EQ(e.tensor_burst_share.has_value(), e.could_be_best) << e.candidate.Label();
    if (!e.tensor_burst_share) continue;
    ++shares;
    if (e.candidate.layout.tp == 1) {
      EXPECT_EQ(*e.tensor_burst_share, 0) << "no collective, no idle tensor cores to refill";
    } else {
      EXPECT_GT(*e.tensor_burst_share, 0) << e.candidate.Label();
      EXPECT_LT(*e.tensor_burst_share, 0.5) << e.candidate.Label();
    }
  }
  EXPECT_GT(shares, 0);
  EXPECT_THAT(RenderSearchText(*r, 10), HasSubstr("the tensor burst (rtx-6000d"));
  EXPECT_THAT(RenderSearchText(*r, 10), HasSubstr("of their input TPS at their best load points"));

  // Poisson arrivals: the input TPS is the arrival rate's, burst or not, so
  // the share is of TTFT p50, what the burst takes off the first token.
  SearchOptions open = o;
  open.bounds.request_rate = {0.1};
  open.bounds.concurrency = {16};
  const Result<SearchResult> poisson = Search(testkit::Example(), cost::Calibration{}, open);
  ASSERT_TRUE(poisson.ok()) << poisson.error().message;
  const nlohmann::json j = SearchToJson(*poisson);
  int ttft_shares = 0;
  for (const auto& c : j["candidates"]) {
    if (c["tensor_burst_share"].is_null()) continue;
    EXPECT_EQ(c["tensor_burst_share_of"], "ttft_p50_s");
    if (c["candidate"]["tp"] == 1) continue;
    ++ttft_shares;
    EXPECT_GT(c["tensor_burst_share"].get<double>(), 0.01) << c["candidate"]["label"];
  }
  EXPECT_GT(ttft_shares, 0);
  EXPECT_THAT(RenderSearchText(*poisson, 10), HasSubstr("off their TTFT p50 at their best load"));

  testkit::ExampleInputs sustained = testkit::Example();
  sustained.hardware.burst_window_ms = 0;
  const Result<SearchResult> none = Search(sustained, cost::Calibration{}, o);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->tensor_burst, "");
  for (const Evaluated& e : none->evaluated) EXPECT_FALSE(e.tensor_burst_share);
  EXPECT_THAT(RenderSearchText(*none, 10), Not(HasSubstr("tensor burst")));
}

// A PP > 1 candidate the headroom rule leaves out is searched again with
// the layer split that would keep it, as a candidate of its own: predicted
// as a search with that split in the spec predicts it, ranked, named under
// the ranking, and measured with its split in the run spec.
TEST(Search, ALayoutTheHeadroomRuleLeavesOutIsSearchedAgainWithTheLayerSplitThatKeepsIt) {
  SearchOptions o = Small(0);
  o.bounds.pp = {8};
  o.bounds.ep = {4};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {8};
  testkit::ExampleInputs in = testkit::Example();
  in.spec.decision.min_headroom_mib = 5500;  // PP8/TP4/EP4's even split keeps about 4,700
  const Result<SearchResult> r = Search(in, cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->candidates, 1);
  EXPECT_EQ(r->split_candidates, 1);
  ASSERT_EQ(r->evaluated.size(), 2u);
  ASSERT_EQ(r->qualifying, 1);
  const Evaluated& split = r->evaluated[0];
  const Evaluated& even = r->evaluated[1];
  EXPECT_TRUE(even.candidate.layer_split.empty());
  EXPECT_FALSE(even.meets_headroom);
  ASSERT_EQ(split.candidate.layer_split.size(), 8u);
  EXPECT_EQ(split.candidate.layout, even.candidate.layout);
  EXPECT_EQ(even.lifting_partition, split.candidate.layer_split);
  EXPECT_TRUE(split.meets_headroom);
  EXPECT_GE(split.headroom_mib, 5500);
  EXPECT_DOUBLE_EQ(even.lifted_headroom_mib, split.headroom_mib);
  EXPECT_EQ(split.candidate.Label(), "PP8/TP4/EP4 chunk 8192 split " +
                                         spec::PpLayerPartitionText(split.candidate.layer_split));
  const std::string text = RenderSearchText(*r, 10);
  EXPECT_THAT(text, HasSubstr("predicted: 1 candidate and 1 again with a layer split"));
  EXPECT_THAT(text,
              HasSubstr(fmt::format("PP8/TP4/EP4 chunk 8192: {} MiB; with 8 = [{}]: {} MiB, rank 1",
                                    FormatThousands(std::llround(even.headroom_mib)),
                                    fmt::join(split.candidate.layer_split, ", "),
                                    FormatThousands(std::llround(split.headroom_mib)))));
  const nlohmann::json j = SearchToJson(*r);
  EXPECT_EQ(j["candidates"][0]["candidate"]["pp_layer_partition"],
            nlohmann::json(split.candidate.layer_split));
  EXPECT_EQ(j["candidates"][1]["layer_split"]["candidate"], split.candidate.Label());

  // The same as a search with the split written into the spec predicts.
  testkit::ExampleInputs written = in;
  written.spec.engine.pp_layer_partitions[8] = split.candidate.layer_split;
  const Result<SearchResult> again = Search(written, cost::Calibration{}, o);
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_EQ(again->evaluated.size(), 1u);
  EXPECT_EQ(again->split_candidates, 0);
  EXPECT_DOUBLE_EQ(again->evaluated[0].headroom_mib, split.headroom_mib);
  EXPECT_DOUBLE_EQ(again->evaluated[0].points[0].input_tps, split.points[0].input_tps);
  EXPECT_THAT(RenderSearchText(*again, 10), Not(HasSubstr("left out by the headroom rule")));

  // Its run spec sets the split for PP8.
  const Measurement m = WorthMeasuring(*r, "spec.toml", 40);
  ASSERT_EQ(m.measured.size(), 1u);
  EXPECT_EQ(m.sweep.pp_layer_partitions,
            (std::map<int, std::vector<int>>{{8, split.candidate.layer_split}}));
  EXPECT_THAT(
      m.header,
      HasSubstr("8 = [" + fmt::format("{}", fmt::join(split.candidate.layer_split, ", ")) + "]"));
}

// A run excludes a layout that misses an SLA limit at any level, where the
// search judged each at its best load: the levels at which the search
// predicts a measured candidate misses one are left out of the run spec.
TEST(WorthMeasuring, LeavesOutTheLevelsWhereAMeasuredCandidateMissesTheSla) {
  SearchResult r;
  r.sla[decide::SlaMetric::kTtft] = 2.0;
  r.load_points = {LoadPoint{16, 0}, LoadPoint{64, 0}, LoadPoint{256, 0}};
  auto add = [&](int pp, const std::vector<bool>& meets) {
    Evaluated e;
    e.candidate.layout.pp = pp;
    e.candidate.layout.tp = 32 / pp;
    e.could_be_best = true;
    e.score = 1;
    for (size_t k = 0; k < meets.size(); ++k) {
      PointFigures f;
      f.load = r.load_points[k];
      f.meets_sla = meets[k];
      e.points.push_back(f);
      if (meets[k]) e.at = f;
    }
    r.evaluated.push_back(e);
    r.qualifying = static_cast<int>(r.evaluated.size());
  };
  add(4, {true, true, false});
  add(8, {true, true, true});
  const Measurement m = WorthMeasuring(r, "spec.toml", 40);
  EXPECT_EQ(m.sweep.concurrency, (std::vector<int>{16, 64}));
  EXPECT_THAT(m.header, HasSubstr("# Left out of the sweep: C=256, where the search predicts a "
                                  "miss of the SLA\n# (PP4/TP8/EP1 at C=256);"));

  // Without an SLA every level stays.
  SearchResult free = r;
  free.sla = {};
  EXPECT_EQ(WorthMeasuring(free, "spec.toml", 40).sweep.concurrency,
            (std::vector<int>{16, 64, 256}));

  // With no level every candidate meets, the levels stay and the header says so.
  add(2, {false, false, true});
  const Measurement none = WorthMeasuring(r, "spec.toml", 40);
  EXPECT_EQ(none.sweep.concurrency, (std::vector<int>{16, 64, 256}));
  EXPECT_THAT(none.header, HasSubstr("# No level is predicted to meet the SLA for every layout"));
}

// A level the search never predicted a candidate at is not a miss of it
// because a listed load above the level misses: DP8 meets the SLA up to its
// bisected best, C=164, so C=148 (DP1's best) stays; C=164 is left out for
// DP1, whose nearest prediction below it, C=160, misses; the header cites
// that prediction.
TEST(WorthMeasuring, LeavesOutOnlyLevelsWithAPredictedMiss) {
  SearchResult r;
  r.sla[decide::SlaMetric::kTtft] = 2.0;
  r.load_points = {LoadPoint{16, 0}, LoadPoint{64, 0}, LoadPoint{256, 0}};
  auto add = [&](int dp, const std::vector<std::pair<int, bool>>& probes, int best) {
    Evaluated e;
    e.candidate.layout.instances = 4;
    e.candidate.layout.tp = 8;
    e.candidate.layout.ep = 8;
    e.candidate.layout.dp = dp;
    e.could_be_best = true;
    e.score = 1;
    for (const LoadPoint& l : r.load_points) {
      PointFigures f;
      f.load = l;
      f.meets_sla = l.concurrency < 256;
      e.points.push_back(f);
    }
    for (const auto& [c, meets] : probes) {
      PointFigures f;
      f.load = LoadPoint{c, 0};
      f.probed = true;
      f.meets_sla = meets;
      e.probed.push_back(f);
      if (c == best) e.at = f;
    }
    r.evaluated.push_back(e);
    r.qualifying = static_cast<int>(r.evaluated.size());
  };
  add(1, {{160, false}, {112, true}, {136, true}, {148, true}, {154, false}, {149, false}}, 148);
  add(8,
      {{160, true},
       {208, false},
       {184, false},
       {172, false},
       {166, false},
       {163, true},
       {164, true},
       {165, false}},
      164);
  const Measurement m = WorthMeasuring(r, "spec.toml", 40);
  EXPECT_EQ(m.sweep.concurrency, (std::vector<int>{16, 64, 148}));
  EXPECT_THAT(m.header,
              HasSubstr("# Left out of the sweep: C=164, C=256, where the search predicts a miss "
                        "of the SLA\n# (4xPP1/TP8/EP8 at C=164, as it misses at C=160; "
                        "4xPP1/TP8/EP8 at C=256; 4xPP1/TP8/EP8/DP8 at C=256);"));
  EXPECT_THAT(m.header, Not(HasSubstr("DP8 at C=148")));
}

// A spec holds one layer split per pipeline size: the best ranked candidate
// of a size sets it, and one of that size with another split is named for a
// spec of its own, as one with other knobs is.
TEST(WorthMeasuring, OneLayerSplitPerPipelineSize) {
  SearchResult r;
  auto add = [&](int pp, int ep, std::vector<int> split, int64_t chunk = 0) {
    Evaluated e;
    e.candidate.layout.pp = pp;
    e.candidate.layout.tp = 32 / pp;
    e.candidate.layout.ep = ep;
    e.candidate.layer_split = std::move(split);
    e.candidate.knobs.chunked_prefill_size = chunk;
    e.could_be_best = true;
    e.score = 1;
    r.evaluated.push_back(e);
  };
  const std::vector<int> eight = {12, 12, 12, 12, 12, 11, 11, 11};
  add(8, 4, eight);
  add(2, 4, {47, 46}, 4096);  // other knobs: it sets no split for the sweep
  add(4, 4, {});
  add(8, 2, {});
  add(8, 1, eight);
  add(4, 8, {23, 24, 23, 23});
  add(2, 8, {});
  r.qualifying = static_cast<int>(r.evaluated.size());
  r.load_points = {LoadPoint{8, 0}};
  const Measurement m = WorthMeasuring(r, "spec.toml", 40);
  std::vector<std::string> measured, other;
  for (const Candidate& c : m.measured) measured.push_back(c.Label());
  for (const Candidate& c : m.other_knobs) other.push_back(c.Label());
  EXPECT_EQ(measured, (std::vector<std::string>{
                          "PP8/TP4/EP4 split 12,12,12,12,12,11,11,11", "PP4/TP8/EP4",
                          "PP8/TP4/EP1 split 12,12,12,12,12,11,11,11", "PP2/TP16/EP8"}));
  EXPECT_EQ(other, (std::vector<std::string>{"PP2/TP16/EP4 chunk 4096 split 47,46", "PP8/TP4/EP2",
                                             "PP4/TP8/EP8 split 23,24,23,23"}));
  EXPECT_EQ(m.sweep.pp_layer_partitions, (std::map<int, std::vector<int>>{{8, eight}}));
  EXPECT_THAT(m.header, HasSubstr("with SGLang's even layer split, where this spec splits PP8 (a "
                                  "spec of its own): PP8/TP4/EP2\n"));
}

// The chat example (DeepSeek-V3 on four 8-GPU H200 nodes, 2,000 tokens in
// and 1,000 out).
inputs::SearchInputs ChatSearchInputs() {
  inputs::InputsOptions o;
  o.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/deepseek-v3-chat-search.toml";
  o.overrides = {"workload.requests=96"};
  Result<inputs::SearchInputs> in = inputs::LoadSearchInputs(o);
  EXPECT_TRUE(in.ok()) << in.error().message;
  return *in;
}

// An open loop without a cap: chat traffic at 25 requests/s is well beyond
// what four 8-GPU PP1/TP8 instances serve (about 15/s). Nothing waits for
// a slot; the requests queue in the servers, and the completions rule
// credits that queue as long answers (3,000 requests over 120 s of sends
// and an end-to-end p50 past a minute). The first tokens' pace tells it:
// they come at about 14 per second against 25 sent, and the best load is
// the highest rate at which they kept pace.
TEST(Search, AnUncappedOpenLoopWhoseRequestsQueueInTheServerFallsBehind) {
  inputs::InputsOptions io;
  io.spec_path = std::string(PPSEARCH_SOURCE_DIR) + "/examples/deepseek-v3-chat-search.toml";
  io.overrides = {"workload.requests=3000"};
  const Result<inputs::SearchInputs> in = inputs::LoadSearchInputs(io);
  ASSERT_TRUE(in.ok()) << in.error().message;
  SearchOptions o;
  o.bounds.instances = {4};
  o.bounds.pp = {1};
  o.bounds.ep = {1};
  o.bounds.dp = {1};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.disaggregated = "off";
  o.bounds.request_rate = {8, 25};
  o.ensemble.members = 0;
  const Result<SearchResult> r = Search(*in, cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->evaluated.size(), 1u);
  const Evaluated& e = r->evaluated.front();
  const PointFigures& over = e.points[1];
  ASSERT_EQ(over.load.request_rate, 25);
  EXPECT_EQ(over.load.concurrency, 0) << "no cap";
  PointFigures unpaced = over;
  unpaced.first_token_pace = 0;
  EXPECT_TRUE(KeepsUpAt(unpaced)) << "the completions rule alone lets it through";
  EXPECT_LT(over.first_token_pace, 0.7);
  EXPECT_FALSE(KeepsUpAt(over));
  EXPECT_FALSE(over.meets_sla);
  EXPECT_THAT(FellBehindText(over), HasSubstr("fell behind: requests queued in the server"));
  EXPECT_NEAR(e.points[0].first_token_pace, 1, 0.02) << "8 requests/s keeps up";
  ASSERT_TRUE(e.at);
  EXPECT_TRUE(KeepsUpAt(*e.at));
  EXPECT_GT(e.at->load.request_rate, 8);
  EXPECT_LT(e.at->load.request_rate, 18);
  EXPECT_LT(e.at->ttft_p50_s, over.ttft_p50_s / 4);
  EXPECT_EQ(SearchToJson(*r)["candidates"][0]["points"][1]["first_token_pace"],
            over.first_token_pace);
}

// Bounds that describe no aggregated layout (PP 3 on 8-GPU instances, 3
// instances of 32 GPUs, EP 7 of TP 8) beside disaggregated deployments
// search those, and say beside the refusals that the aggregated bounds
// gave none, in the text and the JSON.
TEST(Search, BoundsWithNoAggregatedLayoutAreSaidBesideTheRefusals) {
  const inputs::SearchInputs in = ChatSearchInputs();
  const std::string note =
      "the bounds describe no aggregated layout on the cluster's 32 GPUs (4 hosts x 8): a layout "
      "is instances of whole nodes x PP x TP using every GPU, with EP and DP dividing TP; only "
      "disaggregated deployments are searched (widen --instances, --pp, --ep or --dp for "
      "aggregated ones)";
  for (const auto& [instances, pp, ep] :
       std::vector<std::tuple<int, int, int>>{{4, 3, 8}, {3, 1, 8}, {4, 1, 7}}) {
    SearchOptions o;
    o.bounds.instances = {instances};
    o.bounds.pp = {pp};
    o.bounds.ep = {ep};
    o.bounds.dp = {1};
    o.bounds.concurrency = {16};
    o.ensemble.members = 0;
    const Result<SearchResult> r = Search(in, cost::Calibration{}, o);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->no_aggregated, note) << instances << "x PP" << pp << " EP" << ep;
    for (const Evaluated& e : r->evaluated) EXPECT_TRUE(e.candidate.pd) << e.candidate.Label();
    EXPECT_THAT(RenderSearchText(*r, 10), HasSubstr("); " + note + "\n"));
    EXPECT_EQ(SearchToJson(*r)["no_aggregated"], note);
  }
  SearchOptions o;
  o.bounds.instances = {4};
  o.bounds.pp = {1};
  o.bounds.ep = {8};
  o.bounds.dp = {1};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {16};
  o.bounds.disaggregated = "off";
  o.ensemble.members = 0;
  const Result<SearchResult> r = Search(in, cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->no_aggregated, "");
  EXPECT_TRUE(SearchToJson(*r)["no_aggregated"].is_null());
}

TEST(SearchSpace, DisaggregatedCandidatesSplitTheNodesIntoAPrefillAndADecodePool) {
  const inputs::SearchInputs in = ChatSearchInputs();
  Bounds b;
  const std::vector<Candidate> all = EnumerateDisaggregated(b, in.spec, in.model);
  // x prefill nodes and 4 - x decode nodes, each server 1 or more whole
  // nodes, the decode servers with and without DP attention.
  ASSERT_EQ(all.size(), 16u);
  for (const Candidate& c : all) {
    ASSERT_TRUE(c.pd);
    EXPECT_EQ(c.pd->prefill_nodes + c.pd->decode_nodes, 4);
    EXPECT_EQ(c.gpus(), 32);
    EXPECT_EQ(c.pd->prefill.ep, c.pd->prefill.tp);  // MoE: EP = TP
    EXPECT_EQ(c.pd->prefill.dp, 1);
  }
  EXPECT_THAT(Labels(all), ::testing::Contains("1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8/DP8"));
  EXPECT_THAT(Labels(all), ::testing::Contains("2P1D 2xPP1/TP8/EP8 + PP1/TP16/EP16"));
  b.dp = {1};
  EXPECT_EQ(EnumerateDisaggregated(b, in.spec, in.model).size(), 8u);
  b.disaggregated = "off";
  EXPECT_TRUE(EnumerateDisaggregated(b, in.spec, in.model).empty());
  // One-token answers leave a decode pool nothing to do: only when asked.
  spec::Spec prefill_only = in.spec;
  prefill_only.workload.output_tokens = 1;
  EXPECT_TRUE(EnumerateDisaggregated(Bounds{}, prefill_only, in.model).empty());
  Bounds on;
  on.disaggregated = "on";
  EXPECT_EQ(EnumerateDisaggregated(on, prefill_only, in.model).size(), 16u);
  spec::Spec one_node = in.spec;
  one_node.cluster.hosts.resize(1);
  EXPECT_TRUE(EnumerateDisaggregated(on, one_node, in.model).empty());
  Bounds bad;
  bad.disaggregated = "maybe";
  EXPECT_THAT(CheckBounds(bad).error().message, HasSubstr("--disaggregated: expected on or off"));
}

TEST(Search, DisaggregatedCandidatesArePredictedAsSimulatePredictsThemBesideTheAggregated) {
  // At SGLang's default fraction a decode server here leaves about 1.9 GiB
  // by this model: a 1 GiB rule lets the deployments rank.
  inputs::SearchInputs in = WithContextLength(ChatSearchInputs(), 8192);
  in.spec.decision.min_headroom_mib = 1024;
  SearchOptions o;
  o.bounds.instances = {4};
  o.bounds.pp = {1};
  o.bounds.ep = {8};
  o.bounds.dp = {1};
  o.bounds.chunked_prefill_size = {8192};
  o.bounds.concurrency = {16, 64};
  o.ensemble.members = 0;
  const Result<SearchResult> r = Search(in, cost::Calibration{}, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Evaluated* pd = nullptr;
  int aggregated = 0;
  for (const Evaluated& e : r->evaluated) {
    if (!e.candidate.pd) ++aggregated;
    if (e.candidate.Label() == "1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8") pd = &e;
  }
  EXPECT_EQ(aggregated, 1);
  ASSERT_NE(pd, nullptr);
  // Three-node servers split DeepSeek-V3's 256 experts 24 ways: refused.
  EXPECT_EQ(r->rejected_by_reason.at("moe_split"), 2);
  // The figures are the deployment's prediction, planned as `plan` plans it.
  spec::Disaggregation d;
  d.prefill = {"prefill", pd->candidate.pd->prefill, {0}, {}, {}};
  d.decode = {"decode", pd->candidate.pd->decode, {1, 2, 3}, {}, {}};
  const plan::DisaggregatedPlan plan = plan::PlanDisaggregated(in.spec, d, in.model, in.hardware);
  predict::PointOptions po;
  po.concurrency = 64;
  po.seed = in.spec.workload.seed;
  po.token_times = false;
  const predict::DisaggregatedPrediction direct =
      predict::PredictDisaggregated(plan, in.spec, in.model, in.hardware, cost::Calibration{}, po);
  ASSERT_EQ(pd->points.size(), 2u);
  const PointFigures& c64 = pd->points[1];
  EXPECT_DOUBLE_EQ(c64.output_tps, direct.metrics.output_tps);
  EXPECT_DOUBLE_EQ(c64.output_tps_per_gpu, direct.metrics.output_tps / 32);
  EXPECT_DOUBLE_EQ(c64.ttft_p50_s, direct.metrics.ttft_s.p50);
  ASSERT_TRUE(c64.pd);
  EXPECT_EQ(c64.pd->bottleneck, direct.bottleneck);
  EXPECT_DOUBLE_EQ(c64.pd->transfer_share_of_ttft, direct.transfer_share_of_ttft);
  // Ranked among the others by the same objective, and shown as what it is.
  EXPECT_GT(pd->score, 0);
  const std::string text = RenderSearchText(*r, 50);
  EXPECT_THAT(text, HasSubstr("1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8"));
  EXPECT_THAT(text, HasSubstr("disaggregated: 8 prefill GPUs on 1 node(s), 24 decode GPUs on 3"));
  const nlohmann::json j = SearchToJson(*r);
  bool found = false;
  for (const nlohmann::json& c : j["candidates"])
    if (c["candidate"]["label"] == "1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8") {
      found = true;
      EXPECT_EQ(c["candidate"]["disaggregated"]["ratio"], "1P3D");
      EXPECT_EQ(c["candidate"]["disaggregated"]["decode"]["servers"], 3);
      EXPECT_EQ(c["at"]["disaggregated"]["bottleneck"], direct.bottleneck);
    }
  EXPECT_TRUE(found);
  ASSERT_FALSE(j["pareto"].empty());
  for (const nlohmann::json& p : j["pareto"]) EXPECT_TRUE(p.contains("disaggregated"));

  // With a model-form term its best load point gets the model form's
  // intervals, and its score one: wider than they would be without the
  // transfer's never-calibrated term, which the compared ones keep.
  o.ensemble.members = 4;
  o.screen = false;
  cost::ModelFormScales scales;
  scales.s0 = 0.03;
  scales.uncalibrated = 0.2;
  o.model_form = scales;
  const Result<SearchResult> with = Search(in, cost::Calibration{}, o);
  ASSERT_TRUE(with.ok()) << with.error().message;
  int checked = 0;
  for (const Evaluated& e : with->evaluated) {
    if (e.candidate.Label() != "1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8") continue;
    ++checked;
    ASSERT_TRUE(e.at && e.at->output_tps_interval && e.at->compared_output_tps);
    EXPECT_LT(e.at->output_tps_interval->low, e.at->output_tps);
    EXPECT_GT(e.at->output_tps_interval->high, e.at->output_tps);
    // Compared: the uncalibrated distance both kinds share is left out, the
    // transfer's 0.2 is not.
    EXPECT_NEAR(std::log(e.at->compared_output_tps->high / e.at->output_tps),
                uncertainty::kZ90 * std::hypot(0.03, 0.2), 1e-9);
    ASSERT_TRUE(e.score_interval);
    EXPECT_LT(e.score_interval->low, e.score_interval->high);
  }
  EXPECT_EQ(checked, 1);
}

TEST(Search, ADisaggregatedCandidateToMeasureIsNamedAndTheAggregatedOnesSwept) {
  SearchResult r;
  r.load_points = {{16, 0}};
  Evaluated pd, agg;
  pd.candidate.pd = PdPools{};
  pd.candidate.pd->prefill.instances = 1;
  pd.candidate.pd->decode.instances = 3;
  pd.could_be_best = true;
  agg.candidate.layout.tp = 8;
  agg.could_be_best = false;
  r.evaluated = {pd, agg};
  r.qualifying = 2;
  const Measurement m = WorthMeasuring(r, "chat.toml", 96);
  ASSERT_EQ(m.measured.size(), 1u);
  EXPECT_EQ(m.measured[0].Label(), agg.candidate.Label());
  ASSERT_EQ(m.disaggregated.size(), 1u);
  EXPECT_THAT(m.header, HasSubstr("Also could be the best, disaggregated"));
  EXPECT_THAT(m.header, HasSubstr("1P3D"));
  EXPECT_FALSE(m.sweep.prefill);
}

TEST(Search, ADisaggregatedBestIsEmittedAsItsDeployment) {
  SearchResult r;
  r.load_points = {{16, 0}, {64, 0}};
  Evaluated pd, agg;
  pd.candidate.pd = PdPools{};
  pd.candidate.pd->prefill.tp = pd.candidate.pd->prefill.ep = 8;
  pd.candidate.pd->decode.tp = pd.candidate.pd->decode.ep = 8;
  pd.candidate.pd->decode.instances = 3;
  pd.candidate.pd->prefill_nodes = 1;
  pd.candidate.pd->decode_nodes = 3;
  pd.could_be_best = true;
  PointFigures at;
  at.load = {40, 0};
  at.probed = true;
  pd.at = at;
  agg.candidate.layout.tp = 8;
  agg.could_be_best = true;
  r.evaluated = {pd, agg};
  r.qualifying = 2;
  const Measurement m = WorthMeasuring(r, "chat.toml", 96, {"n0", "n1", "n2", "n3"});
  ASSERT_TRUE(m.sweep.prefill && m.sweep.decode);
  EXPECT_EQ(m.sweep.prefill->hosts, (std::vector<std::string>{"n0"}));
  EXPECT_EQ(m.sweep.decode->hosts, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(m.sweep.decode->layout.instances, 3);
  EXPECT_EQ(m.sweep.concurrency, (std::vector<int>{16, 40, 64}));  // and its best load
  ASSERT_EQ(m.measured.size(), 1u);
  EXPECT_THAT(m.header, HasSubstr("its best candidate is disaggregated,\n# 1P3D"));
  EXPECT_THAT(m.header, HasSubstr("Also could be the best: " + agg.candidate.Label()));
}

}  // namespace
}  // namespace ppsearch::search
