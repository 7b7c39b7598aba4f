#pragma once
// nvidia-smi on a node, through its launcher: the memory snapshot every
// sample keeps, the processes that hold GPU memory (preflight), and the
// wait until a stopped server's memory is released. The program is
// [cluster] nvidia_smi ({host} filled in), so a rehearsal can name
// `ppsearch smi-sim`.

#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "nvidia_smi/gpu_memory.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::sglang {

// --query-gpu=nvidia_smi::kGpuQueryFields --format=csv,noheader,nounits
// Each query waits `timeout_s` for nvidia-smi (unset: lifecycle.host_timeout_s).
Result<std::string> QueryGpuCsv(launch::Launcher& launcher, const spec::Spec& spec, int node);

struct ComputeApp {
  int64_t pid = 0;
  std::string name;
  std::optional<double> used_mib;
};

// --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits
Result<std::vector<ComputeApp>> QueryComputeApps(launch::Launcher& launcher, const spec::Spec& spec,
                                                 int node,
                                                 std::optional<double> timeout_s = std::nullopt);
// Parses that query's output; errors name the line.
Result<std::vector<ComputeApp>> ParseComputeApps(const std::string& text,
                                                 const std::string& source);

// The GPUs of `node` using more than `threshold_mib`, as "GPU 3 holds 41234 MiB"
// (empty: every GPU is at or under it); a reading that is no number is named
// too, as "GPU 3 reads memory.used '0x10' is not a number". Errors when
// nvidia-smi fails.
Result<std::vector<std::string>> GpusAbove(launch::Launcher& launcher, const spec::Spec& spec,
                                           int node, double threshold_mib,
                                           std::optional<double> timeout_s = std::nullopt);

}  // namespace ppsearch::sglang
