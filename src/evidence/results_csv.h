#pragma once
// results.csv: one row per completed sample of a run directory, written by
// `ppsearch report` and at the end of `ppsearch run` (schema version 1;
// columns and units: docs/formats.md). The writer and the one reader of the
// format. A sample whose evidence cannot be true measured nothing: its
// counts and figures are empty cells, not zeros; a prefill-only sample has
// empty decode cells, and a synthesized one empty cells for the figures its
// file did not hold.

#include <optional>
#include <string>
#include <vector>

#include "evidence/verdict.h"
#include "spec/spec.h"
#include "stats/point_figures.h"
#include "util/csv.h"
#include "util/result.h"

namespace ppsearch::evidence {

inline constexpr int kResultsSchemaVersion = 1;

struct ResultRow {
  std::string sample;       // "pp1-tp32-ep4_c8_r1"
  spec::LayoutSpec layout;  // pp, tp, ep, dp
  int concurrency = 0;
  int repeat = 0;
  std::optional<int> requests_completed, requests_total, request_errors;
  // The sample's figures (stats::FiguresOf); unset where it measured
  // nothing. Its decode figures are written only where `figures->decode`.
  std::optional<stats::Figures> figures;
  // A sample replayed from a CSV of medians: its records are synthesized,
  // and of its figures only those named in figures_held (stats::FigureField
  // names: the ones its file held) are written; the rest are the
  // synthesis's own, so their cells are empty.
  bool synthesized = false;
  std::vector<std::string> figures_held;
  std::optional<double> peak_gpu_mib, gpu_total_mib;
  int findings = 0;  // log findings
  bool simulated = false;
  Verdict verdict = Verdict::kOk;
};

std::string ResultsCsvText(const std::vector<ResultRow>& rows);
Result<std::vector<ResultRow>> ParseResultsCsv(const CsvTable& table);
Result<std::vector<ResultRow>> ReadResultsCsv(const std::string& path);

}  // namespace ppsearch::evidence
