// libFuzzer target: the SSE parser and the stream decoder on arbitrary bytes,
// split at a point chosen by the input, for both APIs. Crashes, sanitizer
// reports and broken invariants fail the run.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "loadgen/sse_parser.h"
#include "loadgen/stream_decoder.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// Parses `bytes` in pieces of at most `piece` bytes; returns the events.
std::vector<std::string> ParseInPieces(std::string_view bytes, size_t piece, bool& failed) {
  ppsearch::loadgen::SseParser parser(/*max_event_bytes=*/1 << 16);
  std::vector<std::string> events;
  for (size_t pos = 0; pos < bytes.size(); pos += piece) {
    if (!parser.Feed(bytes.substr(pos, piece), events)) break;
  }
  failed = parser.failed();
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 16;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  bool failed_whole = false, failed_pieces = false;
  const std::vector<std::string> whole = ParseInPieces(bytes, bytes.size() + 1, failed_whole);
  const std::vector<std::string> pieces = ParseInPieces(bytes, piece, failed_pieces);
  // Where bytes split must not change what the parser sees.
  Check(failed_whole == failed_pieces);
  if (!failed_whole) Check(whole == pieces);
  for (auto api : {ppsearch::loadgen::Api::kNative, ppsearch::loadgen::Api::kOpenAi}) {
    ppsearch::loadgen::StreamDecoder decoder(api);
    int first_tokens = 0;
    for (const auto& event : whole) first_tokens += decoder.OnEvent(event) ? 1 : 0;
    Check(first_tokens <= 1);
    Check(decoder.token_seen() == (first_tokens == 1));
    Check(decoder.completion_tokens() >= 0);
  }
  return 0;
}
