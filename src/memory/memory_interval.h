#pragma once
// An interval on each stage's predicted peak from the memory model's own
// uncertain terms, apart from the calibration ensemble (uncertainty/), which
// moves only the calibrated workspace. Two parts, reported separately:
//
// - the estimated terms: the CUDA context and NCCL memory before the
//   weights load (kRuntimeMib, an estimate) and this model's chunk
//   activations (memory/activation.h, never measured per stage). The peak is
//   planned at each corner of their ranges, so the KV pool SGLang would size
//   moves with them as it does (more runtime memory, a smaller pool). A
//   pipeline of a model with linear-attention state whose SGLang version
//   the spec does not name is planned at both state-pool rules too
//   (memory/state_pool.h: before 0.5.17 a stage set aside more than it used).
// - the model form: the memory model's measured error on real SGLang startup
//   logs (validation/memory-sglang-logs), applied to the KV pool, the term
//   those logs check.

#include <vector>

#include "memory/memory_model.h"

namespace ppsearch::memory {

struct MemoryTermRange {
  double runtime_low_mib = 0, runtime_high_mib = 0;
  double activation_low_scale = 1, activation_high_scale = 1;
  double kv_model_form_share = 0;  // |relative error| of the KV pool, measured
};

// The ranges ppsearch uses; memory_interval.cc says where each comes from.
MemoryTermRange DefaultMemoryTermRange();

struct StagePeakInterval {
  double low_mib = 0, high_mib = 0;              // both parts
  double terms_low_mib = 0, terms_high_mib = 0;  // the estimated terms alone
  double model_form_mib = 0;                     // half-width the model form adds on each side
};

// One interval per stage of `in`; the central prediction is PlanMemory(in).
std::vector<StagePeakInterval> StagePeakIntervals(const MemoryInputs& in,
                                                  const MemoryTermRange& range);

}  // namespace ppsearch::memory
