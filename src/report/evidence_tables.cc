#include "report/evidence_tables.h"

#include "decide/sla.h"
#include "evidence/medians_csv.h"
#include "evidence/results_csv.h"
#include "report/compare_render.h"

namespace ppsearch::report {
namespace {

nlohmann::json Opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json LayoutJson(const spec::LayoutSpec& l) {
  return {{"pp", l.pp},        {"tp", l.tp}, {"ep", l.ep}, {"dp", l.dp}, {"instances", l.instances},
          {"label", l.Label()}};
}

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
  if (!s.trustworthy()) return r;
  r.requests_completed = m.requests_completed;
  r.requests_total = s.requests_total();
  r.request_errors = m.request_errors;
  r.input_tps = m.input_tps;
  r.ttft_mean_s = m.ttft_s.mean;
  r.ttft_p50_s = m.ttft_s.p50;
  r.ttft_p95_s = m.ttft_s.p95;
  r.ttft_p99_s = m.ttft_s.p99;
  r.e2e_p50_s = m.e2e_s.p50;
  r.peak_gpu_mib = s.peak_gpu_mib;
  r.gpu_total_mib = s.gpu_total_mib;
  r.goodput_rps = m.goodput_rps;
  if (m.tpot_requests > 0) {  // a decode sample
    r.output_tps = m.output_tps;
    r.output_tps_per_gpu = m.output_tps / static_cast<double>(s.id.layout.gpus());
    r.tpot_p50_s = m.tpot_s.p50;
    r.tpot_p99_s = m.tpot_s.p99;
    r.itl_p50_s = m.itl_s.p50;
    r.itl_p99_s = m.itl_s.p99;
  }
  return r;
}

// summary.csv's row of a point (evidence/medians_csv owns the format).
evidence::MedianRow SummaryRow(const analysis::PointSummary& p, bool simulated) {
  evidence::MedianRow r;
  r.layout = p.layout;
  r.concurrency = p.concurrency;
  r.repeats = p.repeats;
  r.valid_repeats = p.valid_repeats;
  r.requests_completed = p.requests_completed;
  r.requests_total = p.requests_total;
  r.input_tps_median = p.input_tps_median;
  r.input_tps_spread = p.input_tps_spread;
  r.ttft_p50_s_median = p.ttft_p50_s_median;
  r.ttft_p50_s_spread = p.ttft_p50_s_spread;
  r.ttft_p95_s_median = p.ttft_p95_s_median;
  r.peak_gpu_mib = p.peak_gpu_mib;
  r.gpu_total_mib = p.gpu_total_mib;
  r.headroom_mib = p.headroom_mib;
  r.input_tps_vs_baseline = p.input_tps_vs_baseline;
  r.ttft_p50_vs_baseline = p.ttft_p50_vs_baseline;
  r.simulated = simulated;
  r.output_tps_median = p.output_tps_median;
  r.output_tps_per_gpu_median = p.output_tps_per_gpu_median;
  r.ttft_p99_s_median = p.ttft_p99_s_median;
  if (p.decode) {
    r.tpot_p99_s_median = p.tpot_p99_s_median;
    r.itl_p99_s_median = p.itl_p99_s_median;
  }
  r.e2e_p99_s_median = p.e2e_p99_s_median;
  r.goodput_rps_median = p.goodput_rps_median;
  return r;
}

// A decode figure, or unknown (null, an empty cell) for a prefill-only point.
std::optional<double> DecodeOnly(const analysis::PointSummary& p, double v) {
  return p.decode ? std::optional<double>(v) : std::nullopt;
}

nlohmann::json PointJson(const analysis::PointSummary& p) {
  return {{"layout", LayoutJson(p.layout)},
          {"concurrency", p.concurrency},
          {"repeats", p.repeats},
          {"valid_repeats", p.valid_repeats},
          {"requests_completed", p.requests_completed},
          {"requests_total", p.requests_total},
          {"input_tps_median", p.input_tps_median},
          {"input_tps_spread", p.input_tps_spread},
          {"ttft_mean_s_median", p.ttft_mean_s_median},
          {"ttft_p50_s_median", p.ttft_p50_s_median},
          {"ttft_p50_s_spread", p.ttft_p50_s_spread},
          {"ttft_p95_s_median", p.ttft_p95_s_median},
          {"ttft_p99_s_median", p.ttft_p99_s_median},
          {"e2e_p50_s_median", p.e2e_p50_s_median},
          {"e2e_p99_s_median", p.e2e_p99_s_median},
          {"goodput_rps_median", p.goodput_rps_median},
          {"decode", p.decode},
          {"output_tps_median", Opt(DecodeOnly(p, p.output_tps_median))},
          {"output_tps_per_gpu_median", Opt(DecodeOnly(p, p.output_tps_per_gpu_median))},
          {"tpot_p50_s_median", Opt(DecodeOnly(p, p.tpot_p50_s_median))},
          {"output_tps_per_user", Opt(DecodeOnly(p, p.output_tps_per_user))},
          {"tpot_p99_s_median", Opt(DecodeOnly(p, p.tpot_p99_s_median))},
          {"itl_p99_s_median", Opt(DecodeOnly(p, p.itl_p99_s_median))},
          {"peak_gpu_mib", Opt(p.peak_gpu_mib)},
          {"gpu_total_mib", Opt(p.gpu_total_mib)},
          {"headroom_mib", Opt(p.headroom_mib)},
          {"input_tps_vs_baseline", Opt(p.input_tps_vs_baseline)},
          {"ttft_p50_vs_baseline", Opt(p.ttft_p50_vs_baseline)},
          {"is_baseline", p.is_baseline},
          {"imported", p.imported}};
}

nlohmann::json MemoryJson(const analysis::LayoutMemory& m) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : m.stages)
    stages.push_back({{"pp_rank", s.pp_rank}, {"peak_mib", s.peak_mib}});
  return {{"layout", LayoutJson(m.layout)},
          {"peak_gpu_mib", Opt(m.peak_gpu_mib)},
          {"gpu_total_mib", Opt(m.gpu_total_mib)},
          {"remaining_mib", Opt(m.remaining_mib)},
          {"headroom_mib", Opt(m.headroom_mib)},
          {"peak_where", m.peak_where},
          {"stages", stages},
          {"stage_spread_mib", Opt(m.stage_spread_mib)},
          {"imported", m.imported}};
}

