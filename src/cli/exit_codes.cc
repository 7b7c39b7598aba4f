#include <atomic>

#include "cli/command.h"

namespace ppsearch::cli {

ExitCode ExitCodeFor(const Error& error) {
  switch (error.kind) {
    case ErrorKind::kConfig:
      return kExitConfigError;
    case ErrorKind::kIo:
    case ErrorKind::kInternal:
      return kExitFailure;
    case ErrorKind::kIncomplete:
      return kExitIncomplete;
    case ErrorKind::kNoQualifier:
      return kExitNoneQualifies;
  }
  return kExitFailure;
}

Error ErrorLines(const std::vector<std::string>& messages, ErrorKind kind) {
  std::string text;
  // main prefixes the first line; the others get the same prefix here.
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) text += "\nerror: ";
    text += messages[i];
  }
  return MakeError(text, kind);
}

namespace {
std::atomic<bool> g_end_without_unwinding{false};
}  // namespace

void EndProcessWithoutUnwinding() { g_end_without_unwinding = true; }
bool ProcessEndsWithoutUnwinding() { return g_end_without_unwinding; }

}  // namespace ppsearch::cli
