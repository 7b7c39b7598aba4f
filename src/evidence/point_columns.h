#pragma once
// The figures of a run's point (PointSummary) that its files carry, each
// declared once: its name (summary.csv's column and summary.json's key),
// where it sits in PointSummary, its decimals in the CSV, and when it is
// set. summary.csv's writer and reader (medians_csv) and summary.json's
// writer (summary_json) read this table, as every reporter of a benchmark
// library reads one run record: a figure added here reaches both files.

#include <optional>
#include <span>

#include "decide/objective.h"
#include "evidence/run_summary.h"

namespace ppsearch::evidence {

// Where a column sits in summary.csv: after the concurrency (the counts),
// after them (the medians from schema 1's first columns), after `simulated`
// and `dp` (the decode and SLA figures added later), or nowhere (the
// figures only summary.json carries).
enum class CsvPlace { kCounts, kFirst, kLater, kNone };

struct PointColumn {
  const char* name;
  CsvPlace csv = CsvPlace::kNone;
  // Exactly one of these: a count, a median (stats::Figures of
  // PointSummary::median), a figure of the point, a figure that may be
  // unknown.
  int PointSummary::*count = nullptr;
  double stats::Figures::*median = nullptr;
  double PointSummary::*figure = nullptr;
  std::optional<double> PointSummary::*maybe = nullptr;
  int decimals = 0;  // in summary.csv; an unset value is an empty cell
  // Against the writer's own baseline: a reader derives it against its own
  // baseline (analysis' ApplyBaseline) rather than read it.
  bool against_baseline = false;
};

// Every column, in summary.csv's order within each place.
std::span<const PointColumn> PointColumns();

// The column of a figure of PointSummary; null for a field no file carries.
const PointColumn* ColumnOf(int PointSummary::*count);
const PointColumn* ColumnOf(double PointSummary::*figure);
const PointColumn* ColumnOf(double stats::Figures::*median);
const PointColumn* ColumnOf(std::optional<double> PointSummary::*maybe);

// Whether the column is set only where the samples generated more than one
// token per request (stats::FigureField::decode_only: output throughput,
// TPOT, ITL and what is read from them), as results.csv leaves a
// prefill-only sample's output_tps empty.
bool DecodeOnly(const PointColumn& c);

// The column's value in `p`: unset for a decode figure of a point without
// decode, an optional figure without a value, or a count or figure its file
// did not hold (PointSummary::held).
std::optional<double> ValueOf(const PointColumn& c, const PointSummary& p);
// The figure the objective ranks by (ObjectiveMedians' field).
double stats::Figures::*ObjectiveMember(const decide::Objective& objective);
// The objective's median of `p` (ObjectiveMedians' figure), unset where `p`
// does not hold it (ValueOf): a decode figure of a prefill-only point, a
// figure a file or a synthesized sample left unknown.
std::optional<double> ObjectiveValue(const decide::Objective& objective, const PointSummary& p);
// Whether `p` has medians: its input TPS is known (a point measured here
// with some completed request, or a file's row with input_tps_median).
bool HasMedians(const PointSummary& p);
// Marks every median, spread and figure against the baseline of `p`
// unknown (PointSummary::held), its counts and memory kept: none of its
// samples completed a request.
void ForgetMedians(PointSummary& p);
// Marks the spreads of `p` unknown: fewer than two of its repeats have
// figures, and a spread over one would be a made-up 0.
void ForgetSpreads(PointSummary& p);
// Whether `p`'s spreads over repeats are known (a file's row: held, over two
// repeats or more).
bool SpreadsKnown(const PointSummary& p);
// The column's index in PointColumns().
size_t IndexOf(const PointColumn& c);
// Sets the column's field of `p` to `v` (a count is rounded).
void SetValue(const PointColumn& c, double v, PointSummary& p);

}  // namespace ppsearch::evidence