nlohmann::json DecisionJson(const analysis::Decision& d) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : d.verdicts) {
    nlohmann::json misses = nlohmann::json::array();
    for (const analysis::SlaMissAt& at : v.sla_misses)
      misses.push_back({{"concurrency", at.concurrency},
                        {"key", decide::Info(at.miss.metric).key},
                        {"value_s", at.miss.value_s},
                        {"limit_s", at.miss.limit_s},
                        {"over", at.miss.over()}});
    verdicts.push_back({{"layout", LayoutJson(v.layout)},
                        {"qualifies", v.qualifies},
                        {"score", v.score},
                        {"headroom_mib", Opt(v.headroom_mib)},
                        {"sla_misses", misses},
                        {"exclusions", v.exclusions},
                        {"notes", v.notes}});
  }
  nlohmann::json sla = nlohmann::json::object();
  for (decide::SlaMetric m : decide::kSlaMetrics)
    if (d.sla[m]) sla[decide::Info(m).key] = *d.sla[m] * decide::Info(m).per_second;
  return {{"objective", d.objective},
          {"sla", sla},
          {"primary", d.primary ? LayoutJson(*d.primary) : nlohmann::json()},
          {"primary_reason", d.primary_reason},
          {"fallback", d.fallback ? LayoutJson(*d.fallback) : nlohmann::json()},
          {"fallback_reason", d.fallback_reason},
          {"none_reason", d.none_reason},
          {"verdicts", verdicts},
          {"flags_not_to_carry_forward", d.flags_not_to_carry_forward}};
}

