#include "loadgen/stream_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loadgen/captured_streams_testing.h"
#include "loadgen/sse_parser.h"

namespace ppsearch::loadgen {
namespace {

struct Decoded {
  int first_token_event = -1;  // index of the event that carried the first token
  int events = 0;
  bool done = false;
  std::string error;
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  bool operator==(const Decoded&) const = default;
};

// Feeds `bytes` split at `split`, as the client does chunk by chunk.
Decoded Decode(Api api, const std::string& bytes, size_t split) {
  SseParser parser;
  StreamDecoder decoder(api);
  Decoded d;
  for (std::string_view piece :
       {std::string_view(bytes).substr(0, split), std::string_view(bytes).substr(split)}) {
    std::vector<std::string> events;
    EXPECT_TRUE(parser.Feed(piece, events));
    for (const auto& e : events) {
      if (decoder.OnEvent(e)) {
        EXPECT_EQ(d.first_token_event, -1);
        d.first_token_event = d.events;
      }
      ++d.events;
    }
  }
  d.done = decoder.done();
  d.error = decoder.error();
  d.prompt_tokens = decoder.prompt_tokens();
  d.completion_tokens = decoder.completion_tokens();
  return d;
}

void ExpectAtEverySplit(Api api, const std::string& bytes, const Decoded& expected) {
  for (size_t split = 0; split <= bytes.size(); ++split) {
    ASSERT_EQ(Decode(api, bytes, split), expected) << "split at " << split;
  }
}

TEST(StreamDecoderTest, NativeCumulative) {
  ExpectAtEverySplit(Api::kNative, testdata::kNativeCumulative,
                     {.first_token_event = 0,
                      .events = 4,
                      .done = true,
                      .error = "",
                      .prompt_tokens = 4,
                      .completion_tokens = 3});
}

TEST(StreamDecoderTest, NativeIncremental) {
  ExpectAtEverySplit(Api::kNative, testdata::kNativeIncremental,
                     {.first_token_event = 0,
                      .events = 3,
                      .done = true,
                      .error = "",
                      .prompt_tokens = 4,
                      .completion_tokens = 2});
}

TEST(StreamDecoderTest, OpenAiSkipsTheEmptyFirstChunk) {
  ExpectAtEverySplit(Api::kOpenAi, testdata::kOpenAiCompletion,
                     {.first_token_event = 1,
                      .events = 5,
                      .done = true,
                      .error = "",
                      .prompt_tokens = 4,
                      .completion_tokens = 2});
}

TEST(StreamDecoderTest, ErrorChunk) {
  ExpectAtEverySplit(
      Api::kNative, testdata::kNativeError,
      {.first_token_event = -1,
       .events = 2,
       .done = true,
       .error = "server sent an error: The input (40000 tokens) is longer than the model's "
                "context length (32768 tokens). (code 400)",
       .prompt_tokens = -1,
       .completion_tokens = 0});
}

TEST(StreamDecoderTest, NativeChunkWithoutTokensIsNotTheFirstToken) {
  StreamDecoder d(Api::kNative);
  EXPECT_FALSE(d.OnEvent(
      R"({"text":"","output_ids":[],"meta_info":{"prompt_tokens":8,"completion_tokens":0}})"));
  EXPECT_FALSE(d.token_seen());
  EXPECT_TRUE(d.OnEvent(R"({"text":"","output_ids":[],"meta_info":{"completion_tokens":1}})"));
  EXPECT_FALSE(
      d.OnEvent(R"({"text":"ab","output_ids":[5,6],"meta_info":{"completion_tokens":2}})"));
  EXPECT_EQ(d.prompt_tokens(), 8);
  EXPECT_EQ(d.completion_tokens(), 2);
}

TEST(StreamDecoderTest, OpenAiUsageAloneCountsAsToken) {
  StreamDecoder d(Api::kOpenAi);
  EXPECT_FALSE(d.OnEvent(R"({"choices":[{"index":0,"text":"","finish_reason":null}]})"));
  EXPECT_TRUE(d.OnEvent(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}})"));
  EXPECT_EQ(d.completion_tokens(), 1);
}

TEST(StreamDecoderTest, CountsOutputIdsWhenTheServerReportsNone) {
  StreamDecoder cumulative(Api::kNative);
  cumulative.OnEvent(R"({"output_ids":[1]})");
  cumulative.OnEvent(R"({"output_ids":[1,2]})");
  cumulative.OnEvent(R"({"output_ids":[1,2,3]})");
  EXPECT_EQ(cumulative.completion_tokens(), 3);
  StreamDecoder incremental(Api::kNative);
  incremental.OnEvent(R"({"output_ids":[1]})");
  incremental.OnEvent(R"({"output_ids":[2]})");
  incremental.OnEvent(R"({"output_ids":[3]})");
  EXPECT_EQ(incremental.completion_tokens(), 3);
}

TEST(StreamDecoderTest, AbortAndMalformedChunks) {
  StreamDecoder abort(Api::kNative);
  abort.OnEvent(
      R"({"text":"","meta_info":{"finish_reason":{"type":"abort","message":"queue full"},"completion_tokens":0}})");
  EXPECT_EQ(abort.error(), "server aborted the request: queue full");
  StreamDecoder openai_abort(Api::kOpenAi);
  openai_abort.OnEvent(R"({"choices":[{"index":0,"text":"","finish_reason":"abort"}]})");
  EXPECT_EQ(openai_abort.error(), "server aborted the request (finish_reason \"abort\")");
  StreamDecoder malformed(Api::kNative);
  malformed.OnEvent(R"({"text": "unterminated)");
  EXPECT_EQ(malformed.error(),
            "malformed stream event (expected a JSON object or [DONE]): {\"text\": \"unterminated");
  StreamDecoder wrong_types(Api::kNative);
  EXPECT_FALSE(wrong_types.OnEvent(
      R"({"object":5,"text":7,"output_ids":"x","meta_info":{"completion_tokens":"1","prompt_tokens":1e300}})"));
  EXPECT_FALSE(wrong_types.failed());
  EXPECT_EQ(wrong_types.prompt_tokens(), -1);
}

TEST(StreamDecoderTest, IgnoresEventsAfterDone) {
  StreamDecoder d(Api::kNative);
  d.OnEvent("[DONE]");
  EXPECT_FALSE(d.OnEvent(R"({"text":"late","meta_info":{"completion_tokens":1}})"));
  EXPECT_TRUE(d.done());
  EXPECT_FALSE(d.token_seen());
}

}  // namespace
}  // namespace ppsearch::loadgen

