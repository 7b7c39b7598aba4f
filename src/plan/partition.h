#pragma once
// A layer split for SGLANG_PP_LAYER_PARTITION that leaves the pipeline's
// tightest stage more memory than SGLang's even split does. The even split
// gives the last stages the remainder, and the last stage also holds the LM
// head (and, with PP, a KV pool as large as every other stage's), so it is
// often the one that runs out first.

#include <optional>
#include <vector>

#include "hardware/hardware.h"
#include "model/model.h"
#include "plan/engine_config.h"
#include "spec/spec.h"

namespace ppsearch::plan {

struct RoomierSplit {
  std::vector<int> partition;          // layers per stage, stage 0 first
  double worst_headroom_mib = 0;       // its tightest stage's headroom, as planned
  double even_worst_headroom_mib = 0;  // the even split's, as planned
};

// From the even split, moves one layer at a time from one stage to another
// that holds fewer than the even split's largest stage (so that no stage
// takes longer for its layers), each time the move that raises the
// tightest stage's headroom most, while one does (at most 4 x pp moves);
// where the layers divide evenly no layer can move under that rule. nullopt when no move
// helps, at PP1, when the spec sets the layout's split itself ([engine.env]
// SGLANG_PP_LAYER_PARTITION or [engine.pp_layer_partition]), or when the even split does
// not plan. Headroom as `plan` gives it: a calibration's workspace adds the same to every stage, so
// it moves no stage ahead of another.
// `knobs`: a search's engine settings, planned as the search plans them.
std::optional<RoomierSplit> RoomierPartition(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                             const model::ModelDesc& model,
                                             const hardware::HardwareProfile& hw,
                                             const EngineKnobs& knobs = {});

// `spec` with `partition` as [engine.pp_layer_partition]'s entry for its
// pipeline size (one per stage): layouts of that size run with it. An
// [engine.env] SGLANG_PP_LAYER_PARTITION goes, as the parser allows only one
// of the two.
spec::Spec WithPartition(const spec::Spec& spec, const std::vector<int>& partition);

}  // namespace ppsearch::plan
