// libFuzzer target: the experiment spec parser on arbitrary text, with a
// `--set` override taken from the input's first line. Any result is fine;
// crashes, sanitizer reports and hangs fail the run.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "spec/spec_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  // "@" + first line: the override ("key.path=value"); the rest: the spec.
  // Inputs without the marker are a spec alone, so plain TOML seeds work.
  std::vector<std::string> overrides;
  std::string text = input;
  if (!input.empty() && input[0] == '@') {
    overrides.push_back(
        input.substr(1, newline == std::string::npos ? std::string::npos : newline - 1));
    text = newline == std::string::npos ? "" : input.substr(newline + 1);
  }
  // A path that names no file, so relative model/hardware paths never resolve
  // to something on disk that would make runs differ.
  ppsearch::Result<ppsearch::spec::Spec> spec =
      ppsearch::spec::ParseSpec(text, "/nonexistent/fuzz/spec.toml", overrides);
  if (!spec.ok()) (void)spec.error().message.size();
  return 0;
}
