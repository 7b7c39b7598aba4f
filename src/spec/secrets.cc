#include "spec/secrets.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "spec/toml_access.h"

namespace ppsearch::spec {
namespace {

// The words that make a name a secret's.
bool IsSecretWord(const std::string& upper) {
  for (const char* word : {"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIAL",
                           "CREDENTIALS", "AUTH"})
    if (upper == word) return true;
  return false;
}

// Splits at every character that is not a letter or digit.
bool HasSecretWord(const std::string& name) {
  std::string word;
  for (size_t i = 0; i <= name.size(); ++i) {
    const unsigned char c = i < name.size() ? static_cast<unsigned char>(name[i]) : '_';
    if (std::isalnum(c)) {
      word += static_cast<char>(std::toupper(c));
      continue;
    }
    if (IsSecretWord(word)) return true;
    word.clear();
  }
  return false;
}

// The secret paths ("engine", "env", "HF_TOKEN") present in `root`.
std::vector<std::vector<std::string>> SecretPaths(const toml::table& root,
                                                  const EngineSpec& engine) {
  std::vector<std::vector<std::string>> out;
  const toml::table* e = root["engine"].as_table();
  if (e == nullptr) return out;
  if (const toml::table* env = (*e)["env"].as_table())
    for (const auto& [k, v] : *env)
      if (IsSecretEnvName(std::string(k.str()), engine))
        out.push_back({"engine", "env", std::string(k.str())});
  if (const toml::table* args = (*e)["args"].as_table())
    for (const auto& [k, v] : *args)
      if (IsSecretFlag(std::string(k.str())))
        out.push_back({"engine", "args", std::string(k.str())});
  return out;
}

toml::node* At(toml::table& root, const std::vector<std::string>& path) {
  toml::node* n = &root;
  for (const auto& k : path) {
    toml::table* t = n->as_table();
    if (t == nullptr) return nullptr;
    n = t->get(k);
    if (n == nullptr) return nullptr;
  }
  return n;
}

// Byte offset of a 1-based line and column (columns count bytes here, which
// holds for ASCII lines; the re-parse below catches any other case).
size_t Offset(const std::string& text, uint32_t line, uint32_t column) {
  size_t at = 0;
  for (uint32_t l = 1; l < line && at != std::string::npos; ++l) {
    at = text.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  return at == std::string::npos ? std::string::npos : at + column - 1;
}

// Sets each secret of `root` (paths from SecretPaths) to kRedacted.
void RedactTree(toml::table& root, const std::vector<std::vector<std::string>>& secrets) {
  for (const auto& p : secrets)
    At(root, {p[0], p[1]})->as_table()->insert_or_assign(p[2], std::string(kRedacted));
}

// The tree as TOML, for when an in-place edit is not safe.
std::string Serialized(toml::table root, const std::vector<std::vector<std::string>>& secrets) {
  RedactTree(root, secrets);
  std::ostringstream out;
  out << "# ppsearch: the spec as parsed, secrets redacted (its comments could not be kept)\n"
      << root << "\n";
  return out.str();
}

}  // namespace

bool IsSecretEnvName(const std::string& name, const EngineSpec& engine) {
  return HasSecretWord(name) || std::find(engine.secret_env.begin(), engine.secret_env.end(),
                                          name) != engine.secret_env.end();
}

bool IsSecretFlag(const std::string& flag) { return HasSecretWord(flag); }

Spec WithoutSecrets(const Spec& spec) {
  Spec out = spec;
  for (auto& [name, value] : out.engine.env)
    if (IsSecretEnvName(name, spec.engine) && !value.empty()) value = kRedacted;
  for (auto& [flag, value] : out.engine.args)
    if (IsSecretFlag(flag)) {
      value.kind = ArgValue::Kind::kString;
      value.text = kRedacted;
    }
  return out;
}

std::string RedactOverride(const std::string& assignment, const EngineSpec& engine) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) return assignment;
  std::string key = assignment.substr(0, eq);
  key.erase(0, key.find_first_not_of(' '));
  key.erase(key.find_last_not_of(' ') + 1);
  const bool env = key.rfind("engine.env.", 0) == 0 &&
                   IsSecretEnvName(key.substr(std::string("engine.env.").size()), engine);
  const bool arg = key.rfind("engine.args.", 0) == 0 &&
                   IsSecretFlag(key.substr(std::string("engine.args.").size()));
  return env || arg ? assignment.substr(0, eq + 1) + kRedacted : assignment;
}

Result<std::string> RedactSpecText(const std::string& text, const std::string& path,
                                   const EngineSpec& engine) {
  PPS_ASSIGN_OR_RETURN(toml::table root, ParseToml(text, path));
  const std::vector<std::vector<std::string>> secrets = SecretPaths(root, engine);
  if (secrets.empty()) return text;
  // Replace each value's source span, last first so earlier offsets hold.
  std::vector<std::pair<size_t, size_t>> spans;
  bool in_place = true;
  for (const auto& p : secrets) {
    const toml::source_region r = At(root, p)->source();
    const size_t b = Offset(text, r.begin.line, r.begin.column);
    const size_t e = Offset(text, r.end.line, r.end.column);
    if (b == std::string::npos || e == std::string::npos || e <= b || e > text.size()) {
      in_place = false;
      break;
    }
    spans.emplace_back(b, e);
  }
  std::string out = text;
  if (in_place) {
    std::sort(spans.rbegin(), spans.rend());
    for (const auto& [b, e] : spans) out.replace(b, e - b, std::string("\"") + kRedacted + "\"");
    // The edit must leave the same tree but for the secrets.
    Result<toml::table> again = ParseToml(out, path);
    toml::table expected = root;
    RedactTree(expected, secrets);
    in_place = again.ok() && *again == expected;
  }
  if (!in_place) out = Serialized(root, secrets);
  return out;
}

}  // namespace ppsearch::spec
