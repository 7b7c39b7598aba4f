#pragma once
// GPU memory snapshots as nvidia-smi reports them. One configurable command
// per node prints CSV (kDefaultQueryCommand's format); ParseGpuMemoryCsv
// reads it and FormatGpuMemoryCsv writes the same shape (serve-sim's
// /gpu_memory), so a real node and a simulated one read alike.

#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::nvidia_smi {

// The query whose output ParseGpuMemoryCsv reads: six columns, MiB units.
// The driver version rides along so a comparison of two runs can tell
// whether they ran on the same driver.
inline constexpr const char* kGpuQueryFields =
    "index,uuid,name,memory.used,memory.total,driver_version";
inline constexpr const char* kDefaultQueryCommand =
    "nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total,driver_version "
    "--format=csv,noheader,nounits";

struct GpuMemory {
  int index = 0;
  std::string uuid;
  std::string name;
  std::optional<double> used_mib;   // absent when the driver says [N/A]
  std::optional<double> total_mib;  // absent when the driver says [N/A]
  std::string driver_version;       // "" when not reported ([N/A], or a five-column snapshot)
  // A reading that is no number ("memory.used '0x10' is not a number"); its
  // value is then NaN. Validation names it with the impossible readings.
  std::string unreadable = {};
};

// Parses `index, uuid, name, memory.used, memory.total[, driver_version]`
// lines (snapshots of older runs have no driver column). Fields are
// separated by commas and trimmed; `[N/A]` / `N/A` memory values become
// nullopt; blank lines are skipped; a name may contain spaces (and, since it
// is the only free-text column, commas: fields after it are joined into it
// up to the first that starts like a number). A reading is kept as read,
// however impossible (-5, nan, 1e5000 as inf), for validation to name; one
// that is no number (0x10, 1,5) is NaN with `unreadable` saying so. Errors
// (the line's shape, index, uuid) read "<source>:<line>: <what>: '<line text>'".
Result<std::vector<GpuMemory>> ParseGpuMemoryCsv(const std::string& text,
                                                 const std::string& source = "nvidia-smi");

// The inverse: one `index, uuid, name, used, total, driver_version` line per
// GPU, values rounded to whole MiB, [N/A] for unknown values.
std::string FormatGpuMemoryCsv(const std::vector<GpuMemory>& gpus);

}  // namespace ppsearch::nvidia_smi
