#include "serve_sim/api_json.h"

#include <map>
#include <string>

namespace ppsearch::serve_sim {
namespace {

// A request body: its JSON with every top-level array of token ids
// ("input_ids", "prompt") left empty, each counted and checked as it was
// read instead. Built as JSON values, a prompt of n ids costs n values
// made and freed per request: most of serve-sim's time per request at a
// few hundred tokens.
struct Body {
  struct Ids {
    int64_t count = 0;
    std::string error;  // the first problem met; empty when none
  };
  nlohmann::json json;
  std::map<std::string, Ids> ids;  // by key
};

bool IsTokenListKey(const std::string& key) { return key == "input_ids" || key == "prompt"; }

Result<Body> ParseObject(const std::string& body) {
  using Event = nlohmann::json::parse_event_t;
  Body out;
  std::string key;            // the top-level key being read
  Body::Ids* list = nullptr;  // the token list being read
  const auto read = [&](int depth, Event event, nlohmann::json& parsed) -> bool {
    if (depth == 1 && event == Event::key) {
      key = parsed.get<std::string>();
      return true;
    }
    if (depth == 1 && event == Event::array_start && IsTokenListKey(key)) {
      list = &out.ids[key];
      *list = {};
      return true;
    }
    if (depth == 1 && event == Event::array_end) list = nullptr;
    if (list == nullptr || depth != 2) return true;
    if (event == Event::array_start || event == Event::object_start) {
      if (list->error.empty())
        list->error = key + " must be a flat list of integer token ids (batches are not supported)";
      return true;
    }
    if (event == Event::array_end || event == Event::object_end) return false;  // dropped
    if (event != Event::value) return true;
    if (list->error.empty()) {
      if (!parsed.is_number_integer()) {
        list->error = key + " must be a flat list of integer token ids (batches are not supported)";
      } else if (parsed.get<int64_t>() < 0) {
        // SGLang would index its embedding table with it.
        list->error = key + " must hold token ids of 0 or more; " + key + "[" +
                      std::to_string(list->count) + "] is " + std::to_string(parsed.get<int64_t>());
      }
    }
    ++list->count;
    return false;  // counted, not kept
  };
  out.json = nlohmann::json::parse(body, read, /*allow_exceptions=*/false);
  if (out.json.is_discarded()) return MakeError("request body is not valid JSON");
  if (!out.json.is_object()) return MakeError("request body must be a JSON object");
  return out;
}

// The number of token ids under `key` of `body` (an array ParseObject counted).
Result<int64_t> TokenList(const Body& body, const char* key) {
  const auto it = body.ids.find(key);
  if (!body.json.contains(key) || !body.json.at(key).is_array() || it == body.ids.end())
    return MakeError(std::string(key) + " must be a list of token ids");
  if (!it->second.error.empty()) return MakeError(it->second.error);
  return it->second.count;
}

Result<int64_t> PositiveInt(const nlohmann::json& obj, const char* key, int64_t fallback) {
  if (!obj.contains(key) || obj[key].is_null()) return fallback;
  if (!obj[key].is_number_integer() || obj[key].get<int64_t>() < 0)
    return MakeError(std::string(key) + " must be a non-negative integer");
  return obj[key].get<int64_t>();
}

}  // namespace

int64_t CountTextTokens(const std::string& text) {
  int64_t tokens = 0;
  int64_t word = 0;
  auto flush = [&] {
    tokens += (word + 3) / 4;
    word = 0;
  };
  for (unsigned char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      flush();
    } else {
      ++word;
    }
  }
  flush();
  return text.empty() ? 0 : std::max<int64_t>(tokens, 1);
}

std::string OutputText(int64_t tokens) {
  std::string s;
  s.reserve(static_cast<size_t>(tokens) * 4);
  for (int64_t i = 0; i < tokens; ++i) s += " tok";
  return s;
}

