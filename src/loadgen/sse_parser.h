#pragma once
// Incremental parser for a text/event-stream body, the framing SGLang's
// /generate and /v1/completions stream in ("data: <json>\n\n"). Bytes may
// arrive split anywhere: inside "data:", inside the JSON, between "\r" and
// "\n", inside the blank line that ends an event. Follows the WHATWG
// server-sent events rules: lines end in "\n", "\r\n" or "\r"; a blank line
// dispatches the event; several "data:" lines join with "\n"; one space after
// the colon is dropped; comments (":...") and other fields are ignored.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ppsearch::loadgen {

class SseParser {
 public:
  // An event (or line) larger than this is an error, so a runaway stream
  // cannot exhaust memory.
  static constexpr size_t kDefaultMaxEventBytes = size_t{64} << 20;

  explicit SseParser(size_t max_event_bytes = kDefaultMaxEventBytes)
      : max_event_bytes_(max_event_bytes) {}

  // Consumes `bytes` and appends the data of every event they complete to
  // `events`. Returns false once the stream is malformed (see error());
  // after that, input is ignored.
  bool Feed(std::string_view bytes, std::vector<std::string>& events);

  // True when bytes of an unfinished event are buffered: a stream that ends
  // here was cut mid-event.
  bool has_partial_event() const { return !line_.empty() || has_data_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  void ProcessLine(std::vector<std::string>& events);

  size_t max_event_bytes_;
  std::string line_;  // the current line, without its terminator
  std::string data_;  // data lines of the current event, each followed by '\n'
  bool has_data_ = false;
  bool after_cr_ = false;  // the last byte was '\r': a following '\n' belongs to it
  std::string error_;
};

}  // namespace ppsearch::loadgen
