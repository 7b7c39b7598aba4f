#include "plan/partition.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "plan/plan.h"
#include "plan/plan_internal.h"
#include "spec/engine_env.h"

namespace ppsearch::plan {
namespace {

// The tightest stage's headroom of `layout` planned with `spec`; nullopt
// when the layout is refused or its memory does not fit.
std::optional<double> WorstHeadroom(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                    const model::ModelDesc& model,
                                    const hardware::HardwareProfile& hw, const EngineKnobs& knobs) {
  const LayoutPlan planned = PlanLayout(layout, spec, model, hw, knobs);
  if (!planned.valid || !planned.memory.fits || planned.memory.stages.empty()) return std::nullopt;
  double worst = std::numeric_limits<double>::infinity();
  for (const auto& s : planned.memory.stages) worst = std::min(worst, s.headroom_mib);
  return worst;
}

}  // namespace

spec::Spec WithPartition(const spec::Spec& spec, const std::vector<int>& partition) {
  spec::Spec out = spec;
  // One writer of the variable, as the spec parser holds it: the table's.
  auto& env = out.engine.env;
  env.erase(std::remove_if(env.begin(), env.end(),
                           [](const auto& e) { return e.first == spec::kPpLayerPartitionEnv; }),
            env.end());
  out.engine.pp_layer_partitions[static_cast<int>(partition.size())] = partition;
  return out;
}

std::optional<RoomierSplit> RoomierPartition(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                             const model::ModelDesc& model,
                                             const hardware::HardwareProfile& hw,
                                             const EngineKnobs& knobs) {
  const int pp = layout.pp;
  if (pp <= 1 || model.num_layers < pp || !spec::PpLayerPartition(spec.engine, pp).empty())
    return std::nullopt;
  std::vector<int> split;
  for (int s = 0; s < pp; ++s) {
    const auto [first, end] = StageLayerRange(model.num_layers, pp, s);
    split.push_back(end - first);
  }
  const std::optional<double> even = WorstHeadroom(layout, spec, model, hw, knobs);
  if (!even) return std::nullopt;
  RoomierSplit best{split, *even, *even};
  // No stage takes more layers than the even split's largest: the pipeline
  // runs at its slowest stage's pace, so memory is not bought with time.
  const int most = *std::max_element(split.begin(), split.end());
  // A gain below this is rounding, not room.
  constexpr double kMinGainMib = 1;
  // Each accepted move raises the worst headroom, so the walk cannot cycle;
  // the bound keeps a flat landscape from costing more than it can gain.
  for (int move = 0; move < 4 * pp; ++move) {
    std::vector<int> next;
    double next_headroom = best.worst_headroom_mib + kMinGainMib;
    for (int from = 0; from < pp; ++from) {
      if (best.partition[static_cast<size_t>(from)] <= 1) continue;
      for (int to = 0; to < pp; ++to) {
        if (to == from || best.partition[static_cast<size_t>(to)] >= most) continue;
        std::vector<int> candidate = best.partition;
        --candidate[static_cast<size_t>(from)];
        ++candidate[static_cast<size_t>(to)];
        const std::optional<double> headroom =
            WorstHeadroom(layout, WithPartition(spec, candidate), model, hw, knobs);
        if (headroom && *headroom > next_headroom) {
          next_headroom = *headroom;
          next = std::move(candidate);
        }
      }
    }
    if (next.empty()) break;
    best.partition = std::move(next);
    best.worst_headroom_mib = next_headroom;
  }
  if (best.partition == split) return std::nullopt;
  return best;
}

}  // namespace ppsearch::plan
