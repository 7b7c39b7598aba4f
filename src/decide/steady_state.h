#pragma once
// When a closed loop's figures are those of its steady state. A sample of
// `requests` at `concurrency` in flight starts its first `concurrency`
// requests together (their prefills queue behind each other) and ends with
// a drain in which fewer are in flight; both are a wave of the loop. With at
// least kSteadyWavesMin waves (requests / concurrency), the start and the
// drain are at most two of them and the rest of the sample runs at the load
// it names. One rule for every figure a load point reports.

#include <string>
#include <vector>

namespace ppsearch::decide {

inline constexpr int kSteadyWavesMin = 4;

// Why a closed loop of `requests` at `concurrency` has not reached its
// steady state: "40 requests are 2.5 waves of 16, fewer than 4"; empty
// when it has (or the loop is not closed: concurrency 0).
std::string NotSteady(int concurrency, int requests);

// The rule in one sentence, for outputs that apply it.
std::string SteadyRule();

// An open loop's wave is the requests in flight once it settles: by
// Little's law its rate times their end-to-end p50, at most the cap (0:
// none). Its sample is steady-state with kSteadyWavesMin such waves, for
// the same reason as a closed loop's: the build-up from an empty server
// and the drain each take about one. Why a sample of `requests` sent at
// `rate` is short of it: "1,000 requests are 0.6 waves of the 1,655 in
// flight at 32.0 requests/s for an end-to-end p50 of 51.72 s, fewer than
// 4"; empty when it is not (or when rate or e2e is not positive).
std::string NotSteadyOpen(double rate, int cap, int requests, double e2e_p50_s);
// The open loop's rule in one sentence.
std::string SteadyRuleOpen();

// One sample a load point ran or predicts: `concurrency` requests in flight
// (0: an open loop, not judged) out of `requests`.
struct LoopSample {
  std::string label;  // "C=16", a configuration's name
  int concurrency = 0;
  int requests = 0;
};

// The samples short of their steady state, each with why ("C=16: 40
// requests are 2.5 waves of 16, fewer than 4; C=32: ..."); empty when none is.
std::string ShortOfSteadyState(const std::vector<LoopSample>& samples);

// The rule stated for outputs that list samples: "steady state: <rule>;
// short of it at <ShortOfSteadyState>", or "...; every <noun> holds it"
// when none is short; empty when no sample is a closed loop.
std::string SteadyStateLine(const std::vector<LoopSample>& samples, const std::string& noun);

}  // namespace ppsearch::decide
