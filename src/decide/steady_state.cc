#include "decide/steady_state.h"

#include <fmt/format.h>

#include "util/format.h"

namespace ppsearch::decide {

std::string NotSteady(int concurrency, int requests) {
  if (concurrency <= 0 || requests >= kSteadyWavesMin * concurrency) return "";
  return fmt::format("{} requests are {} waves of {}, fewer than {}", requests,
                     FormatNumber(static_cast<double>(requests) / concurrency, 1), concurrency,
                     kSteadyWavesMin);
}

std::string SteadyRule() {
  return fmt::format(
      "a closed loop's figures are steady-state when its sample holds at least {} waves "
      "(requests / requests in flight): the first wave's start and the last one's drain are "
      "then at most half of it",
      kSteadyWavesMin);
}

std::string ShortOfSteadyState(const std::vector<LoopSample>& samples) {
  std::string out;
  for (const LoopSample& s : samples)
    if (const std::string why = NotSteady(s.concurrency, s.requests); !why.empty())
      out += (out.empty() ? "" : "; ") + s.label + ": " + why;
  return out;
}

std::string SteadyStateLine(const std::vector<LoopSample>& samples, const std::string& noun) {
  bool closed = false;
  for (const LoopSample& s : samples) closed = closed || s.concurrency > 0;
  if (!closed) return "";
  const std::string short_of = ShortOfSteadyState(samples);
  return "steady state: " + SteadyRule() +
         (short_of.empty() ? "; every " + noun + " holds it" : "; short of it at " + short_of);
}

}  // namespace ppsearch::decide
