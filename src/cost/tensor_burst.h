#pragma once
// GPUs whose tensor rate is held down under sustained load but runs faster
// for a few milliseconds after the tensor cores have been idle (the RTX
// 6000D: data/hardware/rtx-6000d.toml, [tensor_burst]). Between two TP
// collectives a rank's GEMMs form one compute phase; the collective leaves
// the tensor cores idle, so the next phase starts with burst time again.

#include <vector>

namespace ppsearch::cost {

// Time of each kernel of one compute phase, run in order, when the phase's
// first `window_ns` of kernel time runs at the burst rate and the rest at the
// sustained rate. `sustained_ns[i]` and `burst_ns[i]` are kernel i's time at
// either rate (equal for a kernel that memory bandwidth bounds). A kernel the
// window ends inside runs its first part at the burst rate: the fraction
// window_left / burst_ns of its work, then the rest at the sustained rate.
std::vector<double> BurstPhaseNs(const std::vector<double>& sustained_ns,
                                 const std::vector<double>& burst_ns, double window_ns);

// The burst time a phase starts with after `idle_ns` without tensor work,
// when the previous phase used its window up: the window refills as fast as
// it drains, up to `window_ns`.
double BurstWindowAfterIdle(double idle_ns, double window_ns);

}  // namespace ppsearch::cost