Result<GenerateRequest> ParseGenerateRequest(const std::string& body) {
  auto parsed = ParseObject(body);
  if (!parsed) return parsed.error();
  const nlohmann::json* j = &parsed->json;
  GenerateRequest r;
  if (j->contains("input_ids") && !(*j)["input_ids"].is_null()) {
    auto n = TokenList(*parsed, "input_ids");
    if (!n) return n.error();
    r.prompt_tokens = *n;
  } else if (j->contains("text") && (*j)["text"].is_string()) {
    r.prompt_tokens = CountTextTokens((*j)["text"].get<std::string>());
  } else {
    return MakeError("Either text, input_ids or input_embeds should be provided.");
  }
  if (r.prompt_tokens <= 0) return MakeError("The input is empty.");
  if (j->contains("sampling_params")) {
    const auto& sp = (*j)["sampling_params"];
    if (!sp.is_object()) return MakeError("sampling_params must be an object");
    auto max_new = PositiveInt(sp, "max_new_tokens", 128);
    if (!max_new) return max_new.error();
    r.max_new_tokens = *max_new;
    if (sp.contains("ignore_eos") && sp["ignore_eos"].is_boolean())
      r.ignore_eos = sp["ignore_eos"].get<bool>();
  }
  if (j->contains("stream") && (*j)["stream"].is_boolean()) r.stream = (*j)["stream"].get<bool>();
  if (j->contains("rid") && (*j)["rid"].is_string()) r.rid = (*j)["rid"].get<std::string>();
  return r;
}

Result<PdFields> ParsePdFields(const std::string& body) {
  auto parsed = ParseObject(body);
  if (!parsed) return parsed.error();
  const nlohmann::json& j = parsed->json;
  PdFields f;
  if (j.contains("bootstrap_room") && !j["bootstrap_room"].is_null()) {
    if (!j["bootstrap_room"].is_number_unsigned())
      return MakeError("bootstrap_room must be a non-negative integer");
    f.room = j["bootstrap_room"].get<uint64_t>();
  }
  if (j.contains("bootstrap_host") && !j["bootstrap_host"].is_null()) {
    if (!j["bootstrap_host"].is_string()) return MakeError("bootstrap_host must be a string");
    f.host = j["bootstrap_host"].get<std::string>();
  }
  if (j.contains("bootstrap_port") && !j["bootstrap_port"].is_null()) {
    if (!j["bootstrap_port"].is_number_integer() || j["bootstrap_port"].get<int64_t>() < 1 ||
        j["bootstrap_port"].get<int64_t>() > 65535)
      return MakeError("bootstrap_port must be a TCP port");
    f.port = j["bootstrap_port"].get<int>();
  }
  if (j.contains("rid") && j["rid"].is_string()) f.rid = j["rid"].get<std::string>();
  return f;
}

Result<CompletionRequest> ParseCompletionRequest(const std::string& body) {
  auto parsed = ParseObject(body);
  if (!parsed) return parsed.error();
  const nlohmann::json* j = &parsed->json;
  CompletionRequest r;
  if (j->contains("model") && (*j)["model"].is_string()) r.model = (*j)["model"].get<std::string>();
  if (!j->contains("prompt")) return MakeError("prompt is required");
  const auto& prompt = (*j)["prompt"];
  if (prompt.is_string()) {
    r.prompt_tokens = CountTextTokens(prompt.get<std::string>());
  } else {
    auto n = TokenList(*parsed, "prompt");
    if (!n) return n.error();
    r.prompt_tokens = *n;
  }
  if (r.prompt_tokens <= 0) return MakeError("The input is empty.");
  auto max_tokens = PositiveInt(*j, "max_tokens", 16);
  if (!max_tokens) return max_tokens.error();
  r.max_tokens = *max_tokens;
  if (j->contains("stream") && (*j)["stream"].is_boolean()) r.stream = (*j)["stream"].get<bool>();
  if (j->contains("stream_options") && (*j)["stream_options"].is_object()) {
    const auto& so = (*j)["stream_options"];
    r.include_usage = so.contains("include_usage") && so["include_usage"].is_boolean() &&
                      so["include_usage"].get<bool>();
  }
  return r;
}

