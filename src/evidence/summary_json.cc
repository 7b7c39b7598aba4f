#include "evidence/summary_json.h"

#include "evidence/point_columns.h"

namespace ppsearch::evidence {
namespace {

template <typename T>
nlohmann::json Opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json OptLayout(const std::optional<spec::LayoutSpec>& l) {
  return l ? SummaryLayoutJson(*l) : nlohmann::json();
}

// The point's layout and flags, then every column of PointColumns() (null
// where unset: an unknown figure, or a decode figure of a prefill-only point).
nlohmann::json PointJson(const PointSummary& p) {
  nlohmann::json j = {{"layout", SummaryLayoutJson(p.layout)},
                      {"concurrency", p.concurrency},
                      {"decode", p.median.decode},
                      {"is_baseline", p.is_baseline},
                      {"imported", p.imported}};
  for (const PointColumn& c : PointColumns()) {
    const std::optional<double> v = ValueOf(c, p);
    j[c.name] = !v                   ? nlohmann::json()
                : c.count != nullptr ? nlohmann::json(p.*c.count)
                                     : nlohmann::json(*v);
  }
  return j;
}

nlohmann::json PointsJson(const std::vector<PointSummary>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const PointSummary& p : points) out.push_back(PointJson(p));
  return out;
}

nlohmann::json MemoryJson(const LayoutMemory& m) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StagePeak& s : m.stages)
    stages.push_back({{"pp_rank", s.pp_rank}, {"peak_mib", s.peak_mib}});
  return {{"layout", SummaryLayoutJson(m.layout)},
          {"peak_gpu_mib", Opt(m.peak_gpu_mib)},
          {"gpu_total_mib", Opt(m.gpu_total_mib)},
          {"remaining_mib", Opt(m.remaining_mib)},
          {"headroom_mib", Opt(m.headroom_mib)},
          {"peak_where", m.peak_where},
          {"stages", stages},
          {"stage_spread_mib", Opt(m.stage_spread_mib)},
          {"imported", m.imported}};
}

nlohmann::json DecisionJson(const Decision& d) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const LayoutVerdict& v : d.verdicts) {
    nlohmann::json misses = nlohmann::json::array();
    for (const SlaMissAt& at : v.sla_misses)
      misses.push_back({{"concurrency", at.concurrency},
                        {"key", decide::Info(at.miss.metric).key},
                        {"value_s", at.miss.value_s},
                        {"limit_s", at.miss.limit_s},
                        {"over", at.miss.over()}});
    verdicts.push_back({{"layout", SummaryLayoutJson(v.layout)},
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
  return {{"objective", d.objective.name()},
          {"sla", sla},
          {"primary", OptLayout(d.primary)},
          {"primary_reason", d.primary_reason},
          {"fallback", OptLayout(d.fallback)},
          {"fallback_reason", d.fallback_reason},
          {"none_reason", d.none_reason},
          {"verdicts", verdicts},
          {"flags_not_to_carry_forward", d.flags_not_to_carry_forward}};
}

nlohmann::json SampleJson(const SampleCheck& s) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const SampleCheck::Node& n : s.nodes)
    nodes.push_back(
        {{"host", n.host}, {"peak_used_mib", n.peak_used_mib}, {"total_mib", n.total_mib}});
  nlohmann::json invalid = nlohmann::json::array();
  for (const EvidenceProblem& p : s.invalid_evidence)
    invalid.push_back({{"kind", p.kind}, {"file", p.file}, {"detail", p.detail}});
  return {{"sample", s.sample},
          {"state", SampleStateName(s.state)},
          {"valid", s.valid},
          {"requests_completed", Opt(s.requests_completed)},
          {"requests_total", Opt(s.requests_total)},
          {"request_errors", Opt(s.request_errors)},
          {"prompt_length_mismatches", Opt(s.prompt_length_mismatches)},
          {"input_tps", Opt(s.input_tps)},
          {"ttft_p50_s", Opt(s.ttft_p50_s)},
          {"findings", s.findings},
          {"peak_gpu_mib", Opt(s.peak_gpu_mib)},
          {"headroom_mib", Opt(s.headroom_mib)},
          {"nodes", nodes},
          {"problems", s.problems},
          {"invalid_evidence", invalid},
          {"verdict", s.verdict ? nlohmann::json(VerdictName(*s.verdict)) : nlohmann::json()},
          {"detail", s.detail}};
}

nlohmann::json ChecksJson(const RunChecks& c) {
  nlohmann::json samples = nlohmann::json::array();
  for (const SampleCheck& s : c.samples) samples.push_back(SampleJson(s));
  nlohmann::json missing = nlohmann::json::array();
  for (const MissingSampleCheck& m : c.missing_samples)
    missing.push_back({{"sample", m.sample}, {"state", m.state}});
  nlohmann::json findings = nlohmann::json::array();
  for (const LogFindingCheck& f : c.log_findings)
    findings.push_back({{"sample", f.sample},
                        {"kind", f.kind},
                        {"file", f.file},
                        {"line", f.line},
                        {"text", f.text}});
  return {
      {"samples_expected", c.samples_expected},
      {"samples", samples},
      {"missing_samples", missing},
      {"incomplete", !c.missing_samples.empty()},
      {"request_errors", c.request_errors},
      {"prompt_length_mismatches", c.prompt_length_mismatches},
      {"log_findings", findings},
      {"evidence_problems", c.evidence_problems},
      {"baseline_comparability", c.baseline_comparability},
      {"baseline_confounders", c.baseline_confounders ? ConfounderCheckJson(*c.baseline_confounders)
                                                      : nlohmann::json(nullptr)},
      {"spec_warnings", c.spec_warnings},
      {"warnings", c.warnings}};
}

}  // namespace

nlohmann::json ConfounderCheckJson(const ConfounderCheck& check) {
  nlohmann::json diffs = nlohmann::json::array();
  for (const ConfounderCheck::Difference& d : check.differences)
    diffs.push_back({{"key", d.key},
                     {"setting", d.setting},
                     {"kind", d.kind},
                     {"class", d.severity},
                     {"reason", d.reason},
                     {"a", d.a},
                     {"b", d.b}});
  return {{"differences", diffs},
          {"unchecked", check.unchecked},
          {"comparable", check.comparable},
          {"verdict", check.verdict}};
}

nlohmann::json SummaryJson(const RunSummary& s) {
  nlohmann::json memory = nlohmann::json::array();
  for (const LayoutMemory& m : s.memory) memory.push_back(MemoryJson(m));
  return {{"schema_version", kSummarySchemaVersion},
          {"run_id", s.run_id},
          {"engine", s.engine},
          {"simulated", s.simulated},
          {"points", PointsJson(s.points)},
          {"baseline",
           {{"layout", OptLayout(s.baseline.layout)},
            {"source", s.baseline.source},
            {"file", s.baseline.file},
            {"note", s.baseline.note},
            {"imported", s.baseline.imported},
            {"rows", PointsJson(s.baseline.rows)}}},
          {"memory", memory},
          {"decision", DecisionJson(s.decision)},
          {"checks", ChecksJson(s.checks)}};
}

nlohmann::json SummaryLayoutJson(const spec::LayoutSpec& l) {
  if (l.disaggregated())
    return {{"prefill", SummaryLayoutJson(l.prefill())},
            {"decode", SummaryLayoutJson(l.decode())},
            {"label", l.Label()}};
  return {{"pp", l.pp},        {"tp", l.tp}, {"ep", l.ep}, {"dp", l.dp}, {"instances", l.instances},
          {"label", l.Label()}};
}

}  // namespace ppsearch::evidence
