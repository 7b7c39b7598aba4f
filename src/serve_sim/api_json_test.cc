#include "serve_sim/api_json.h"

#include <gtest/gtest.h>

namespace ppsearch::serve_sim {
namespace {

TEST(TextTokensTest, WordsOfUpToFourBytesAreOneToken) {
  EXPECT_EQ(CountTextTokens(""), 0);
  EXPECT_EQ(CountTextTokens("   "), 1);  // non-empty text is at least one token
  EXPECT_EQ(CountTextTokens("the cat sat"), 3);
  EXPECT_EQ(CountTextTokens("tokenizer"), 3);  // 9 bytes -> ceil(9 / 4)
  EXPECT_EQ(CountTextTokens("a\tb\nc  d"), 4);
}

TEST(PdFieldsTest, TheRoutersBootstrapFieldsAreReadAndCheckedAndMayBeAbsent) {
  auto f = ParsePdFields(
      R"({"text": "x", "bootstrap_host": "10.0.0.1", "bootstrap_port": 8998,
          "bootstrap_room": 9007199254740993, "rid": "r1"})");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_TRUE(f->room.has_value());
  EXPECT_EQ(*f->room, uint64_t{9007199254740993});  // beyond a double's integers
  EXPECT_EQ(f->host, "10.0.0.1");
  EXPECT_EQ(f->port, 8998);
  EXPECT_EQ(f->rid, "r1");
  auto none = ParsePdFields(R"({"text": "x"})");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->room.has_value());
  EXPECT_EQ(ParsePdFields(R"({"bootstrap_room": -1})").error().message,
            "bootstrap_room must be a non-negative integer");
  EXPECT_EQ(ParsePdFields(R"({"bootstrap_port": 70000})").error().message,
            "bootstrap_port must be a TCP port");
}

TEST(GenerateRequestTest, InputIdsAndDefaults) {
  auto r = ParseGenerateRequest(R"({"input_ids": [1, 2, 3, 4, 5], "stream": true})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->prompt_tokens, 5);
  EXPECT_EQ(r->max_new_tokens, 128);
  EXPECT_TRUE(r->stream);
  EXPECT_FALSE(r->ignore_eos);
}

TEST(GenerateRequestTest, TextAndSamplingParams) {
  auto r = ParseGenerateRequest(
      R"({"text": "hello world", "sampling_params": {"max_new_tokens": 7, "ignore_eos": true, "temperature": 0}})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->prompt_tokens, 4);  // 5 bytes -> 2 tokens, twice
  EXPECT_EQ(r->max_new_tokens, 7);
  EXPECT_TRUE(r->ignore_eos);
}

TEST(GenerateRequestTest, Errors) {
  EXPECT_EQ(ParseGenerateRequest("{").error().message, "request body is not valid JSON");
  EXPECT_EQ(ParseGenerateRequest("{}").error().message,
            "Either text, input_ids or input_embeds should be provided.");
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": [[1, 2]]})").error().message,
            "input_ids must be a flat list of integer token ids (batches are not supported)");
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": [1], "sampling_params": {"max_new_tokens": -1}})")
                .error()
                .message,
            "max_new_tokens must be a non-negative integer");
}

// Token ids are counted and checked as the body is read, not kept: the
// count, the first bad id by its index, and lists below the top level
// left alone.
TEST(GenerateRequestTest, TokenIdsAreCountedAndCheckedWhereverTheyFail) {
  auto r = ParseGenerateRequest(
      R"({"extra": {"input_ids": [-1, [2]]}, "input_ids": [7, 8, 9], "rid": "x"})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->prompt_tokens, 3);
  EXPECT_EQ(r->rid, "x");
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": [0, 1, -4, -5]})").error().message,
            "input_ids must hold token ids of 0 or more; input_ids[2] is -4");
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": [1, 2.5]})").error().message,
            "input_ids must be a flat list of integer token ids (batches are not supported)");
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": [1, {"id": 2}]})").error().message,
            "input_ids must be a flat list of integer token ids (batches are not supported)");
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": 5})").error().message,
            "input_ids must be a list of token ids");
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": []})").error().message, "The input is empty.");
  // A repeated key: the last one, as the JSON value the server reads.
  r = ParseGenerateRequest(R"({"input_ids": [1], "input_ids": [1, 2]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->prompt_tokens, 2);
  EXPECT_EQ(ParseGenerateRequest(R"({"input_ids": [1, 2)").error().message,
            "request body is not valid JSON");
}

TEST(CompletionRequestTest, PromptStringOrTokens) {
  auto s = ParseCompletionRequest(R"({"model": "m", "prompt": "abcd efgh", "stream": true,
                                      "stream_options": {"include_usage": true}})");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->prompt_tokens, 2);
  EXPECT_EQ(s->max_tokens, 16);
  EXPECT_TRUE(s->include_usage);
  auto t = ParseCompletionRequest(R"({"prompt": [5, 6, 7], "max_tokens": 3})");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->prompt_tokens, 3);
  EXPECT_EQ(t->max_tokens, 3);
  EXPECT_FALSE(t->stream);
  EXPECT_EQ(ParseCompletionRequest(R"({"max_tokens": 3})").error().message, "prompt is required");
}

TEST(GenerateChunkTest, CumulativeWithFinishReasonOnTheLastChunk) {
  GenerateState s;
  s.id = "abc";
  s.prompt_tokens = 10;
  s.completion_tokens = 2;
  s.first_token_ts = 100.5;
  nlohmann::json mid = GenerateChunk(s);
  EXPECT_EQ(mid["text"], " tok tok");
  EXPECT_EQ(mid["output_ids"], nlohmann::json({1000, 1001}));
  EXPECT_TRUE(mid["meta_info"]["finish_reason"].is_null());
  EXPECT_EQ(mid["meta_info"]["prompt_tokens"], 10);
  EXPECT_EQ(mid["meta_info"]["completion_tokens"], 2);
  EXPECT_EQ(mid["meta_info"]["cached_tokens"], 0);
  EXPECT_FALSE(mid["meta_info"].contains("e2e_latency"));
  s.completion_tokens = 3;
  s.finished = true;
  s.e2e_latency_s = 1.25;
  nlohmann::json last = GenerateChunk(s);
  EXPECT_EQ(last["meta_info"]["finish_reason"],
            nlohmann::json({{"type", "length"}, {"length", 3}}));
  EXPECT_DOUBLE_EQ(last["meta_info"]["e2e_latency"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(last["meta_info"]["first_token_ts"].get<double>(), 100.5);
  EXPECT_EQ(SseEvent(nlohmann::json{{"a", 1}}), "data: {\"a\":1}\n\n");
}

TEST(CompletionChunkTest, OpenAiShapes) {
  nlohmann::json c = CompletionChunk("cmpl-1", 7, "m", " tok", false);
  EXPECT_EQ(c["object"], "text_completion");
  EXPECT_EQ(c["choices"][0]["text"], " tok");
  EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
  nlohmann::json u = CompletionUsageChunk("cmpl-1", 7, "m", 5, 3);
  EXPECT_TRUE(u["choices"].is_array());
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["total_tokens"], 8);
  nlohmann::json r = CompletionResponse("cmpl-1", 7, "m", 5, 2);
  EXPECT_EQ(r["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(r["choices"][0]["text"], " tok tok");
  EXPECT_EQ(r["usage"]["completion_tokens"], 2);
}

}  // namespace
}  // namespace ppsearch::serve_sim
