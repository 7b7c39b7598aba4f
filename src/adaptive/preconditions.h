#pragma once
// What an adaptive run needs of its spec before any sample, checked once:
// `ppsearch run --adaptive` refuses the run with these lines before a run
// directory exists, and the session (observe.h) refuses the same spec the
// same way when handed one.

#include <string>
#include <vector>

#include "inputs/search_inputs.h"

namespace ppsearch::adaptive {

// Empty when `in` can be run adaptively; else one line per reason, the last
// saying what to do where several layouts are the reason:
// - the objective is one the belief cannot rank by (decode objectives are
//   decided on measurements alone: docs/adaptive.md);
// - a sample budget smaller than one step (a point's repeats);
// - layouts the simulator does not model (the run predicts what it has not
//   measured).
// `otherwise` says what to do about the objective ("run without --adaptive
// to measure every sample").
std::vector<std::string> AdaptiveRunProblems(
    const inputs::SearchInputs& in,
    const std::string& otherwise = "run without --adaptive to measure every sample");

}  // namespace ppsearch::adaptive
