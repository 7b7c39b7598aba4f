// `ppsearch search` through the built binary: the ranking and the front on
// the shipped example, the JSON contract, a spec of the candidates worth
// measuring that `validate` accepts and `run --engine sim` runs, and the
// exit code when nothing can keep the headroom the decision asks for; the
// spec's [search] section as the bounds, each flag replacing its own list.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_fixture.h"

namespace ppsearch::testing {
namespace {

using nlohmann::json;

constexpr const char* kSearchSpec = "examples/kimi-k3-pp-search.toml";
// A small space: the example's PP sizes at EP 4 and 8, two chunk sizes.
// One instance and no DP attention: those dimensions have their own tests.
constexpr const char* kSmall =
    " --instances 1 --pp 1,2,4,8 --ep 4,8 --dp 1 --chunked-prefill-size 4096,8192"
    " --concurrency 8,16 --samples 8";

class SearchE2e : public CliTest {};

TEST_F(SearchE2e, RanksCountsRefusalsAndDrawsTheFront) {
  CommandResult r = Run(std::string("search ") + kSearchSpec + kSmall);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  for (const char* text : {"search: 14 candidates x 2 load points (C = 8, 16)",
                           "rejected: ", "could still be the best given the intervals",
                           "Pareto front", "all-reduces cross nodes"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;

  const std::string html = (dir_ / "search.html").string();
  CommandResult h = Run(std::string("search ") + kSearchSpec + kSmall + " --html " + html);
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const std::string page = ReadText(html);
  // The page holds what the text does: the burst's share, and each layout
  // the even layer split left out with the split that keeps it.
  for (const char* text :
       {"<svg", "id=\"search-front\"", "Pareto front", "Ranking", "predicted by the simulator",
        "the tensor burst (rtx-6000d", "Layer splits</h2>",
        "<li>PP8/TP4/EP4 chunk 4096: 1,399 MiB; with 8 = [12, 12, 12, 12, 12, 11, 11, 11]: "})
    EXPECT_NE(page.find(text), std::string::npos) << text;

  CommandResult j = Run(std::string("search ") + kSearchSpec + kSmall + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json out = json::parse(j.out);
  ASSERT_TRUE(out["candidates"].is_array());
  ASSERT_FALSE(out["candidates"].empty());
  const json& best = out["candidates"][0];
  EXPECT_EQ(best["rank"], 1);
  EXPECT_TRUE(best["could_be_best"].get<bool>());
  EXPECT_TRUE(best["score_low"].is_number());
  ASSERT_EQ(best["points"].size(), 2u);
  EXPECT_TRUE(best["at"]["input_tps_low"].is_number());
  EXPECT_TRUE(out["rejected"].is_object());
  EXPECT_FALSE(out["pareto"].empty());
  int rejected = 0;
  for (const auto& [reason, n] : out["rejected"].items()) rejected += n.get<int>();
  // The space and the candidates searched again with a layer split.
  EXPECT_GT(out["split_candidates"].get<int>(), 0);
  EXPECT_EQ(rejected + static_cast<int>(out["candidates"].size()),
            out["space_size"].get<int>() + out["split_candidates"].get<int>());
}

TEST_F(SearchE2e, EmittedSpecValidatesAndRuns) {
  const std::string emitted = (dir_ / "measure.toml").string();
  CommandResult r = Run(std::string("search ") + kSearchSpec + kSmall +
                        " --set workload.requests=16 --emit-spec " + emitted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote " + emitted), std::string::npos) << r.err;
  const std::string text = ReadText(emitted);
  EXPECT_NE(text.find("# Written by `ppsearch search"), std::string::npos) << text;
  EXPECT_NE(text.find("requests = 16"), std::string::npos) << text;
  CommandResult v = Run("validate " + emitted);
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  CommandResult run = Run("run " + emitted + " --engine sim --set experiment.results_dir=" +
                          (dir_ / "results").string() + " --run-id emitted");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "results" / "emitted" / "summary.csv")) << run.err;

  // The best candidate is PP8/TP4/EP4 with a layer split (its even split
  // leaves less than the rule at chunk 4096): the spec sets it, and the
  // servers run with it, as the search predicted.
  CommandResult j =
      Run(std::string("search ") + kSearchSpec + kSmall + " --set workload.requests=16 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json best = json::parse(j.out)["candidates"][0];
  ASSERT_TRUE(best["candidate"]["pp_layer_partition"].is_array()) << best.dump();
  std::string split;
  for (const json& n : best["candidate"]["pp_layer_partition"])
    split += (split.empty() ? "" : ", ") + std::to_string(n.get<int>());
  EXPECT_NE(text.find("[engine.pp_layer_partition]\n    8 = [ " + split + " ]"), std::string::npos)
      << text;
  EXPECT_NE(ReadText(dir_ / "results" / "emitted" / "metadata" / "commands.txt")
                .find("SGLANG_PP_LAYER_PARTITION="),
            std::string::npos);
  // The run's headroom (its worst over the layout's rows of summary.csv)
  // is the one predicted.
  std::istringstream summary(ReadText(dir_ / "results" / "emitted" / "summary.csv"));
  std::string line, cell;
  std::getline(summary, line);
  std::vector<std::string> names;
  for (std::istringstream header(line); std::getline(header, cell, ',');) names.push_back(cell);
  double headroom = INFINITY;
  while (std::getline(summary, line)) {
    std::map<std::string, std::string> row;
    std::istringstream cells(line);
    for (size_t k = 0; k < names.size() && std::getline(cells, cell, ','); ++k)
      row[names[k]] = cell;
    if (row["pp"] == std::to_string(best["candidate"]["pp"].get<int>()) &&
        row["tp"] == std::to_string(best["candidate"]["tp"].get<int>()) &&
        row["ep"] == std::to_string(best["candidate"]["ep"].get<int>()))
      headroom = std::min(headroom, std::stod(row["headroom_mib"]));
  }
  EXPECT_NEAR(headroom, best["headroom_mib"].get<double>(), 1.0);
}

// Request rates are open-loop load points; a run spec holds one rate, so
// only a search of one rate emits a spec, and it runs.
TEST_F(SearchE2e, RequestRatesAreLoadPointsAndOneRateEmitsARunnableSpec) {
  const std::string space = " --instances 1 --pp 4,8 --ep 4 --dp 1 --chunked-prefill-size 8192";
  CommandResult r = Run(std::string("search ") + kSearchSpec + space +
                        " --samples 0 --request-rate 0.2,0.4 --concurrency 32");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(Poisson arrivals at 0.20, 0.40 requests/s, at most 32 in flight)"),
            std::string::npos)
      << r.out;
  // Refused before any work, as other bad arguments are: nothing printed,
  // no page written.
  const std::string emitted = (dir_ / "rate.toml").string();
  const std::string html = (dir_ / "rate.html").string();
  r = Run(std::string("search ") + kSearchSpec + space +
          " --samples 0 --request-rate 0.2,0.4 --json --html " + html + " --emit-spec " + emitted);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--emit-spec " + emitted +
                       ": a run spec holds one workload.request_rate, the search has 2 "
                       "(--request-rate or [search] request_rate); search one rate to emit its "
                       "spec"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(html));
  EXPECT_FALSE(std::filesystem::exists(emitted));
  r = Run(std::string("search ") + kSearchSpec + space +
          " --samples 0 --request-rate 0.5 --concurrency 16 --set workload.requests=8"
          " --emit-spec " +
          emitted);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = ReadText(emitted);
  EXPECT_NE(text.find("request_rate = 0.5"), std::string::npos) << text;
  EXPECT_NE(text.find("concurrency = [ 16 ]"), std::string::npos) << text;
  CommandResult run = Run("run " + emitted +
                          " --engine sim --set sweep.repeats=1"
                          " --set experiment.results_dir=" +
                          (dir_ / "results").string() + " --run-id rate");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST_F(SearchE2e, NoCandidateKeepsTheHeadroomIsExit4NamingTheClosest) {
  CommandResult r = Run(std::string("search ") + kSearchSpec +
                        " --pp 4,8 --ep 4 --concurrency 8 --samples 0"
                        " --set decision.min_headroom_mib=500000");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.out.find("no candidate keeps 500,000 MiB of headroom; the closest:"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("MiB short"), std::string::npos) << r.out;

  // A run spec of nothing is not written, and stderr says so.
  const std::string emitted = (dir_ / "none.toml").string();
  r = Run(std::string("search ") + kSearchSpec +
          " --pp 4,8 --ep 4 --concurrency 8 --samples 0"
          " --set decision.min_headroom_mib=500000 --emit-spec " +
          emitted);
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("--emit-spec " + emitted + ": not written: no candidate qualifies"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(emitted));
}

// --max-running-requests takes what [search] max_running_requests takes:
// 0 is refused, not read as SGLang's default.
TEST_F(SearchE2e, MaxRunningRequestsZeroIsRefusedAsTheSectionRefusesIt) {
  CommandResult r =
      Run(std::string("search ") + kSearchSpec + " --samples 0 --max-running-requests 0,64");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("--max-running-requests: expected an integer in [1, 65536], got 0"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  CommandResult help = Run("search --help");
  EXPECT_NE(help.out.find("max-running-requests values, each from 1 to 65536"), std::string::npos)
      << help.out;
}

// An SLA no candidate meets is exit 4, naming the closest with how far over
// they are; the K3 layout whose KV pool is shorter than one prompt
// (PP1/TP32/DP2 at chunk 8192) is refused, never ranked on zero figures.
TEST_F(SearchE2e, AnSlaNoCandidateMeetsIsExit4NamingTheClosestWithTheirMargins) {
  CommandResult r = Run(std::string("search ") + kSearchSpec +
                        " --samples 0 --concurrency 1,8 --set decision.ttft_p99_s=0.001");
  EXPECT_EQ(r.exit_code, 4) << r.err << r.out;
  EXPECT_NE(r.out.find("no candidate within the headroom meets the SLA (ttft_p99_s 0.001 s) at "
                       "any load point; the closest:"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" times the limit at its nearest load point; first miss C=1: TTFT p99"),
            std::string::npos)
      << r.out;
  CommandResult j = Run(std::string("search ") + kSearchSpec +
                        " --samples 0 --concurrency 1,8 --set decision.ttft_p99_s=0.001 --json");
  EXPECT_EQ(j.exit_code, 4);
  const json out = json::parse(j.out);
  EXPECT_EQ(out["qualifying"], 0);
  for (const json& c : out["candidates"]) {
    EXPECT_TRUE(c["rank"].is_null());
    for (const json& p : c["points"]) EXPECT_GT(p["requests_completed"].get<int>(), 0);
  }
  bool dp2_refused = false;
  for (const json& x : out["rejections"])
    if (x["candidate"]["label"] == "PP1/TP32/EP4/DP2 chunk 8192")
      dp2_refused = x["reason"] == "kv_room";
  EXPECT_TRUE(dp2_refused);
}

// --target-rate: how many GPUs of which layout serve a rate under the SLA,
// the fewest first.
TEST_F(SearchE2e, ATargetRatePlansTheFewestGpus) {
  const std::string space =
      std::string("search ") + kSearchSpec +
      " --instances 1,2 --pp 4 --ep 4 --dp 1 --chunked-prefill-size 8192 --concurrency 4,8"
      " --samples 0 --set decision.ttft_p99_s=60 --target-rate 1";
  CommandResult r = Run(space);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("Capacity for 1.00 requests/s under the SLA (ttft_p99_s 60 s): the fewest "
                       "GPUs first, then input TPS"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fewest GPUs: "), std::string::npos) << r.out;
  CommandResult j = Run(space + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json rows = json::parse(j.out)["capacity"]["rows"];
  ASSERT_FALSE(rows.empty());
  int last = 0;
  for (const json& row : rows) {
    EXPECT_GE(row["gpus"].get<int>(), last);
    last = row["gpus"].get<int>();
    EXPECT_EQ(row["gpus"].get<int>(),
              row["instances"].get<int>() * row["gpus_per_instance"].get<int>());
    EXPECT_GE(row["instances"].get<int>() * row["instance_rps"].get<double>(), 1.0);
    EXPECT_LT((row["instances"].get<int>() - 1) * row["instance_rps"].get<double>(), 1.0);
  }
  CommandResult bad = Run(space + " --target-rate 0");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

// The help says what DP attention defaults to, as docs/search.md does:
// every divisor of TP.
TEST_F(SearchE2e, HelpNamesTheDpDefault) {
  CommandResult r = Run("search --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(default: [search] dp, else every divisor of TP)"), std::string::npos)
      << r.out;
}

// The example with a [search] section: PP 4 (TP 8: EP 4, 8) and PP 8 (TP 4:
// EP 4; EP 8 does not divide TP) at two chunk sizes is 6 candidates.
TEST_F(SearchE2e, TheSpecsSearchSectionIsTheSpaceAndAFlagReplacesOneList) {
  std::string text = ReadText(kSearchSpec);
  const std::string examples = std::filesystem::absolute("examples").string();
  for (size_t at; (at = text.find("\"../")) != std::string::npos;)
    text.replace(at, 4, "\"" + examples + "/../");
  const std::string spec = (dir_ / "search.toml").string();
  std::ofstream(spec) << text
                      << "\n[search]\ninstances = [1]\npp = [4, 8]\nep = [4, 8]\ndp = [1]\n"
                         "chunked_prefill_size = [4096, 8192]\nconcurrency = [8, 16]\n";
  CommandResult r = Run("search " + spec + " --samples 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("search: 6 candidates x 2 load points (C = 8, 16)"), std::string::npos)
      << r.out;

  // --pp replaces the section's pp and keeps its ep: PP 8 at EP 4 (the
  // default EPs 1, 2, 4 would make 6), and --concurrency its load points.
  r = Run("search " + spec + " --samples 0 --pp 8 --concurrency 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("search: 2 candidates x 1 load point (C = 16)"), std::string::npos) << r.out;
  r = Run("search " + spec + " --samples 0 --set 'search.pp=[8]'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("search: 2 candidates x 2 load points (C = 8, 16)"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace ppsearch::testing
