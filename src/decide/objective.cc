#include "decide/objective.h"

#include <algorithm>

namespace ppsearch::decide {
namespace {

struct Row {
  Objective::Kind kind;
  std::string name;
  std::string label;
  bool lower_is_better;
  bool has_interval;
  bool adaptive;
  bool may_be_zero;
};

// One row per objective, in the order the docs list them.
const std::vector<Row>& Table() {
  using K = Objective::Kind;
  static const std::vector<Row> kRows = {
      // kind, name, label, lower_is_better, has_interval, adaptive, may_be_zero
      {K::kInputTps, "input_tps", "input TPS", false, true, true, false},
      {K::kTtftP50, "ttft_p50", "TTFT p50", true, true, true, false},
      {K::kOutputTps, "output_tps", "output TPS", false, true, false, false},
      {K::kOutputTpsPerGpu, "output_tps_per_gpu", "output TPS per GPU", false, true, false, false},
      {K::kGoodput, "goodput", "goodput", false, false, false, true},
  };
  return kRows;
}

const Row& RowOf(Objective::Kind kind) {
  const std::vector<Row>& rows = Table();
  return *std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.kind == kind; });
}

}  // namespace

std::optional<Objective> Objective::FromName(std::string_view name) {
  for (const Row& r : Table())
    if (r.name == name) return Objective(r.kind);
  return std::nullopt;
}

const std::vector<std::string>& Objective::Names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Row& r : Table()) names.push_back(r.name);
    return names;
  }();
  return kNames;
}

std::string Objective::AdaptiveChoices() {
  std::string text;
  for (const Row& r : Table())
    if (r.adaptive) text += (text.empty() ? "" : " or ") + r.name;
  return text;
}

const std::string& Objective::name() const { return RowOf(kind_).name; }
const std::string& Objective::label() const { return RowOf(kind_).label; }
bool Objective::lower_is_better() const { return RowOf(kind_).lower_is_better; }
bool Objective::has_interval() const { return RowOf(kind_).has_interval; }
bool Objective::adaptive() const { return RowOf(kind_).adaptive; }
bool Objective::may_be_zero() const { return RowOf(kind_).may_be_zero; }
bool Objective::token_throughput() const {
  return kind_ == Kind::kInputTps || kind_ == Kind::kOutputTps || kind_ == Kind::kOutputTpsPerGpu;
}

}  // namespace ppsearch::decide
