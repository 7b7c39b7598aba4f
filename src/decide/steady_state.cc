#include "decide/steady_state.h"

#include <fmt/format.h>

#include <algorithm>

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

std::string NotSteadyOpen(double rate, int cap, int requests, double e2e_p50_s) {
  if (!(rate > 0) || !(e2e_p50_s > 0)) return "";
  // A wave is at least one request: a rate whose requests never overlap
  // runs them one at a time, each its own wave.
  double in_flight = std::max(rate * e2e_p50_s, 1.0);
  if (cap > 0) in_flight = std::min(in_flight, static_cast<double>(cap));
  const double waves = requests / in_flight;
  if (waves >= kSteadyWavesMin) return "";
  return fmt::format(
      "{} requests are {} waves of the {} in flight at {} requests/s for an end-to-end p50 of {} "
      "s{}, fewer than {}",
      FormatThousands(requests), FormatNumber(waves, waves < 0.1 ? 3 : 1),
      FormatNumber(in_flight, 0), FormatRate(rate), FormatNumber(e2e_p50_s, 2),
      cap > 0 && in_flight == cap ? fmt::format(" (the cap of {})", cap) : "", kSteadyWavesMin);
}

std::string SteadyRuleOpen() {
  return fmt::format(
      "an open loop's figures are steady-state when its sample holds at least {} waves "
      "(requests / requests in flight, its rate x their end-to-end p50 at most the cap): the "
      "build-up from an empty server and the drain are then at most half of it",
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
