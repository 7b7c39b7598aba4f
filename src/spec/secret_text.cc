#include "spec/secret_text.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "spec/secrets.h"
#include "spec/toml_access.h"

namespace ppsearch::spec {
namespace {

// The secret paths ("engine", "env", "HF_TOKEN"; "sweep", "prefill", "args",
// "api-key") present in `root`.
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
  // A disaggregated deployment's pools' own flags.
  if (const toml::table* sweep = root["sweep"].as_table())
    for (const char* pool : {"prefill", "decode"})
      if (const toml::node_view<const toml::node> t = (*sweep)[pool]; t.is_table())
        if (const toml::table* args = t["args"].as_table())
          for (const auto& [k, v] : *args)
            if (IsSecretFlag(std::string(k.str())))
              out.push_back({"sweep", pool, "args", std::string(k.str())});
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
  for (const auto& p : secrets) {
    // The table holding the secret, then its key.
    const std::vector<std::string> table(p.begin(), p.end() - 1);
    At(root, table)->as_table()->insert_or_assign(p.back(), std::string(kRedacted));
  }
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