nlohmann::json SampleJson(const analysis::SampleAnalysis& s) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : s.nodes)
    nodes.push_back({{"host", n.host}, {"peak_used_mib", n.used_mib}, {"total_mib", n.total_mib}});
  nlohmann::json invalid = nlohmann::json::array();
  for (const evidence::EvidenceProblem& p : s.invalid_evidence)
    invalid.push_back({{"kind", p.kind}, {"file", p.file}, {"detail", p.detail}});
  nlohmann::json j = {{"sample", s.name},
                      {"state", evidence::SampleStateName(s.state)},
                      {"valid", s.valid()},
                      {"requests_completed", s.metrics.requests_completed},
                      {"requests_total", s.requests_total()},
                      {"request_errors", s.metrics.request_errors},
                      {"prompt_length_mismatches", s.prompt_length_mismatches},
                      {"input_tps", s.metrics.input_tps},
                      {"ttft_p50_s", s.metrics.ttft_s.p50},
                      {"findings", s.findings.size()},
                      {"peak_gpu_mib", Opt(s.peak_gpu_mib)},
                      {"headroom_mib", Opt(s.headroom_mib)},
                      {"nodes", nodes},
                      {"problems", s.problems},
                      {"invalid_evidence", invalid},
                      {"verdict", evidence::VerdictName(s.verdict)},
                      {"detail", s.detail}};
  // Impossible evidence measured nothing: unknown, not zero.
  if (!s.trustworthy())
    for (const char* key : {"requests_completed", "requests_total", "request_errors",
                            "prompt_length_mismatches", "input_tps", "ttft_p50_s"})
      j[key] = nullptr;
  return j;
}

nlohmann::json ChecksJson(const analysis::RunAnalysis& a,
                          const compare::ConfounderReport* baseline_check) {
  nlohmann::json missing = nlohmann::json::array();
  for (const auto& m : a.evidence.missing)
    missing.push_back({{"sample", m.name}, {"state", m.state}});
  nlohmann::json findings = nlohmann::json::array();
  int request_errors = 0, mismatches = 0;
  for (const auto& s : a.evidence.samples) {
    request_errors += s.metrics.request_errors;
    mismatches += s.prompt_length_mismatches;
    for (const auto& f : s.findings)
      findings.push_back({{"sample", s.name},
                          {"kind", analysis::FindingKindName(f.kind)},
                          {"file", f.file},
                          {"line", f.line},
                          {"text", f.text}});
  }
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& s : a.evidence.samples) samples.push_back(SampleJson(s));
  return {{"samples_expected", a.spec().sweep.sample_count()},
          {"samples", samples},
          {"missing_samples", missing},
          {"incomplete", a.incomplete()},
          {"request_errors", request_errors},
          {"prompt_length_mismatches", mismatches},
          {"log_findings", findings},
          {"evidence_problems", a.evidence.problems},
          {"baseline_comparability", a.comparability},
          {"baseline_confounders",
           baseline_check ? ConfoundersJson(*baseline_check) : nlohmann::json(nullptr)},
          {"spec_warnings", a.spec_warnings},
          {"warnings", a.warnings}};
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
    rows.push_back(SummaryRow(p, a.evidence.simulated));
  return evidence::SummaryCsvText(rows);
}

nlohmann::json SummaryJson(const analysis::RunAnalysis& a,
                           const compare::ConfounderReport* baseline_check) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : a.points) points.push_back(PointJson(p));
  nlohmann::json baseline_rows = nlohmann::json::array();
  for (const auto& p : a.baseline_rows) baseline_rows.push_back(PointJson(p));
  nlohmann::json memory = nlohmann::json::array();
  for (const auto& m : a.memory) memory.push_back(MemoryJson(m));
  return {{"schema_version", kReportSchemaVersion},
          {"run_id", a.evidence.run_id},
          {"engine", a.evidence.engine},
          {"simulated", a.evidence.simulated},
          {"points", points},
          {"baseline",
           {{"layout", a.baseline_layout ? LayoutJson(*a.baseline_layout) : nlohmann::json()},
            {"source", a.baseline_source},
            {"file", a.baseline_file},
            {"note", a.baseline_note},
            {"imported", a.baseline_imported},
            {"rows", baseline_rows}}},
          {"memory", memory},
          {"decision", DecisionJson(a.decision)},
          {"checks", ChecksJson(a, baseline_check)}};
}

}  // namespace ppsearch::report
