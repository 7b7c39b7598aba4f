#include "util/sha256.h"

#include <openssl/evp.h>

#include "util/files.h"

namespace ppsearch {

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest fails only when the library is unusable (no memory): a bug to surface.
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) != 1)
    return "";
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

Result<std::string> Sha256File(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return Sha256Hex(bytes);
}

}  // namespace ppsearch
