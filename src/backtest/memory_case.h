#pragma once
// The memory part of a backtest case: `[memory.<name>]` tables, each a setup
// whose SGLang startup log is published, and the figures that check the
// memory model against it: weights per GPU ("Load weight end. ... mem
// usage=X GB") and the KV pool's tokens ("KV Cache is allocated. #tokens:
// N"). Only the memory model is involved: nothing is calibrated.

#include <vector>

#include "backtest/case_file.h"
#include "backtest/evaluate.h"
#include "spec/toml_access.h"
#include "util/result.h"

namespace ppsearch::backtest {

// Tolerances of the two figures: weights are counted from the checkpoint's
// shapes, so 2% leaves room only for SGLang's own small buffers; the KV pool
// also depends on the CUDA context and NCCL memory before the weights load,
// which is estimated (memory::kRuntimeMib).
constexpr double kWeightTolerance = 0.02;
constexpr double kKvTokenTolerance = 0.05;

// The `memory` table of a case file, in written order (empty when absent).
Result<std::vector<MemoryReference>> ReadMemoryReferences(const spec::TableReader& top);

// Plans every memory reference's layout with the case's spec and its
// overrides and compares the stage's weights per GPU and the KV pool tokens.
// Errors name the case file, the reference and what failed.
Result<std::vector<FigureResult>> MemoryFigures(const Case& c);

}  // namespace ppsearch::backtest
