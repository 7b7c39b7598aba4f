#include "loadgen/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loadgen/captured_streams_testing.h"

namespace ppsearch::loadgen {
namespace {

std::vector<std::string> ParseSplit(const std::string& bytes, size_t split) {
  SseParser parser;
  std::vector<std::string> events;
  EXPECT_TRUE(parser.Feed(std::string_view(bytes).substr(0, split), events));
  EXPECT_TRUE(parser.Feed(std::string_view(bytes).substr(split), events));
  EXPECT_FALSE(parser.has_partial_event());
  return events;
}

std::vector<std::string> ParseBytewise(const std::string& bytes) {
  SseParser parser;
  std::vector<std::string> events;
  for (char c : bytes) EXPECT_TRUE(parser.Feed(std::string_view(&c, 1), events));
  return events;
}

TEST(SseParserTest, NativeStreamEvents) {
  const std::vector<std::string> events = ParseSplit(testdata::kNativeCumulative, 0);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].substr(0, 16), "{\"text\":\" The\",\"");
  EXPECT_EQ(events[3], "[DONE]");
}

TEST(SseParserTest, EverySplitPointGivesTheSameEvents) {
  for (const char* stream : {testdata::kNativeCumulative, testdata::kNativeIncremental,
                             testdata::kOpenAiCompletion, testdata::kNativeError}) {
    const std::string bytes = stream;
    const std::vector<std::string> whole = ParseSplit(bytes, bytes.size());
    for (size_t split = 0; split <= bytes.size(); ++split) {
      ASSERT_EQ(ParseSplit(bytes, split), whole) << "split at " << split;
    }
    EXPECT_EQ(ParseBytewise(bytes), whole);
  }
}

TEST(SseParserTest, CrLfAndCrLineEndsAtEverySplit) {
  const std::string crlf = "data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n";
  const std::string cr = "data: {\"a\":1}\r\rdata: [DONE]\r\r";
  for (const std::string& bytes : {crlf, cr}) {
    for (size_t split = 0; split <= bytes.size(); ++split) {
      EXPECT_EQ(ParseSplit(bytes, split), (std::vector<std::string>{"{\"a\":1}", "[DONE]"}))
          << "split at " << split;
    }
  }
}

TEST(SseParserTest, FieldRules) {
  SseParser parser;
  std::vector<std::string> events;
  ASSERT_TRUE(
      parser.Feed(": keep-alive comment\n\n"
                  "event: message\nid: 7\nretry: 10\ndata:no-space\n\n"
                  "data: line one\ndata: line two\n\n"
                  "data\n\n"
                  "data:  two spaces\n\n",
                  events));
  EXPECT_EQ(events,
            (std::vector<std::string>{"no-space", "line one\nline two", "", " two spaces"}));
}

TEST(SseParserTest, UnterminatedEventIsPartial) {
  SseParser parser;
  std::vector<std::string> events;
  ASSERT_TRUE(parser.Feed("data: {\"text\":\"a\"}\n", events));
  EXPECT_TRUE(events.empty());
  EXPECT_TRUE(parser.has_partial_event());
}

TEST(SseParserTest, OversizedEventIsAnError) {
  SseParser parser(/*max_event_bytes=*/64);
  std::vector<std::string> events;
  EXPECT_TRUE(parser.Feed("data: short\n\n", events));
  EXPECT_FALSE(parser.Feed("data: " + std::string(100, 'x'), events));
  EXPECT_EQ(parser.error(), "server-sent event larger than 64 bytes");
  EXPECT_FALSE(parser.Feed("\n\n", events));
  EXPECT_EQ(events.size(), 1u);
}

}  // namespace
}  // namespace ppsearch::loadgen
