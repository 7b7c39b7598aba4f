#include "analysis/sample.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "evidence/evidence.h"

namespace ppsearch::analysis {

bool SampleAnalysis::Holds(double stats::Figures::*member) const {
  if (!synthesized) return true;
  using F = stats::Figures;
  // Derived from the input TPS the records reproduce.
  if (member == &F::request_rps || member == &F::input_tps_per_gpu) member = &F::input_tps;
  const std::string name = stats::FieldOf(member)->name;
  return std::find(figures_from_file.begin(), figures_from_file.end(), name) !=
         figures_from_file.end();
}

int SampleAnalysis::requests_total() const {
  return std::max(metrics.requests_total, requests_expected);
}

bool SampleAnalysis::all_requests_ok() const {
  return requests_total() > 0 && metrics.requests_completed == requests_total() &&
         metrics.request_errors == 0;
}

bool SampleAnalysis::passes_validity_gate() const {
  return empty_outputs == 0 && prompt_length_mismatches == 0 &&
         !(min_window_s > 0 && metrics.duration_s < min_window_s);
}

bool SampleAnalysis::valid() const {
  return completed() && verdict == evidence::Verdict::kOk && problems.empty();
}

namespace {

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

evidence::Verdict SampleVerdict(const SampleAnalysis& s) {
  if (!s.trustworthy()) return evidence::Verdict::kInvalidEvidence;
  if (s.engine_verdict && evidence::IsEngineVerdict(*s.engine_verdict)) return *s.engine_verdict;
  if (!s.all_requests_ok() || !s.passes_validity_gate()) return evidence::Verdict::kRequestsFailed;
  if (!s.findings.empty()) return evidence::Verdict::kLogFindings;
  return evidence::Verdict::kOk;
}

std::string SampleVerdictDetail(const SampleAnalysis& s) {
  const evidence::Verdict verdict = SampleVerdict(s);
  if (verdict == evidence::Verdict::kInvalidEvidence) {
    std::string kinds;
    for (const evidence::EvidenceProblem& p : s.invalid_evidence)
      if (kinds.find(p.kind) == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + p.kind;
    return "the evidence cannot be true (" + kinds + "); its numbers are left out";
  }
  if (evidence::IsEngineVerdict(verdict))
    return s.engine_detail.empty()
               ? std::string("the engine reported ") + evidence::VerdictName(verdict)
               : s.engine_detail;
  std::vector<std::string> why;
  if (!s.all_requests_ok()) {
    std::string text = fmt::format("{} of {} requests completed", s.metrics.requests_completed,
                                   s.requests_total());
    if (s.metrics.request_errors > 0)
      text += " (" + Plural(s.metrics.request_errors, "request error", "request errors") + ")";
    if (s.metrics.requests_total < s.requests_total())
      text += fmt::format(" ({} without a record)", s.requests_total() - s.metrics.requests_total);
    why.push_back(text);
  }
  if (s.empty_outputs > 0)
    why.push_back(fmt::format("{} returned no generated token (asked for {})",
                              Plural(s.empty_outputs, "ok request", "ok requests"),
                              s.output_tokens_asked));
  if (s.prompt_length_mismatches > 0)
    why.push_back(fmt::format("{} a server-reported prompt length different from the one sent",
                              Plural(s.prompt_length_mismatches, "request had", "requests had")));
  if (s.min_window_s > 0 && s.metrics.duration_s < s.min_window_s)
    why.push_back(fmt::format("the measured window of {:.3f} s is shorter than the {} s minimum",
                              s.metrics.duration_s, s.min_window_s));
  if (verdict == evidence::Verdict::kLogFindings) {
    const LogFinding* f = MostSevere(s.findings);
    why.push_back(
        fmt::format("{} in {}", FindingKindName(f->kind), f->Where()) +
        (s.findings.size() > 1 ? fmt::format(" ({} log findings)", s.findings.size()) : ""));
  }
  if (why.empty()) return "every request ok, no log finding";
  std::string out;
  for (const std::string& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

SampleInputs SampleInputsFor(const spec::Spec& spec, const evidence::SampleId& id) {
  SampleInputs in;
  in.id = id;
  in.requests_expected = spec.workload.requests;
  in.output_tokens_asked = spec.workload.output_tokens;
  in.max_input_tokens = evidence::MaxInputTokens(spec.workload);
  in.max_output_tokens = evidence::MaxOutputTokens(spec.workload);
  in.sla = spec.decision.sla;
  in.min_window_s = spec.lifecycle.min_window_s;
  in.deadline_s = evidence::SampleDeadlineS(spec, id.concurrency);
  return in;
}

namespace {

std::vector<evidence::EvidenceProblem> CheckEvidence(const SampleInputs& in) {
  std::vector<evidence::EvidenceProblem> out;
  const std::string name = in.id.str();
  const evidence::RecordLimits limits{in.requests_expected,
                                      static_cast<int64_t>(std::llround(in.deadline_s * 1e9)),
                                      in.synthesized ? 0 : in.id.concurrency,
                                      in.max_input_tokens,
                                      in.max_output_tokens,
                                      in.noise_factor};
  for (auto& p : evidence::CheckRecords(in.records, limits, evidence::RunPaths{}.raw(name)))
    out.push_back(std::move(p));
  for (const NodeGpuSnapshot& node : in.gpu)
    for (auto& p : evidence::CheckGpuSnapshot(node.gpus, evidence::RunPaths{}.gpu(name, node.host)))
      out.push_back(std::move(p));
  return out;
}

// Request metrics and GPU peaks, from evidence that passed CheckEvidence.
void Measure(const SampleInputs& in, SampleAnalysis& out) {
  out.metrics = stats::ComputeSampleMetrics(in.records, in.sla);
  for (const auto& r : in.records) {
    if (r.ok() && r.reported_input_tokens >= 0 && r.reported_input_tokens != r.input_tokens)
      ++out.prompt_length_mismatches;
    if (r.ok() && in.output_tokens_asked >= 1 && r.output_tokens == 0) ++out.empty_outputs;
  }
  // A node's CSV may hold several snapshots: keep each GPU's highest reading.
  std::map<std::pair<std::string, int>, size_t> index;
  for (const NodeGpuSnapshot& node : in.gpu) {
    for (const nvidia_smi::GpuMemory& g : node.gpus) {
      if (!g.used_mib) continue;
      auto key = std::make_pair(node.host, g.index);
      auto it = index.find(key);
      if (it == index.end()) {
        index[key] = out.gpus.size();
        out.gpus.push_back({node.host, node.node, g.index, *g.used_mib, g.total_mib.value_or(0)});
        continue;
      }
      GpuPeak& peak = out.gpus[it->second];
      peak.used_mib = std::max(peak.used_mib, *g.used_mib);
      peak.total_mib = std::max(peak.total_mib, g.total_mib.value_or(0));
    }
  }
  for (const GpuPeak& g : out.gpus) {
    auto node = std::find_if(out.nodes.begin(), out.nodes.end(),
                             [&g](const NodePeak& n) { return n.host == g.host; });
    if (node == out.nodes.end()) {
      out.nodes.push_back({g.host, g.used_mib, g.total_mib});
    } else if (g.used_mib > node->used_mib) {
      node->used_mib = g.used_mib;
      node->total_mib = g.total_mib;
    }
    if (!out.peak_gpu_mib || g.used_mib > *out.peak_gpu_mib) {
      out.peak_gpu_mib = g.used_mib;
      out.gpu_total_mib = g.total_mib;
    }
    if (g.total_mib > 0) {
      const double headroom = g.total_mib - g.used_mib;
      if (!out.headroom_mib || headroom < *out.headroom_mib) out.headroom_mib = headroom;
    }
  }
}

}  // namespace

SampleAnalysis AnalyseSample(const SampleInputs& in) {
  SampleAnalysis out;
  out.id = in.id;
  out.name = in.id.str();
  out.state = in.state;
  out.requests_expected = in.requests_expected;
  out.output_tokens_asked = in.output_tokens_asked;
  out.min_window_s = in.min_window_s;
  out.engine_verdict = in.engine_verdict;
  out.ready_s = in.ready_s;
  out.synthesized = in.synthesized;
  out.figures_from_file = in.figures_from_file;
  out.disaggregation = in.disaggregation;
  out.engine_detail = in.engine_detail;
  out.logs_missing = in.logs_missing;
  out.problems = in.problems;
  out.invalid_evidence = in.invalid_evidence;
  // Only a completed sample's evidence is held to account (as its missing
  // files are); a failed one's impossible numbers are still not computed.
  std::vector<evidence::EvidenceProblem> impossible = CheckEvidence(in);
  const bool measurable = impossible.empty() && in.invalid_evidence.empty();
  if (out.completed())
    out.invalid_evidence.insert(out.invalid_evidence.end(), impossible.begin(), impossible.end());
  for (const evidence::EvidenceProblem& p : out.invalid_evidence) out.problems.push_back(p.Text());
  for (const LogText& log : in.logs) {
    std::vector<LogFinding> found = ScanLog(log.text, log.file);
    out.findings.insert(out.findings.end(), found.begin(), found.end());
  }
  if (measurable) Measure(in, out);
  out.verdict = SampleVerdict(out);
  out.detail = SampleVerdictDetail(out);
  return out;
}

}  // namespace ppsearch::analysis
