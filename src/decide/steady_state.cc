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

}  // namespace ppsearch::decide
