#include "evidence/point_columns.h"

#include <cmath>
#include <iterator>

namespace ppsearch::evidence {
namespace {

using P = PointSummary;
using F = stats::Figures;

// summary.csv's columns are schema_version, the layout's pp, tp and ep,
// concurrency, kCounts, kFirst, simulated, dp, kLater, instances (docs/formats.md).
const PointColumn kColumns[] = {
    {.name = "repeats", .csv = CsvPlace::kCounts, .count = &P::repeats},
    {.name = "valid_repeats", .csv = CsvPlace::kCounts, .count = &P::valid_repeats},
    {.name = "requests_completed", .csv = CsvPlace::kCounts, .count = &P::requests_completed},
    {.name = "requests_total", .csv = CsvPlace::kCounts, .count = &P::requests_total},
    {.name = "input_tps_median", .csv = CsvPlace::kFirst, .median = &F::input_tps, .decimals = 2},
    {.name = "input_tps_spread",
     .csv = CsvPlace::kFirst,
     .figure = &P::input_tps_spread,
     .decimals = 6},
    {.name = "ttft_p50_s_median", .csv = CsvPlace::kFirst, .median = &F::ttft_p50_s, .decimals = 4},
    {.name = "ttft_p50_s_spread",
     .csv = CsvPlace::kFirst,
     .figure = &P::ttft_p50_s_spread,
     .decimals = 6},
    {.name = "ttft_p95_s_median", .csv = CsvPlace::kFirst, .median = &F::ttft_p95_s, .decimals = 4},
    {.name = "peak_gpu_mib", .csv = CsvPlace::kFirst, .maybe = &P::peak_gpu_mib},
    {.name = "gpu_total_mib", .csv = CsvPlace::kFirst, .maybe = &P::gpu_total_mib},
    {.name = "headroom_mib", .csv = CsvPlace::kFirst, .maybe = &P::headroom_mib},
    {.name = "input_tps_vs_baseline",
     .csv = CsvPlace::kFirst,
     .maybe = &P::input_tps_vs_baseline,
     .decimals = 6,
     .against_baseline = true},
    {.name = "ttft_p50_vs_baseline",
     .csv = CsvPlace::kFirst,
     .maybe = &P::ttft_p50_vs_baseline,
     .decimals = 6,
     .against_baseline = true},
    {.name = "output_tps_median", .csv = CsvPlace::kLater, .median = &F::output_tps, .decimals = 2},
    {.name = "output_tps_per_gpu_median",
     .csv = CsvPlace::kLater,
     .median = &F::output_tps_per_gpu,
     .decimals = 2},
    {.name = "ttft_p99_s_median", .csv = CsvPlace::kLater, .median = &F::ttft_p99_s, .decimals = 4},
    {.name = "tpot_p99_s_median", .csv = CsvPlace::kLater, .median = &F::tpot_p99_s, .decimals = 6},
    {.name = "itl_p99_s_median", .csv = CsvPlace::kLater, .median = &F::itl_p99_s, .decimals = 6},
    {.name = "e2e_p99_s_median", .csv = CsvPlace::kLater, .median = &F::e2e_p99_s, .decimals = 4},
    {.name = "goodput_rps_median",
     .csv = CsvPlace::kLater,
     .median = &F::goodput_rps,
     .decimals = 4},
    {.name = "ttft_mean_s_median", .median = &F::ttft_mean_s},
    {.name = "e2e_p50_s_median", .median = &F::e2e_p50_s},
    {.name = "tpot_p50_s_median", .median = &F::tpot_p50_s},
    {.name = "output_tps_per_user", .median = &F::output_tps_per_user},
};

}  // namespace

std::span<const PointColumn> PointColumns() { return kColumns; }

const PointColumn* ColumnOf(int PointSummary::*count) {
  for (const PointColumn& c : kColumns)
    if (c.count == count) return &c;
  return nullptr;
}

const PointColumn* ColumnOf(double PointSummary::*figure) {
  for (const PointColumn& c : kColumns)
    if (c.figure == figure) return &c;
  return nullptr;
}

const PointColumn* ColumnOf(double stats::Figures::*median) {
  for (const PointColumn& c : kColumns)
    if (c.median == median) return &c;
  return nullptr;
}

const PointColumn* ColumnOf(std::optional<double> PointSummary::*maybe) {
  for (const PointColumn& c : kColumns)
    if (c.maybe == maybe) return &c;
  return nullptr;
}

bool DecodeOnly(const PointColumn& c) {
  return c.median != nullptr && stats::FieldOf(c.median)->decode_only;
}

size_t IndexOf(const PointColumn& c) { return static_cast<size_t>(&c - kColumns); }

double F::*ObjectiveMember(const decide::Objective& objective) {
  const decide::ObjectiveFields<double F::*> members{&F::input_tps, &F::ttft_p50_s, &F::output_tps,
                                                     &F::output_tps_per_gpu, &F::goodput_rps};
  return objective.Of(members);
}

std::optional<double> ObjectiveValue(const decide::Objective& objective, const PointSummary& p) {
  return ValueOf(*ColumnOf(ObjectiveMember(objective)), p);
}

bool HasMedians(const PointSummary& p) {
  return ValueOf(*ColumnOf(&stats::Figures::input_tps), p).has_value();
}

void ForgetSpreads(PointSummary& p) {
  if (p.held.empty()) p.held.assign(std::size(kColumns), true);
  for (const PointColumn& c : kColumns)
    if (c.figure != nullptr) p.held[IndexOf(c)] = false;
}

void ForgetMedians(PointSummary& p) {
  ForgetSpreads(p);
  for (const PointColumn& c : kColumns)
    if (c.median != nullptr || c.against_baseline) p.held[IndexOf(c)] = false;
  p.input_tps_vs_baseline.reset();
  p.ttft_p50_vs_baseline.reset();
}

bool SpreadsKnown(const PointSummary& p) {
  return p.repeats >= 2 && ValueOf(*ColumnOf(&PointSummary::input_tps_spread), p).has_value();
}

std::optional<double> ValueOf(const PointColumn& c, const PointSummary& p) {
  if (DecodeOnly(c) && !p.median.decode) return std::nullopt;
  if (c.maybe != nullptr) return p.*c.maybe;
  if (!p.held.empty() && !p.held[IndexOf(c)]) return std::nullopt;
  if (c.count != nullptr) return p.*c.count;
  if (c.median != nullptr) return p.median.*c.median;
  return p.*c.figure;
}

void SetValue(const PointColumn& c, double v, PointSummary& p) {
  if (c.count != nullptr) {
    p.*c.count = static_cast<int>(std::llround(v));
  } else if (c.median != nullptr) {
    p.median.*c.median = v;
  } else if (c.figure != nullptr) {
    p.*c.figure = v;
  } else {
    p.*c.maybe = v;
  }
}

}  // namespace ppsearch::evidence
