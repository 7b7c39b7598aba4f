#pragma once
// Reads the meaning out of one streamed response's events: when the first
// generated token arrived, how many prompt and output tokens the server
// counted, whether the stream finished ("[DONE]") or carried an error.
//
// A "token" chunk (what TTFT waits for) is one that carries generated output,
// never an empty or role-only chunk:
//   native: meta_info.completion_tokens >= 1, or non-empty output_ids or text;
//   openai: non-empty choices[0].text, or usage.completion_tokens >= 1.
// Works with cumulative chunks (SGLang's default: text and output_ids hold
// everything so far) and incremental ones (--incremental-streaming-output).

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "loadgen/api_kind.h"

namespace ppsearch::loadgen {

class StreamDecoder {
 public:
  explicit StreamDecoder(Api api) : api_(api) {}

  // Interprets the data of one event. Returns true when this event carried
  // the first generated token of the response.
  bool OnEvent(std::string_view data);

  bool done() const { return done_; }  // "data: [DONE]" arrived
  bool token_seen() const { return token_seen_; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }       // first error; "" if none
  int64_t prompt_tokens() const { return prompt_tokens_; }  // -1: not reported
  int64_t completion_tokens() const;
  // Generated tokens the last event added (0 for one that carried none):
  // native: the rise of the server's running count (meta_info.
  // completion_tokens, else output ids), or 1 for a token chunk without a
  // count; openai: 1 per chunk with text, or the rise of usage.
  // completion_tokens where a text chunk carries usage. A usage-only chunk
  // (the final one of include_usage) adds none, as it carries no text.
  int64_t event_tokens() const { return event_tokens_; }
  // meta_info.first_token_ts: the server's own Unix time of the first token
  // (serve-sim reports it), to check a client's TTFT against; -1: not given.
  double server_first_token_unix_s() const { return server_first_token_unix_s_; }

 private:
  bool OnNative(const nlohmann::json& chunk);
  bool OnOpenAi(const nlohmann::json& chunk);
  void Fail(std::string message);

  Api api_;
  bool done_ = false;
  bool token_seen_ = false;
  std::string error_;
  int64_t prompt_tokens_ = -1;
  int64_t reported_completion_tokens_ = -1;  // from meta_info or usage
  double server_first_token_unix_s_ = -1;
  // Fallback count when the server reports none: output ids (native; summed
  // while chunks look incremental, the last length once they look
  // cumulative) or non-empty text chunks (openai).
  int64_t counted_tokens_ = 0;
  bool ids_cumulative_ = true;
  std::vector<int64_t> last_ids_;
  int64_t event_tokens_ = 0;
  int64_t streamed_tokens_ = 0;  // the sum of event_tokens over the events so far
};

}  // namespace ppsearch::loadgen
