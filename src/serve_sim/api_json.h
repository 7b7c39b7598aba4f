#pragma once
// The JSON of SGLang's HTTP API as serve-sim speaks it: parsing /generate and
// /v1/completions bodies, and building the cumulative /generate chunks and
// OpenAI text_completion chunks (sglang.md section 4). Pure functions.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "util/result.h"

namespace ppsearch::serve_sim {

// Deterministic stand-in for a tokenizer: each whitespace-separated word is
// ceil(bytes / 4) tokens; any non-empty text is at least one token.
int64_t CountTextTokens(const std::string& text);

// The simulated model's output: token i of every request is id
// kOutputTokenBase + i % 1000 and reads as " tok".
inline constexpr int64_t kOutputTokenBase = 1000;
std::string OutputText(int64_t tokens);

struct GenerateRequest {
  int64_t prompt_tokens = 0;
  int64_t max_new_tokens = 128;
  bool stream = false;
  bool ignore_eos = false;
  std::string rid;  // the client's id, or empty
};

// POST /generate. Errors are the message of SGLang's 400 answer.
Result<GenerateRequest> ParseGenerateRequest(const std::string& body);

// What SGLang's PD router adds to a request's body for the servers of a
// disaggregated deployment (GenerateReqInput's bootstrap_host,
// bootstrap_port, bootstrap_room; the OpenAI routes take them too): which
// prefill server's bootstrap port the KV is fetched from, and the room
// both servers know the request by.
struct PdFields {
  std::optional<uint64_t> room;  // none: the body has no bootstrap_room
  std::string host;
  int port = 0;
  std::string rid;
};

// Reads them from a request body (a JSON object); the error names a field
// of the wrong type.
Result<PdFields> ParsePdFields(const std::string& body);

struct CompletionRequest {
  std::string model;
  int64_t prompt_tokens = 0;
  int64_t max_tokens = 16;
  bool stream = false;
  bool include_usage = false;
};

// POST /v1/completions; `prompt` is a string or a list of token ids.
Result<CompletionRequest> ParseCompletionRequest(const std::string& body);

struct ChatRequest {
  std::string model;
  int64_t prompt_tokens = 0;  // the messages' text, no chat template
  int64_t max_tokens = 128;   // max_completion_tokens, else max_tokens
  bool stream = false;
  bool include_usage = false;
};

// POST /v1/chat/completions: `messages` of {role, content}, content a string
// or a list of {"type": "text", "text"} parts.
Result<ChatRequest> ParseChatRequest(const std::string& body);

// Everything a /generate chunk reports about a request at one moment.
struct GenerateState {
  std::string id;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  bool finished = false;
  double first_token_ts = 0;  // server Unix time of the first token (0: none yet)
  double first_sent_ts = 0;   // response_sent_to_client_ts
  double e2e_latency_s = 0;   // only on the last chunk
  // Simulated request times (wall = simulated / --time-scale), last chunk only:
  // what `ppsearch simulate` would record for this request.
  double sim_ttft_s = 0;
  double sim_e2e_latency_s = 0;
};

// SGLang's cumulative chunk: {"text", "output_ids", "meta_info": {...}}.
nlohmann::json GenerateChunk(const GenerateState& s);

// "data: <json>\n\n" and "data: [DONE]\n\n".
std::string SseEvent(const nlohmann::json& j);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

// {"error": {"message", "type", "code", "retryable"}} as SGLang sends it.
nlohmann::json ErrorJson(const std::string& message, int code);
// SGLang's OpenAI-route ErrorResponse, flat: {"object": "error", "message",
// "type" (BadRequestError, InternalServerError, ServiceUnavailableError),
// "param": null, "code"}. A stream carries it as {"error": <this>}.
nlohmann::json OpenAiErrorJson(const std::string& message, int code);

// SGLang's refusal (tokenizer_manager's request validation) of a prompt at or
// past the context length, or of one whose max_new_tokens takes it there
// (prompt + max_new_tokens >= context_len); "" when the request fits or
// context_len is 0 (no limit).
std::string ContextLengthError(int64_t prompt_tokens, int64_t max_new_tokens, int64_t context_len);

// text_completion chunk with a text delta; finish_reason "length" when
// `finished`; "usage": null (the usage chunk comes last, on its own).
nlohmann::json CompletionChunk(const std::string& id, int64_t created, const std::string& model,
                               const std::string& delta, bool finished);
nlohmann::json CompletionUsage(int64_t prompt_tokens, int64_t completion_tokens);
// The final `choices: []` chunk of stream_options.include_usage.
nlohmann::json CompletionUsageChunk(const std::string& id, int64_t created,
                                    const std::string& model, int64_t prompt_tokens,
                                    int64_t completion_tokens);
// chat.completion.chunk: the first carries delta {"role": "assistant", "content": ""},
// later ones the content delta; finish_reason null; "usage": null.
nlohmann::json ChatChunk(const std::string& id, int64_t created, const std::string& model,
                         bool role_chunk, const std::string& content);
// The chunk after the last content, as SGLang's OpenAI adapter sends it: an
// empty delta (every field null) and finish_reason "length".
nlohmann::json ChatFinishChunk(const std::string& id, int64_t created, const std::string& model);
// The final `choices: []` chunk of stream_options.include_usage.
nlohmann::json ChatUsageChunk(const std::string& id, int64_t created, const std::string& model,
                              int64_t prompt_tokens, int64_t completion_tokens);
// The non-streaming chat.completion.
nlohmann::json ChatResponse(const std::string& id, int64_t created, const std::string& model,
                            int64_t prompt_tokens, int64_t completion_tokens);

// GET /v1/models: the OpenAI list with one model, id = the served model path.
nlohmann::json ModelList(const std::string& model_path, int64_t created, int64_t max_model_len);

// The non-streaming answer.
nlohmann::json CompletionResponse(const std::string& id, int64_t created, const std::string& model,
                                  int64_t prompt_tokens, int64_t completion_tokens);

}  // namespace ppsearch::serve_sim
