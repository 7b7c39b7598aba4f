#pragma once
// SHA-256 digests as lowercase hex, through OpenSSL's libcrypto (Debian's
// libssl-dev, which libcurl's OpenSSL flavour already pulls in): what a run
// records of the files its spec names (patches), so two runs can tell
// whether they used the same ones.

#include <string>

#include "util/result.h"

namespace ppsearch {

// 64 lowercase hex digits.
std::string Sha256Hex(const std::string& bytes);

// The digest of the file at `path`; an error names the path and why it
// could not be read.
Result<std::string> Sha256File(const std::string& path);

}  // namespace ppsearch
