#include <iostream>

#include "cli/command.h"

namespace ppsearch::cli {

int ExitCodeFor(const Error& error) {
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

void ReportError(const Error& error, int& exit_code) {
  std::cerr << "error: " << error.message << "\n";
  exit_code = ExitCodeFor(error);
}

}  // namespace ppsearch::cli
