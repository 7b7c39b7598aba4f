#include "run/redact.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ppsearch::run {
namespace {

bool WordChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '-' || c == '.' || c == '/' || c == '+';
}

// Whether `value` stands at `at` of `text` as a whole word.
bool WholeWordAt(const std::string& text, size_t at, const std::string& value) {
  if (text.compare(at, value.size(), value) != 0) return false;
  const size_t end = at + value.size();
  return (at == 0 || !WordChar(text[at - 1])) && (end >= text.size() || !WordChar(text[end]));
}

// Replaces `value` where it directly follows `name` and a separator
// (=, space, colon, quotes): the assignment, however the program spelled it.
void RedactAssignments(std::string& text, const std::string& name, const std::string& value) {
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    if (at > 0 && WordChar(text[at - 1]) && text[at - 1] != '-') continue;
    size_t v = at + name.size();
    int separators = 0;
    while (
        v < text.size() && separators < 4 &&
        (text[v] == '=' || text[v] == ' ' || text[v] == ':' || text[v] == '\'' || text[v] == '"')) {
      ++v;
      ++separators;
    }
    if (separators == 0 || !WholeWordAt(text, v, value)) continue;
    text.replace(v, value.size(), kRedacted);
  }
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

Redactor::Redactor(const spec::Spec& spec) {
  for (const auto& [name, value] : spec.engine.env)
    if (!value.empty() && value != kRedacted && IsSecretEnvName(name, spec.engine))
      secrets_.push_back({{name, "engine.env." + name}, value});
  auto add_args = [&](const std::vector<std::pair<std::string, spec::ArgValue>>& args,
                      const std::string& table) {
    for (const auto& [flag, value] : args)
      if (!value.text.empty() && value.text != kRedacted && spec::IsSecretFlag(flag)) {
        std::string attribute = flag;  // SGLang prints its arguments as api_key='...'
        std::replace(attribute.begin(), attribute.end(), '-', '_');
        secrets_.push_back({{"--" + flag, attribute, table + "." + flag}, value.text});
      }
  };
  add_args(spec.engine.args, "engine.args");
  // A disaggregated deployment's pools add flags of their own.
  if (spec.disaggregation) {
    add_args(spec.disaggregation->prefill.args, "sweep.prefill.args");
    add_args(spec.disaggregation->decode.args, "sweep.decode.args");
  }
  std::sort(secrets_.begin(), secrets_.end(),
            [](const Secret& a, const Secret& b) { return a.value.size() > b.value.size(); });
}

std::string Redactor::Apply(std::string text) const {
  for (const Secret& s : secrets_) {
    for (const std::string& name : s.names) RedactAssignments(text, name, s.value);
  }
  return text;
}

std::string Redactor::ToJsonText() const {
  nlohmann::json j = nlohmann::json::array();
  for (const Secret& s : secrets_) j.push_back({{"names", s.names}, {"value", s.value}});
  return j.dump();
}

Result<Redactor> Redactor::FromJsonText(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  const std::string expected =
      std::string(kRedactSecretsVariable) +
      " must be a JSON array of {\"names\": [strings], \"value\": string} objects";
  if (!j.is_array()) return MakeError(expected);
  Redactor r;
  for (const nlohmann::json& e : j) {
    if (!e.is_object() || !e.contains("names") || !e["names"].is_array() || !e.contains("value") ||
        !e["value"].is_string() || e["value"].get<std::string>().empty())
      return MakeError(expected);
    Secret s;
    s.value = e["value"].get<std::string>();
    for (const nlohmann::json& n : e["names"]) {
      if (!n.is_string() || n.get<std::string>().empty()) return MakeError(expected);
      s.names.push_back(n.get<std::string>());
    }
    r.secrets_.push_back(std::move(s));
  }
  return r;
}

std::string SecretArgVariable(const std::string& flag) {
  std::string name = Upper(flag);
  std::replace(name.begin(), name.end(), '-', '_');
  return "PPSEARCH_SECRET_" + name;
}

Status RestoreSecrets(spec::Spec& spec) {
  for (auto& [name, value] : spec.engine.env) {
    if (value != kRedacted) continue;
    const char* from_env = std::getenv(name.c_str());
    if (from_env == nullptr)
      return MakeError("engine.env." + name +
                       " is a secret and the run's copy of the spec holds it redacted; export " +
                       name + " in the environment of `ppsearch run --resume`");
    value = from_env;
  }
  auto restore = [](std::vector<std::pair<std::string, spec::ArgValue>>& args,
                    const std::string& table) -> Status {
    for (auto& [flag, value] : args) {
      if (value.text != kRedacted) continue;
      const std::string variable = SecretArgVariable(flag);
      const char* from_env = std::getenv(variable.c_str());
      if (from_env == nullptr)
        return MakeError(table + "." + flag +
                         " is a secret and the run's copy of the spec holds it redacted; export " +
                         variable + " in the environment of `ppsearch run --resume`");
      value.text = from_env;
    }
    return Status::Ok();
  };
  PPS_RETURN_IF_ERROR(restore(spec.engine.args, "engine.args"));
  if (spec.disaggregation) {
    PPS_RETURN_IF_ERROR(restore(spec.disaggregation->prefill.args, "sweep.prefill.args"));
    PPS_RETURN_IF_ERROR(restore(spec.disaggregation->decode.args, "sweep.decode.args"));
  }
  return Status::Ok();
}

}  // namespace ppsearch::run
