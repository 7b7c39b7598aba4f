#include "serve_sim/api_key.h"

#include <openssl/crypto.h>

#include "util/sha256.h"

namespace ppsearch::serve_sim {

bool SameDigest(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

ApiKeyCheck::ApiKeyCheck(const std::string& key, Compare compare)
    : digest_(key.empty() ? "" : Sha256Hex("Bearer " + key)), compare_(compare) {}

bool ApiKeyCheck::Admits(const std::string& authorization) const {
  return !asks() || compare_(Sha256Hex(authorization), digest_);
}

}  // namespace ppsearch::serve_sim
