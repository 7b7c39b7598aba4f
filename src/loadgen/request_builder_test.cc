#include "loadgen/request_builder.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

namespace ppsearch::loadgen {
namespace {

TEST(RequestBuilderTest, PromptIdsAreExactLengthInRangeAndDeterministic) {
  PromptParams p;
  p.seed = 7;
  p.vocab_size = 1010;
  const auto ids = MakePromptIds(p, PromptStream::kSample, 3, 500);
  ASSERT_EQ(ids.size(), 500u);
  for (int64_t id : ids) {
    EXPECT_GE(id, 1000);
    EXPECT_LT(id, 1010);
  }
  EXPECT_EQ(ids, MakePromptIds(p, PromptStream::kSample, 3, 500));
}

TEST(RequestBuilderTest, PromptsDifferByRequestSeedAndStream) {
  PromptParams p;
  const auto a = MakePromptIds(p, PromptStream::kSample, 0, 64);
  EXPECT_NE(a, MakePromptIds(p, PromptStream::kSample, 1, 64));
  EXPECT_NE(a, MakePromptIds(p, PromptStream::kWarmup, 0, 64));
  p.seed = 2;
  EXPECT_NE(a, MakePromptIds(p, PromptStream::kSample, 0, 64));
  // No two requests of a sample start with the same 4 ids (no prefix-cache hits).
  p.seed = 1;
  std::set<std::vector<int64_t>> heads;
  for (int i = 0; i < 1000; ++i) {
    auto ids = MakePromptIds(p, PromptStream::kSample, i, 4);
    heads.insert(ids);
  }
  EXPECT_EQ(heads.size(), 1000u);
}

TEST(RequestBuilderTest, SharedPrefix) {
  PromptParams p;
  p.shared_prefix_tokens = 10;
  const auto a = MakePromptIds(p, PromptStream::kSample, 0, 32);
  const auto b = MakePromptIds(p, PromptStream::kSample, 1, 32);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 10, b.begin()));
  EXPECT_NE(std::vector<int64_t>(a.begin() + 10, a.end()),
            std::vector<int64_t>(b.begin() + 10, b.end()));
}

TEST(RequestBuilderTest, NativeBody) {
  const std::vector<int64_t> ids = {1001, 2002, 3003};
  const std::string body = BuildRequestBody(Api::kNative, ids, 5, "ignored");
  EXPECT_EQ(
      body,
      R"({"input_ids":[1001,2002,3003],"sampling_params":{"max_new_tokens":5,"ignore_eos":true,)"
      R"("temperature":0},"stream":true})");
  EXPECT_TRUE(nlohmann::json::accept(body));
}

TEST(RequestBuilderTest, OpenAiBody) {
  const std::vector<int64_t> ids = {1001, 2002};
  const auto j = nlohmann::json::parse(BuildRequestBody(Api::kOpenAi, ids, 1, "kimi \"k3\""));
  EXPECT_EQ(j["model"], "kimi \"k3\"");
  EXPECT_EQ(j["prompt"], nlohmann::json({1001, 2002}));
  EXPECT_EQ(j["max_tokens"], 1);
  EXPECT_EQ(j["ignore_eos"], true);
  EXPECT_EQ(j["temperature"], 0);
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
}

}  // namespace
}  // namespace ppsearch::loadgen
