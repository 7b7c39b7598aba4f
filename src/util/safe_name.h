#pragma once
// What may name a search or a run. Both become directory and file names
// (results/<name>-<time>/, <run id>.sbatch) and words on command lines (a
// job script's --run-id), so a name is one short path component that no
// program can take for an option.

#include <cstddef>
#include <string>
#include <string_view>

namespace ppsearch {

// Leaves room under the file-name limit (255 bytes) for what is appended to
// a name: "-YYYYMMDD-HHMMSS-N", ".sbatch.out", an atomic write's ".tmp.<pid>".
inline constexpr size_t kMaxNameBytes = 128;

// What a run appends to experiment.name for its default id (run/runner.h,
// NewRunDir): "-YYYYMMDD-HHMMSS", and "-N" (N below 1000) when a run of the
// same name started in the same second.
inline constexpr size_t kRunIdSuffixBytes = 20;
// The longest experiment.name: its default run id must itself be a run id.
inline constexpr size_t kMaxExperimentNameBytes = kMaxNameBytes - kRunIdSuffixBytes;

// Letters, digits, '.', '_' and '-', starting with a letter or digit, at most
// kMaxNameBytes.
bool IsSafeName(std::string_view name);

// "letters, digits, '.', '_' or '-', starting with a letter or digit, at most
// 128 characters" for errors (`max_bytes` in place of 128: experiment.name's).
std::string SafeNameRule(size_t max_bytes = kMaxNameBytes);

}  // namespace ppsearch