namespace ppsearch::loadgen {
namespace {

std::vector<int64_t> EventTokens(Api api, const std::vector<std::string>& events) {
  StreamDecoder d(api);
  std::vector<int64_t> out;
  for (const std::string& e : events) {
    d.OnEvent(e);
    out.push_back(d.event_tokens());
  }
  return out;
}

TEST(StreamDecoderTest, EventTokensFollowTheServersRunningCount) {
  // Native cumulative chunks: the count rises 1, 3 (two tokens at once),
  // stays (a text-only repeat adds none), 4.
  EXPECT_EQ(EventTokens(Api::kNative,
                        {R"({"text":"a","meta_info":{"completion_tokens":1}})",
                         R"({"text":"abc","meta_info":{"completion_tokens":3}})",
                         R"({"text":"abc","meta_info":{"completion_tokens":3}})",
                         R"({"text":"abcd","meta_info":{"completion_tokens":4}})", "[DONE]"}),
            (std::vector<int64_t>{1, 2, 0, 1, 0}));
  // Incremental ids without a count; text without any count is one token.
  EXPECT_EQ(EventTokens(Api::kNative, {R"({"output_ids":[7]})", R"({"output_ids":[8,9]})"}),
            (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(EventTokens(Api::kNative, {R"({"text":"x"})", R"({"text":"y"})"}),
            (std::vector<int64_t>{1, 1}));
  // OpenAI: one per text chunk; the final usage-only chunk adds none; a
  // text chunk with a running usage count takes its rise.
  EXPECT_EQ(
      EventTokens(Api::kOpenAi, {R"({"choices":[{"text":""}]})", R"({"choices":[{"text":"a"}]})",
                                 R"({"choices":[{"text":"b"}]})",
                                 R"({"choices":[],"usage":{"completion_tokens":2}})"}),
      (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(EventTokens(Api::kOpenAi,
                        {R"({"choices":[{"text":"a"}],"usage":{"completion_tokens":1}})",
                         R"({"choices":[{"text":"bcd"}],"usage":{"completion_tokens":4}})"}),
            (std::vector<int64_t>{1, 3}));
}

}  // namespace
}  // namespace ppsearch::loadgen
