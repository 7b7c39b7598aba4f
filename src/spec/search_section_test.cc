// [search]: the bounds `ppsearch search` explores, read like the other
// sections, each error at the element's file:line:col and dotted key.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spec/spec_parser.h"

namespace ppsearch::spec {
namespace {

// A valid spec of 5 lines; a test appends its [search] from line 6 on.
constexpr char kSearchSectionSpec[] =
    "experiment = {name = \"t\"}\n"
    "cluster = {hosts = [\"a\", \"b\"], gpus_per_node = 4}\n"
    "engine = {model_config = \"m.json\"}\n"
    "sweep = {pp = [1, 2], concurrency = [8]}\n"
    "workload = {input_tokens = 100, requests = 4}\n";

Result<Spec> ParseSearch(const std::string& search,
                         const std::vector<std::string>& overrides = {}) {
  return ParseSpec(std::string(kSearchSectionSpec) + search, "/s/spec.toml", overrides);
}

std::string SearchErrorOf(const std::string& search,
                          const std::vector<std::string>& overrides = {}) {
  Result<Spec> spec = ParseSearch(search, overrides);
  return spec.ok() ? "" : spec.error().message;
}

TEST(SpecSearch, ListsAreReadAndAbsentKeysStayEmpty) {
  Result<Spec> spec = ParseSearch(
      "[search]\n"
      "pp = [4, 8, 16]\n"
      "ep = [1, 2, 4]\n"
      "chunked_prefill_size = [4096, 8192]\n"
      "max_running_requests = [32, 64]\n"
      "concurrency = [1, 4, 16, 64]\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->search.pp, (std::vector<int>{4, 8, 16}));
  EXPECT_EQ(spec->search.ep, (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(spec->search.chunked_prefill_size, (std::vector<int64_t>{4096, 8192}));
  EXPECT_EQ(spec->search.max_running_requests, (std::vector<int>{32, 64}));
  EXPECT_EQ(spec->search.concurrency, (std::vector<int>{1, 4, 16, 64}));
  EXPECT_EQ(spec->search.origin.line, 6);

  Result<Spec> partial = ParseSearch("[search]\nep = [4]\n");
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  EXPECT_TRUE(partial->search.pp.empty());
  EXPECT_EQ(partial->search.ep, (std::vector<int>{4}));
  Result<Spec> none = ParseSearch("");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->search.pp.empty() && none->search.concurrency.empty());
}

// disaggregated takes what --disaggregated takes; left out, the search's
// default decides.
TEST(SpecSearch, DisaggregatedIsOnOrOff) {
  Result<Spec> off = ParseSearch("[search]\ndisaggregated = \"off\"\n");
  ASSERT_TRUE(off.ok()) << off.error().message;
  EXPECT_EQ(off->search.disaggregated, "off");
  Result<Spec> none = ParseSearch("[search]\npp = [4]\n");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->search.disaggregated, "");
  EXPECT_EQ(SearchErrorOf("[search]\ndisaggregated = \"no\"\n"),
            "/s/spec.toml:7:17: key 'search.disaggregated': expected one of 'on', 'off', got "
            "'no'");
  EXPECT_EQ(SearchErrorOf("[search]\ndisaggregated = false\n"),
            "/s/spec.toml:7:17: key 'search.disaggregated': expected \"on\" or \"off\", got a "
            "boolean");
}

// PP 3 on 8 GPUs is left for the planner's checks, which count it as a refusal.
TEST(SpecSearch, SizesThePlannerRefusesAreNotCheckedHere) {
  Result<Spec> spec = ParseSearch("[search]\npp = [3, 5]\nep = [7]\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->search.pp, (std::vector<int>{3, 5}));
}

TEST(SpecSearch, BadValuesNameFileLineAndKey) {
  EXPECT_EQ(SearchErrorOf("[search]\npp = [4, 0]\n"),
            "/s/spec.toml:7:10: key 'search.pp[1]': expected an integer in [1, 32768], got 0");
  EXPECT_EQ(SearchErrorOf("[search]\nconcurrency = [8, 16, 8]\n"),
            "/s/spec.toml:7:23: key 'search.concurrency[2]': 8 is listed twice");
  EXPECT_EQ(SearchErrorOf("[search]\nep = 4\n"),
            "/s/spec.toml:7:6: key 'search.ep': expected an array of positive integers, got an "
            "integer");
  EXPECT_EQ(SearchErrorOf("[search]\nmax_running_requests = [32, \"64\"]\n"),
            "/s/spec.toml:7:29: key 'search.max_running_requests[1]': expected an integer, got a "
            "string");
  // The same rule as --max-running-requests (spec::kMinRunningRequests).
  EXPECT_EQ(SearchErrorOf("[search]\nmax_running_requests = [0]\n"),
            "/s/spec.toml:7:25: key 'search.max_running_requests[0]': expected an integer in [1, "
            "65536], got 0");
  EXPECT_EQ(SearchErrorOf("[search]\nchunked_prefill_size = [-1]\n"),
            "/s/spec.toml:7:25: key 'search.chunked_prefill_size[0]': expected an integer in [1, "
            "16777216], got -1");
  EXPECT_EQ(SearchErrorOf("[search]\npp = []\n"),
            "/s/spec.toml:7:6: key 'search.pp': expected a non-empty array of positive integers");
  std::string many = "[search]\nconcurrency = [1";
  for (int c = 2; c <= 65; ++c) many += ", " + std::to_string(c);
  EXPECT_EQ(SearchErrorOf(many + "]\n"),
            "/s/spec.toml:7:15: key 'search.concurrency': expected at most 64 values, got 65");
  EXPECT_EQ(SearchErrorOf("[search]\ntp = [4]\n"),
            "/s/spec.toml:7:1: unknown key 'search.tp' (did you mean 'pp'?)");
}

// Request rates make the load points an open loop; the concurrency is then
// the one cap on requests in flight.
TEST(SpecSearch, RequestRatesAreNumbersAboveZeroWithAtMostOneConcurrencyAsTheirCap) {
  Result<Spec> spec =
      ParseSearch("[search]\ndp = [1, 2]\nrequest_rate = [0.5, 2, 8]\nconcurrency = [64]\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->search.dp, (std::vector<int>{1, 2}));
  EXPECT_EQ(spec->search.request_rate, (std::vector<double>{0.5, 2, 8}));
  EXPECT_EQ(spec->search.concurrency, (std::vector<int>{64}));
  EXPECT_EQ(SearchErrorOf("[search]\nrequest_rate = [1, 0]\n"),
            "/s/spec.toml:7:20: key 'search.request_rate[1]': expected requests/s >= 0.001, got 0");
  EXPECT_EQ(SearchErrorOf("[search]\nrequest_rate = [1e-308]\n"),
            "/s/spec.toml:7:17: key 'search.request_rate[0]': expected requests/s >= 0.001, got "
            "1e-308");
  EXPECT_EQ(SearchErrorOf("[search]\nrequest_rate = [1.5, 1.5]\n"),
            "/s/spec.toml:7:22: key 'search.request_rate[1]': 1.5 is listed twice");
  EXPECT_EQ(SearchErrorOf("[search]\nrequest_rate = [\"fast\"]\n"),
            "/s/spec.toml:7:17: key 'search.request_rate[0]': expected a number, got a string");
  EXPECT_EQ(SearchErrorOf("[search]\nrequest_rate = [1, 2]\nconcurrency = [8, 16]\n"),
            "/s/spec.toml:8:15: key 'search.concurrency': with request_rate, concurrency is the "
            "one cap on requests in flight; expected one value, got 2");
}

TEST(SpecSearch, OverridesSetTheSectionToo) {
  Result<Spec> spec = ParseSearch("[search]\npp = [4, 8]\nep = [4]\n", {"search.pp=[8]"});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->search.pp, (std::vector<int>{8}));
  EXPECT_EQ(spec->search.ep, (std::vector<int>{4}));
  Result<Spec> added = ParseSearch("", {"search.concurrency=[16]"});
  ASSERT_TRUE(added.ok()) << added.error().message;
  EXPECT_EQ(added->search.concurrency, (std::vector<int>{16}));
  EXPECT_EQ(SearchErrorOf("", {"search.pp=[8,8]"}),
            "--set search.pp=[8,8]: key 'search.pp[1]': 8 is listed twice");
}

TEST(SpecSearch, MoeA2aBackendsAreSglangNamesListedOnce) {
  const Result<Spec> spec = ParseSearch("[search]\nmoe_a2a_backend = [\"none\", \"deepep\"]\n");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->search.moe_a2a_backend, (std::vector<std::string>{"none", "deepep"}));
  EXPECT_EQ(SearchErrorOf("[search]\nmoe_a2a_backend = [\"deepepp\"]\n"),
            "/s/spec.toml:7:19: key 'search.moe_a2a_backend': \"deepepp\" is not an SGLang "
            "moe-a2a-backend (none, deepep, mooncake, nixl, mori, ascend_fuseep, flashinfer, "
            "megamoe, pplx, ascend_tp, deepep_v2)");
  EXPECT_EQ(SearchErrorOf("[search]\nmoe_a2a_backend = [\"deepep\", \"deepep\"]\n"),
            "/s/spec.toml:7:19: key 'search.moe_a2a_backend': \"deepep\" is listed twice");
}

}  // namespace
}  // namespace ppsearch::spec
