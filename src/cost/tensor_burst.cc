#include "cost/tensor_burst.h"

#include <algorithm>

namespace ppsearch::cost {

std::vector<double> BurstPhaseNs(const std::vector<double>& sustained_ns,
                                 const std::vector<double>& burst_ns, double window_ns) {
  std::vector<double> out;
  out.reserve(sustained_ns.size());
  double left = std::max(window_ns, 0.0);
  for (size_t i = 0; i < sustained_ns.size(); ++i) {
    const double s = sustained_ns[i];
    const double b = std::min(burst_ns[i], s);  // a burst is never slower
    if (left <= 0 || b <= 0) {
      out.push_back(s);
    } else if (b <= left) {
      out.push_back(b);
      left -= b;
    } else {
      // The window ends inside this kernel: left / b of its work done at the
      // burst rate, the remaining share at the sustained rate.
      out.push_back(left + (1.0 - left / b) * s);
      left = 0;
    }
  }
  return out;
}

double BurstWindowAfterIdle(double idle_ns, double window_ns) {
  return std::clamp(idle_ns, 0.0, std::max(window_ns, 0.0));
}

}  // namespace ppsearch::cost
