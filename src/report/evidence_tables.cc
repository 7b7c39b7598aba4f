#include "report/evidence_tables.h"

#include <fmt/format.h>

#include "decide/sla.h"
#include "evidence/medians_csv.h"
#include "evidence/results_csv.h"
#include "evidence/summary_json.h"
#include "report/compare_render.h"

namespace ppsearch::report {
namespace {

// results.csv's row of a completed sample (evidence/results_csv owns the
// format). Impossible evidence measured nothing: its counts and figures are
// unknown, not zero.
evidence::ResultRow ResultRowOf(const analysis::SampleAnalysis& s, bool simulated) {
  const stats::SampleMetrics& m = s.metrics;
  evidence::ResultRow r;
  r.sample = s.name;
  r.layout = s.id.layout;
  r.concurrency = s.id.concurrency;
  r.repeat = s.id.repeat;
  r.findings = static_cast<int>(s.findings.size());
  r.simulated = simulated;
  r.verdict = s.verdict;
  r.synthesized = s.synthesized;
  if (s.synthesized)
    for (const stats::FigureField& f : stats::FigureFields())
      if (s.Holds(f.member)) r.figures_held.push_back(f.name);
  if (!s.trustworthy()) return r;
  r.requests_completed = m.requests_completed;
  r.requests_total = s.requests_total();
  r.request_errors = m.request_errors;
  if (s.measured_figures()) r.figures = stats::FiguresOf(m, s.id.layout.gpus());
  r.peak_gpu_mib = s.peak_gpu_mib;
  r.gpu_total_mib = s.gpu_total_mib;
  return r;
}

// checks.samples' entry of a sample. Impossible evidence measured nothing:
// its counts and figures are unknown, not zero.
evidence::SampleCheck SampleCheckOf(const analysis::SampleAnalysis& s) {
  evidence::SampleCheck c;
  c.sample = s.name;
  c.state = s.state;
  c.valid = s.valid();
  c.findings = static_cast<int>(s.findings.size());
  c.peak_gpu_mib = s.peak_gpu_mib;
  c.headroom_mib = s.headroom_mib;
  for (const analysis::NodePeak& n : s.nodes) c.nodes.push_back({n.host, n.used_mib, n.total_mib});
  c.problems = s.problems;
  c.invalid_evidence = s.invalid_evidence;
  if (s.has_verdict()) {
    c.verdict = s.verdict;
    c.detail = s.detail;
  } else {
    c.detail =
        fmt::format("did not end (manifest: {}): no verdict", evidence::SampleStateName(s.state));
  }
  if (!s.trustworthy()) return c;
  c.requests_completed = s.metrics.requests_completed;
  c.requests_total = s.requests_total();
  c.request_errors = s.metrics.request_errors;
  c.prompt_length_mismatches = s.prompt_length_mismatches;
  if (!s.measured_figures()) return c;  // no request completed: no figure to give
  c.input_tps = s.metrics.input_tps;
  if (s.Holds(&stats::Figures::ttft_p50_s)) c.ttft_p50_s = s.metrics.ttft_s.p50;
  return c;
}

evidence::RunChecks ChecksOf(const analysis::RunAnalysis& a,
                             const compare::ConfounderReport* baseline_check) {
  evidence::RunChecks c;
  c.samples_expected = a.spec().sweep.sample_count();
  for (const analysis::SampleAnalysis& s : a.evidence.samples) {
    c.samples.push_back(SampleCheckOf(s));
    c.request_errors += s.metrics.request_errors;
    c.prompt_length_mismatches += s.prompt_length_mismatches;
    for (const analysis::LogFinding& f : s.findings)
      c.log_findings.push_back({s.name, analysis::FindingKindName(f.kind), f.file, f.line, f.text});
  }
  for (const analysis::MissingSample& m : a.evidence.missing)
    c.missing_samples.push_back({m.name, m.state});
  c.evidence_problems = a.evidence.problems;
  c.baseline_comparability = a.comparability;
  if (baseline_check) c.baseline_confounders = ConfounderCheckOf(*baseline_check);
  c.spec_warnings = a.spec_warnings;
  c.warnings = a.warnings;
  return c;
}

}  // namespace

std::string ResultsCsv(const analysis::RunAnalysis& a) {
  std::vector<evidence::ResultRow> rows;
  for (const analysis::SampleAnalysis& s : a.evidence.samples)
    if (s.completed()) rows.push_back(ResultRowOf(s, a.evidence.simulated));
  return evidence::ResultsCsvText(rows);
}

std::string SummaryCsv(const analysis::RunAnalysis& a) {
  std::vector<evidence::MedianRow> rows;
  for (const analysis::PointSummary& p : a.points)
    rows.push_back(evidence::MedianRowOf(p, a.evidence.simulated));
  return evidence::SummaryCsvText(rows);
}

nlohmann::json SummaryJson(const analysis::RunAnalysis& a,
                           const compare::ConfounderReport* baseline_check) {
  evidence::RunSummary s;
  s.run_id = a.evidence.run_id;
  s.engine = a.evidence.engine;
  s.simulated = a.evidence.simulated;
  s.points = a.points;
  s.baseline = {a.baseline_layout, a.baseline_source,   a.baseline_file,
                a.baseline_note,   a.baseline_imported, a.baseline_rows};
  s.memory = a.memory;
  s.decision = a.decision;
  s.checks = ChecksOf(a, baseline_check);
  return evidence::SummaryJson(s);
}

}  // namespace ppsearch::report
