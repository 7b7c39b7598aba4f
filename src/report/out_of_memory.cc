#include "report/out_of_memory.h"

#include <fmt/format.h>

#include <cmath>

#include "util/format.h"

namespace ppsearch::report {

std::string OutOfMemoryLine(const std::string& who, const std::string& loads, bool plural,
                            const memory::MemoryPlan& served, int stage, double gpu_total_mib) {
  return fmt::format(
      "{} at {}: {} batches outgrow the GPU (stage {} peaks at {} MiB of {} MiB): SGLang runs "
      "out of memory there, so no run measures these figures (`run --engine sim` fails its "
      "samples; \"out_of_memory_stage\" in --json)",
      who, loads, plural ? "their" : "its", stage,
      FormatThousands(std::llround(served.stages[stage].peak_mib)),
      FormatThousands(std::llround(gpu_total_mib)));
}

}  // namespace ppsearch::report
