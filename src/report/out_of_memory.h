#pragma once
// The sentence `simulate` prints for load points whose simulated batches
// outgrow a GPU (memory/served.h), aggregated layouts and PD pools alike.

#include <string>

#include "memory/memory_model.h"

namespace ppsearch::report {

// "`who` at `loads`: ... (stage S peaks at X MiB of Y MiB): SGLang runs out
// of memory there, ..." for `stage` of `served`, the last such point's.
// `plural`: `who` names servers ("their batches"), else a layout.
std::string OutOfMemoryLine(const std::string& who, const std::string& loads, bool plural,
                            const memory::MemoryPlan& served, int stage, double gpu_total_mib);

}  // namespace ppsearch::report
