#pragma once
// Which values of a spec are secrets, and the spec with them taken out.
//
// A secret is the value of an [engine.env] variable whose name holds the
// word TOKEN, KEY, SECRET, PASSWORD, PASSWD, APIKEY, CREDENTIAL(S) or AUTH
// (words are split at '_', any case: HF_TOKEN, OPENAI_API_KEY, but not
// TOKENIZERS_PARALLELISM), or that [engine] secret_env lists; and the value of
// an [engine.args] flag whose name holds one of those words (words split at
// '-' or '_': api-key, admin-api-key, ssl-keyfile-password, but not
// max-total-tokens or ssl-keyfile). Their values never reach what ppsearch
// writes or prints (run/redact.h; the spec file's own copy: spec/secret_text.h).
//
// Redaction changes structure, not text: the secret's own value is replaced
// in the parsed spec, so that a secret that happens to read "true" or "16"
// cannot rewrite an unrelated key.

#include <string>
#include <vector>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::spec {

// What a secret's value is written as.
inline constexpr const char* kRedacted = "<redacted>";

bool IsSecretEnvName(const std::string& name, const EngineSpec& engine);
bool IsSecretFlag(const std::string& flag);  // without leading dashes

// `spec` with every secret value replaced by kRedacted: what
// spec.resolved.json, commands.txt and dry runs are made from.
Spec WithoutSecrets(const Spec& spec);

// A --set value as written ("engine.env.HF_TOKEN=hf_x"), with the value
// replaced when the key is a secret ("engine.env.HF_TOKEN=<redacted>").
std::string RedactOverride(const std::string& assignment, const EngineSpec& engine);

}  // namespace ppsearch::spec