Result<ChatRequest> ParseChatRequest(const std::string& body) {
  auto parsed = ParseObject(body);
  if (!parsed) return parsed.error();
  const nlohmann::json* j = &parsed->json;
  ChatRequest r;
  if (j->contains("model") && (*j)["model"].is_string()) r.model = (*j)["model"].get<std::string>();
  if (!j->contains("messages") || !(*j)["messages"].is_array() || (*j)["messages"].empty())
    return MakeError("messages must be a non-empty list of {role, content}");
  for (const auto& m : (*j)["messages"]) {
    if (!m.is_object() || !m.contains("content")) return MakeError("each message needs a content");
    const auto& content = m["content"];
    if (content.is_string()) {
      r.prompt_tokens += CountTextTokens(content.get<std::string>());
    } else if (content.is_array()) {
      for (const auto& part : content)
        if (part.is_object() && part.contains("text") && part["text"].is_string())
          r.prompt_tokens += CountTextTokens(part["text"].get<std::string>());
    } else if (!content.is_null()) {
      return MakeError("message content must be a string or a list of parts");
    }
  }
  if (r.prompt_tokens <= 0) return MakeError("The input is empty.");
  const char* key = j->contains("max_completion_tokens") && !(*j)["max_completion_tokens"].is_null()
                        ? "max_completion_tokens"
                        : "max_tokens";
  auto max_tokens = PositiveInt(*j, key, 128);
  if (!max_tokens) return max_tokens.error();
  r.max_tokens = *max_tokens;
  if (j->contains("stream") && (*j)["stream"].is_boolean()) r.stream = (*j)["stream"].get<bool>();
  if (j->contains("stream_options") && (*j)["stream_options"].is_object()) {
    const auto& so = (*j)["stream_options"];
    r.include_usage = so.contains("include_usage") && so["include_usage"].is_boolean() &&
                      so["include_usage"].get<bool>();
  }
  return r;
}

nlohmann::json GenerateChunk(const GenerateState& s) {
  nlohmann::json ids = nlohmann::json::array();
  for (int64_t i = 0; i < s.completion_tokens; ++i) ids.push_back(kOutputTokenBase + i % 1000);
  nlohmann::json meta = {
      {"id", s.id},
      {"finish_reason", s.finished
                            ? nlohmann::json{{"type", "length"}, {"length", s.completion_tokens}}
                            : nlohmann::json(nullptr)},
      {"prompt_tokens", s.prompt_tokens},
      {"weight_version", "default"},
      {"num_retractions", 0},
      {"reasoning_tokens", 0},
      {"completion_tokens", s.completion_tokens},
      {"cached_tokens", 0},
      {"dp_rank", nullptr},
      {"response_sent_to_client_ts", s.first_sent_ts},
      {"first_token_ts", s.first_token_ts},
  };
  if (s.finished) {
    meta["e2e_latency"] = s.e2e_latency_s;
    meta["sim_ttft_s"] = s.sim_ttft_s;
    meta["sim_e2e_latency_s"] = s.sim_e2e_latency_s;
  }
  return {{"text", OutputText(s.completion_tokens)}, {"output_ids", ids}, {"meta_info", meta}};
}

std::string SseEvent(const nlohmann::json& j) { return "data: " + j.dump() + "\n\n"; }

nlohmann::json ErrorJson(const std::string& message, int code) {
  return {{"error",
           {{"message", message},
            {"type", code >= 500 ? "internal_server_error" : "invalid_request_error"},
            {"code", code},
            {"retryable", code >= 500}}}};
}

nlohmann::json OpenAiErrorJson(const std::string& message, int code) {
  const char* type = code == 503   ? "ServiceUnavailableError"
                     : code >= 500 ? "InternalServerError"
                                   : "BadRequestError";
  return {{"object", "error"},
          {"message", message},
          {"type", type},
          {"param", nullptr},
          {"code", code}};
}

std::string ContextLengthError(int64_t prompt_tokens, int64_t max_new_tokens, int64_t context_len) {
  if (context_len <= 0) return "";
  if (prompt_tokens >= context_len)
    return "The input (" + std::to_string(prompt_tokens) +
           " tokens) is longer than the model's context length (" + std::to_string(context_len) +
           " tokens).";
  if (prompt_tokens + max_new_tokens < context_len) return "";
  return "Requested token count exceeds the model's maximum context length of " +
         std::to_string(context_len) + " tokens. You requested a total of " +
         std::to_string(prompt_tokens + max_new_tokens) +
         " tokens: " + std::to_string(prompt_tokens) + " tokens from the input messages and " +
         std::to_string(max_new_tokens) +
         " tokens for the completion. Please reduce the number of tokens in the input messages "
         "or the completion to fit within the limit.";
}

