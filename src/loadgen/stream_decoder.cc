#include "loadgen/stream_decoder.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

namespace ppsearch::loadgen {
namespace {

using nlohmann::json;

// Integer member `key` of object `obj`, or -1.
int64_t IntField(const json& obj, const char* key) {
  if (!obj.is_object()) return -1;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return -1;
  if (it->is_number_unsigned())
    return static_cast<int64_t>(std::min<uint64_t>(it->get<uint64_t>(), INT64_MAX));
  if (it->is_number_integer()) return it->get<int64_t>();
  const double d = it->get<double>();
  return d >= 0 && d < 9e18 ? static_cast<int64_t>(d) : -1;
}

// String member `key` of object `obj`, or "".
std::string StringField(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

bool NonEmptyString(const json& obj, const char* key) {
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

// The message of an error object: {"error": {"message": ...}},
// {"error": "..."} or OpenAI's {"object": "error", "message": ...}.
std::string ErrorMessage(const json& chunk) {
  const json* e = &chunk;
  if (auto it = chunk.find("error"); it != chunk.end()) {
    if (it->is_string()) return it->get<std::string>();
    e = &*it;
  }
  std::string msg = "server sent an error";
  if (e->is_object()) {
    if (auto m = e->find("message"); m != e->end() && m->is_string())
      msg += ": " + m->get<std::string>();
    if (auto c = e->find("code"); c != e->end() && !c->is_null())
      msg += " (code " + c->dump() + ")";
  }
  return msg;
}

std::string Excerpt(std::string_view data) {
  constexpr size_t kMax = 80;
  return std::string(data.substr(0, kMax)) + (data.size() > kMax ? "..." : "");
}

}  // namespace

int64_t StreamDecoder::completion_tokens() const {
  return reported_completion_tokens_ >= 0 ? reported_completion_tokens_ : counted_tokens_;
}

void StreamDecoder::Fail(std::string message) {
  if (error_.empty()) error_ = std::move(message);
}

bool StreamDecoder::OnEvent(std::string_view data) {
  event_tokens_ = 0;
  if (done_) return false;
  if (data == "[DONE]") {
    done_ = true;
    return false;
  }
  const json chunk = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!chunk.is_object()) {
    Fail("malformed stream event (expected a JSON object or [DONE]): " + Excerpt(data));
    return false;
  }
  if (chunk.contains("error") || StringField(chunk, "object") == "error") {
    Fail(ErrorMessage(chunk));
    return false;
  }
  const bool had_token = token_seen_;
  const bool has_token = api_ == Api::kNative ? OnNative(chunk) : OnOpenAi(chunk);
  if (has_token) token_seen_ = true;
  streamed_tokens_ += event_tokens_;
  return has_token && !had_token;
}

bool StreamDecoder::OnNative(const json& chunk) {
  bool token = NonEmptyString(chunk, "text");
  const json* meta = nullptr;
  if (auto it = chunk.find("meta_info"); it != chunk.end() && it->is_object()) meta = &*it;
  int64_t completion = -1;
  if (meta != nullptr) {
    if (int64_t p = IntField(*meta, "prompt_tokens"); p >= 0) prompt_tokens_ = p;
    if (auto ts = meta->find("first_token_ts"); server_first_token_unix_s_ < 0 &&
                                                ts != meta->end() && ts->is_number() &&
                                                ts->get<double>() > 0)
      server_first_token_unix_s_ = ts->get<double>();
    completion = IntField(*meta, "completion_tokens");
    if (completion >= 0) {
      reported_completion_tokens_ = std::max(reported_completion_tokens_, completion);
      token = token || completion >= 1;
    }
    if (auto f = meta->find("finish_reason"); f != meta->end() && f->is_object()) {
      if (StringField(*f, "type") == "abort") {
        std::string msg = "server aborted the request";
        if (auto m = f->find("message"); m != f->end() && m->is_string())
          msg += ": " + m->get<std::string>();
        Fail(msg);
      }
    }
  }
  if (auto it = chunk.find("output_ids"); it != chunk.end() && it->is_array() && !it->empty()) {
    token = true;
    if (completion < 0) {
      // No count from the server: infer cumulative vs incremental chunks.
      std::vector<int64_t> ids;
      ids.reserve(it->size());
      for (const auto& id : *it) ids.push_back(id.is_number_integer() ? id.get<int64_t>() : -1);
      const bool extends = ids.size() > last_ids_.size() &&
                           std::equal(last_ids_.begin(), last_ids_.end(), ids.begin());
      if (!last_ids_.empty() && !extends) ids_cumulative_ = false;
      counted_tokens_ = ids_cumulative_ ? static_cast<int64_t>(ids.size())
                                        : counted_tokens_ + static_cast<int64_t>(ids.size());
      last_ids_ = std::move(ids);
    }
  }
  if (token) {
    const int64_t count = std::max(reported_completion_tokens_, counted_tokens_);
    const bool counted = reported_completion_tokens_ >= 0 || counted_tokens_ > 0;
    event_tokens_ = count > streamed_tokens_ ? count - streamed_tokens_ : (counted ? 0 : 1);
  }
  return token;
}

bool StreamDecoder::OnOpenAi(const json& chunk) {
  bool token = false;
  if (auto it = chunk.find("choices"); it != chunk.end() && it->is_array() && !it->empty()) {
    const json& choice = (*it)[0];
    if (NonEmptyString(choice, "text")) {
      token = true;
      ++counted_tokens_;
      event_tokens_ = 1;
    }
    if (StringField(choice, "finish_reason") == "abort") {
      Fail("server aborted the request (finish_reason \"abort\")");
    }
  }
  if (auto it = chunk.find("usage"); it != chunk.end() && it->is_object()) {
    if (int64_t p = IntField(*it, "prompt_tokens"); p >= 0) prompt_tokens_ = p;
    if (int64_t c = IntField(*it, "completion_tokens"); c >= 0) {
      reported_completion_tokens_ = std::max(reported_completion_tokens_, c);
      if (event_tokens_ > 0 && c > streamed_tokens_ + 1) event_tokens_ = c - streamed_tokens_;
      token = token || c >= 1;
    }
  }
  return token;
}

}  // namespace ppsearch::loadgen
