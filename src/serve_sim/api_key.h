#pragma once
// SGLang's --api-key check (add_api_key_middleware): a request is admitted
// when its Authorization header is "Bearer <key>". serve-sim keeps only the
// SHA-256 digest of that header, never the key, and compares it with the
// digest of the header a request sends. Both digests are 64 hex digits
// whatever the lengths of key and header, and they are compared in time
// that does not depend on where they differ (SameDigest), so a client
// timing its 401s learns neither the key nor its length.

#include <string>
#include <string_view>

namespace ppsearch::serve_sim {

// Two strings of equal length compared in time that depends only on that
// length (OpenSSL's CRYPTO_memcmp); false, at once, for different lengths,
// which for two digests never happens.
bool SameDigest(std::string_view a, std::string_view b);

class ApiKeyCheck {
 public:
  // How two digests are compared; tests pass a recorder.
  using Compare = bool (*)(std::string_view, std::string_view);

  // No key (""): every request is admitted.
  explicit ApiKeyCheck(const std::string& key = "", Compare compare = SameDigest);

  bool asks() const { return !digest_.empty(); }
  // Whether a request with this Authorization header value may pass.
  bool Admits(const std::string& authorization) const;

 private:
  std::string digest_;  // of "Bearer <key>"; empty when no key is asked for
  Compare compare_;
};

}  // namespace ppsearch::serve_sim
