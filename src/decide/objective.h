#pragma once
// The decision's objective ([decision] objective): which figure of a load
// point ranks the layouts, which way is better, whether an interval is
// drawn for it and whether an adaptive run can choose by it. The one owner
// of the objectives: the spec parses the name once into an `Objective`, and
// the decision on measured medians (analysis/), the ranking of predictions
// (search/), the adaptive run (adaptive/) and the reports ask it, never the
// name. Adding an objective means a row in objective.cc's table and a
// field in `ObjectiveFields`.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsearch::decide {

// A load point's figures an objective may rank by, of any type: the
// central values (`ObjectiveFigures`), their intervals, ... Each record of
// a point's figures (analysis::PointSummary, search::PointFigures,
// uncertainty::MemberValues) is read into one by one function beside it.
template <class T>
struct ObjectiveFields {
  T input_tps{};
  T ttft_p50_s{};
  T output_tps{};
  T output_tps_per_gpu{};  // output_tps / (pp x tp) GPUs
  T goodput_rps{};         // requests/s meeting every SLA limit (stats' goodput)
};
using ObjectiveFigures = ObjectiveFields<double>;

class Objective {
 public:
  enum class Kind { kInputTps, kTtftP50, kOutputTps, kOutputTpsPerGpu, kGoodput };

  // input_tps, the spec's default.
  Objective() = default;
  explicit Objective(Kind kind) : kind_(kind) {}

  // The objective [decision] objective names; nullopt for any other word.
  static std::optional<Objective> FromName(std::string_view name);
  // The names [decision] objective accepts, in the order the docs list them.
  static const std::vector<std::string>& Names();
  // The objectives an adaptive run can choose by, for sentences:
  // "input_tps or ttft_p50".
  static std::string AdaptiveChoices();

  Kind kind() const { return kind_; }
  // As the spec writes it: "input_tps", "ttft_p50", ...
  const std::string& name() const;
  // For sentences: "input TPS", "TTFT p50", "output TPS per GPU", "goodput".
  const std::string& label() const;
  // TTFT p50 is the only objective where less is better.
  bool lower_is_better() const;
  // Whether `a` is a better value of this objective than `b` (a tie is not).
  bool Beats(double a, double b) const { return lower_is_better() ? a < b : a > b; }
  // Whether a predicted point carries an interval of this figure: throughput
  // (in or out, whole or per GPU) and TTFT p50. Goodput counts requests
  // against the limits in one simulated sample; it has no ensemble band.
  bool has_interval() const;
  // Whether the calibration ensemble's draws of a point carry this figure
  // (input TPS and TTFT p50): the adaptive run's belief, simulate's decision
  // uncertainty and the report's prediction check are built on those
  // draws, so only these objectives can be used there.
  bool adaptive() const;
  // Whether it is a token throughput (input or output, whole or per GPU):
  // in an open loop every layout that keeps up serves the offered rate.
  bool token_throughput() const;
  // Whether 0 is a figure of this objective (goodput: no request met the
  // limits) rather than a point without one.
  bool may_be_zero() const;
  // The objective the ensemble's draws rank by: this one where they carry
  // it (adaptive()), else input_tps.
  Objective Drawn() const { return adaptive() ? *this : Objective(); }

  // This objective's field of a point's figures (a copy: the fields are
  // often a temporary built from a record).
  template <class T>
  T Of(const ObjectiveFields<T>& f) const {
    switch (kind_) {
      case Kind::kTtftP50:
        return f.ttft_p50_s;
      case Kind::kOutputTps:
        return f.output_tps;
      case Kind::kOutputTpsPerGpu:
        return f.output_tps_per_gpu;
      case Kind::kGoodput:
        return f.goodput_rps;
      case Kind::kInputTps:
        break;
    }
    return f.input_tps;
  }

  bool operator==(const Objective&) const = default;

 private:
  Kind kind_ = Kind::kInputTps;
};

}  // namespace ppsearch::decide
