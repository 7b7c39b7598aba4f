#pragma once
// When a closed loop's figures are those of its steady state. A sample of
// `requests` at `concurrency` in flight starts its first `concurrency`
// requests together (their prefills queue behind each other) and ends with
// a drain in which fewer are in flight; both are a wave of the loop. With at
// least kSteadyWavesMin waves (requests / concurrency), the start and the
// drain are at most two of them and the rest of the sample runs at the load
// it names. One rule for every figure a load point reports.

#include <string>

namespace ppsearch::decide {

inline constexpr int kSteadyWavesMin = 4;

// Why a closed loop of `requests` at `concurrency` has not reached its
// steady state: "40 requests are 2.5 waves of 16, fewer than 4"; empty
// when it has (or the loop is not closed: concurrency 0).
std::string NotSteady(int concurrency, int requests);

// The rule in one sentence, for outputs that apply it.
std::string SteadyRule();

}  // namespace ppsearch::decide