nlohmann::json CompletionChunk(const std::string& id, int64_t created, const std::string& model,
                               const std::string& delta, bool finished) {
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model},
          {"choices",
           {{{"index", 0},
             {"text", delta},
             {"logprobs", nullptr},
             {"finish_reason", finished ? nlohmann::json("length") : nlohmann::json(nullptr)},
             {"matched_stop", nullptr}}}},
          {"usage", nullptr}};
}

namespace {

nlohmann::json ChatStreamChunk(const std::string& id, int64_t created, const std::string& model,
                               nlohmann::json role, nlohmann::json content,
                               nlohmann::json finish_reason) {
  nlohmann::json delta = {{"role", std::move(role)},
                          {"content", std::move(content)},
                          {"reasoning_content", nullptr},
                          {"tool_calls", nullptr}};
  return {{"id", id},
          {"object", "chat.completion.chunk"},
          {"created", created},
          {"model", model},
          {"choices",
           {{{"index", 0},
             {"delta", std::move(delta)},
             {"logprobs", nullptr},
             {"finish_reason", std::move(finish_reason)},
             {"matched_stop", nullptr}}}},
          {"usage", nullptr}};
}

}  // namespace

nlohmann::json ChatChunk(const std::string& id, int64_t created, const std::string& model,
                         bool role_chunk, const std::string& content) {
  return ChatStreamChunk(id, created, model,
                         role_chunk ? nlohmann::json("assistant") : nlohmann::json(), content,
                         nullptr);
}

nlohmann::json ChatFinishChunk(const std::string& id, int64_t created, const std::string& model) {
  return ChatStreamChunk(id, created, model, nullptr, nullptr, "length");
}

nlohmann::json ChatUsageChunk(const std::string& id, int64_t created, const std::string& model,
                              int64_t prompt_tokens, int64_t completion_tokens) {
  nlohmann::json j = CompletionUsageChunk(id, created, model, prompt_tokens, completion_tokens);
  j["object"] = "chat.completion.chunk";
  return j;
}

nlohmann::json ChatResponse(const std::string& id, int64_t created, const std::string& model,
                            int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"id", id},
          {"object", "chat.completion"},
          {"created", created},
          {"model", model},
          {"choices",
           {{{"index", 0},
             {"message",
              {{"role", "assistant"},
               {"content", OutputText(completion_tokens)},
               {"reasoning_content", nullptr},
               {"tool_calls", nullptr}}},
             {"logprobs", nullptr},
             {"finish_reason", "length"},
             {"matched_stop", nullptr}}}},
          {"usage", CompletionUsage(prompt_tokens, completion_tokens)}};
}

nlohmann::json ModelList(const std::string& model_path, int64_t created, int64_t max_model_len) {
  return {{"object", "list"},
          {"data",
           {{{"id", model_path},
             {"object", "model"},
             {"created", created},
             {"owned_by", "sglang"},
             {"root", model_path},
             {"max_model_len", max_model_len}}}}};
}

nlohmann::json CompletionUsage(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"reasoning_tokens", 0}};
}

nlohmann::json CompletionUsageChunk(const std::string& id, int64_t created,
                                    const std::string& model, int64_t prompt_tokens,
                                    int64_t completion_tokens) {
  return {{"id", id},
          {"object", "text_completion"},
          {"created", created},
          {"model", model},
          {"choices", nlohmann::json::array()},
          {"usage", CompletionUsage(prompt_tokens, completion_tokens)}};
}

nlohmann::json CompletionResponse(const std::string& id, int64_t created, const std::string& model,
                                  int64_t prompt_tokens, int64_t completion_tokens) {
  nlohmann::json j = CompletionChunk(id, created, model, OutputText(completion_tokens), true);
  j["usage"] = CompletionUsage(prompt_tokens, completion_tokens);
  return j;
}

}  // namespace ppsearch::serve_sim
