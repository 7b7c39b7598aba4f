#pragma once
// Test support for memory/: the inputs of a layout with no stages yet.

#include <cstdint>

#include "memory/memory_model.h"

namespace ppsearch::memory::testing {

inline MemoryInputs Inputs(double gpu_mib, int tp, int pp, int64_t chunk) {
  MemoryInputs in;
  in.gpu_total_mib = gpu_mib;
  in.tp = tp;
  in.pp = pp;
  in.chunked_prefill_size = chunk;
  return in;
}

}  // namespace ppsearch::memory::testing
