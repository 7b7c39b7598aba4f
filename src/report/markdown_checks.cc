// The checks and communication-domain sections of report.md.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "analysis/repeat_spread.h"
#include "evidence/evidence.h"
#include "evidence/point_columns.h"
#include "report/markdown.h"
#include "util/format.h"

namespace ppsearch::report {
namespace {

std::string Mib(double v) { return FormatThousands(static_cast<int64_t>(std::llround(v))); }

std::string CompletionLine(const analysis::RunAnalysis& a) {
  std::vector<std::string> short_samples;
  int completed = 0, requests_total = 0;
  for (const auto& s : a.evidence.samples) {
    if (!s.completed() || !s.trustworthy()) continue;  // impossible evidence counts nothing
    ++completed;
    requests_total = std::max(requests_total, s.requests_total());
    if (!s.all_requests_ok())
      short_samples.push_back(fmt::format("{} completed {}/{}", s.name,
                                          s.metrics.requests_completed, s.requests_total()));
  }
  std::string line;
  if (completed == 0) {
    line = "No sample completed.";
  } else if (short_samples.empty()) {
    line = fmt::format("Every completed sample ({}) completed {}/{} requests.", completed,
                       requests_total, requests_total);
  } else {
    line =
        fmt::format("{} of {} completed samples lost requests: ", short_samples.size(), completed);
    for (size_t i = 0; i < short_samples.size(); ++i) line += (i ? "; " : "") + short_samples[i];
    line += ".";
  }
  if (!a.evidence.missing.empty()) {
    line +=
        fmt::format(" {} of {} samples of the sweep did not complete: ", a.evidence.missing.size(),
                    a.spec().sweep.sample_count());
    for (size_t i = 0; i < a.evidence.missing.size() && i < 10; ++i)
      line +=
          (i ? ", " : "") + a.evidence.missing[i].name + " (" + a.evidence.missing[i].state + ")";
    if (a.evidence.missing.size() > 10)
      line += fmt::format(" and {} more", a.evidence.missing.size() - 10);
    line += ".";
  }
  if (!a.evidence.not_needed.empty())
    line += fmt::format(
        " The adaptive run did not need {} of the sweep's {} samples (see Adaptive measurement).",
        a.evidence.not_needed.size(), a.spec().sweep.sample_count());
  return line;
}

std::string FindingsLine(const analysis::RunAnalysis& a) {
  int logs = 0, request_errors = 0;
  std::vector<std::string> found;
  for (const auto& s : a.evidence.samples) {
    request_errors += s.completed() ? s.metrics.request_errors : 0;
    for (const auto& f : s.findings)
      found.push_back(fmt::format("{} in {} (`{}`)", analysis::FindingKindName(f.kind), f.Where(),
                                  f.text.substr(0, 120)));
  }
  int logs_missing = 0;
  for (const auto& s : a.evidence.samples) {
    logs += s.completed() ? 1 : 0;
    logs_missing += s.completed() ? s.logs_missing : 0;
  }
  if (found.empty() && request_errors == 0 && logs_missing == 0)
    return fmt::format(
        "No OOM, traceback, NCCL failure, CUDA error, request error or engine failure was found "
        "in any log ({} completed samples, every node's log scanned).",
        logs);
  if (found.empty() && request_errors == 0)
    return fmt::format(
        "No OOM, traceback, NCCL failure, CUDA error, request error or engine failure was found "
        "in the logs present, but {} node log{} of completed samples {} missing, so those nodes "
        "were not audited (see the evidence problems).",
        logs_missing, logs_missing == 1 ? "" : "s", logs_missing == 1 ? "is" : "are");
  std::string line =
      fmt::format("{} request error{}; {} log finding{}", request_errors,
                  request_errors == 1 ? "" : "s", found.size(), found.size() == 1 ? "" : "s");
  for (size_t i = 0; i < found.size() && i < 20; ++i) line += (i ? "; " : ": ") + found[i];
  if (found.size() > 20)
    line += fmt::format("; and {} more (summary.json lists all)", found.size() - 20);
  return line + ".";
}

// "Verdicts: 22 ok, 1 requests_failed, 1 log_findings." over the samples
// that ended with one (SampleAnalysis::has_verdict), in evidence::kVerdicts
// order; one that did not end is a missing sample.
std::string VerdictLine(const analysis::RunAnalysis& a) {
  std::string counts;
  for (const evidence::Verdict verdict : evidence::kVerdicts) {
    const auto n = std::count_if(
        a.evidence.samples.begin(), a.evidence.samples.end(),
        [&](const analysis::SampleAnalysis& s) { return s.has_verdict() && s.verdict == verdict; });
    if (n > 0)
      counts +=
          fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, evidence::VerdictName(verdict));
  }
  if (counts.empty()) return "Verdicts: no sample was analysed.";
  return "Verdicts: " + counts + ".";
}

std::vector<std::string> NonOkSampleLines(const analysis::RunAnalysis& a) {
  // Samples that did not complete and carry no engine verdict are listed
  // with the missing samples instead.
  std::vector<std::string> out;
  size_t more = 0;
  for (const auto& s : a.evidence.samples) {
    if (s.verdict == evidence::Verdict::kOk || !s.has_verdict()) continue;
    if (out.size() < 20)
      out.push_back(fmt::format("{}: {}: {}.", s.name, evidence::VerdictName(s.verdict), s.detail));
    else
      ++more;
  }
  if (more > 0) out.push_back(fmt::format("And {} more (summary.json lists all).", more));
  return out;
}

std::vector<std::string> ProblemLines(const analysis::RunAnalysis& a) {
  std::vector<std::string> out;
  for (const std::string& p : a.evidence.problems) out.push_back("Evidence problem: " + p + ".");
  for (const auto& s : a.evidence.samples)
    for (const std::string& p : s.problems)
      out.push_back(fmt::format("Evidence problem in {}: {}.", s.name, p));
  return out;
}

std::string MismatchLine(const analysis::RunAnalysis& a) {
  int mismatches = 0;
  for (const auto& s : a.evidence.samples) mismatches += s.prompt_length_mismatches;
  if (mismatches == 0)
    return "Every request's prompt length, where the server reported it, matched the length sent.";
  return fmt::format(
      "{} requests had a server-reported prompt length different from the one sent: "
      "those samples did not measure the intended workload.",
      mismatches);
}

std::string LevelsText(size_t n) {
  return n == 1   ? "at its concurrency point"
         : n == 2 ? "at both concurrency points"
                  : fmt::format("at all {} concurrency points", n);
}

// Per layout, how much its input TPS and TTFT p50 vary over the repeats at
// its worst level, or where the input TPS's is over max_repeat_spread; in
// an open loop, where the rule is not judged (analysis/repeat_spread.h), a
// first line says so and the spreads are only shown.
std::vector<std::string> StabilityLines(const analysis::RunAnalysis& a) {
  std::vector<std::string> out;
  const bool judged = analysis::RepeatSpreadJudged(a.spec());
  if (!judged)
    out.push_back(
        fmt::format("max_repeat_spread is not judged: {}. The spreads below are shown, not judged.",
                    analysis::kOpenLoopSpreadWhy));
  const double limit = a.spec().decision.max_repeat_spread;
  for (const spec::LayoutSpec& layout : a.spec().sweep.layouts) {
    double tps = 0, ttft = 0;
    size_t n = 0;
    std::vector<std::string> over, unknown;
    for (const auto& p : a.points) {
      if (!(p.layout == layout) || p.imported) continue;
      // A spread over fewer than two repeats with figures is unknown, not 0.
      const std::optional<double> tps_spread = analysis::KnownInputTpsSpread(p);
      if (!tps_spread) {
        unknown.push_back(fmt::format("C={}", p.concurrency));
        continue;
      }
      ++n;
      tps = std::max(tps, *tps_spread);
      ttft = std::max(ttft, analysis::KnownTtftP50Spread(p).value_or(0));
      if (judged && *tps_spread > limit)
        over.push_back(fmt::format("{:.2f}% at C={}", *tps_spread * 100, p.concurrency));
    }
    const std::string unknown_text =
        unknown.empty() ? ""
                        : fmt::format(
                              "fewer than two repeats with figures at {}, so how much it "
                              "varies there is unknown",
                              fmt::join(unknown, ", "));
    if (n == 0) {
      if (!unknown.empty()) out.push_back(layout.Label() + ": " + unknown_text + ".");
      continue;
    }
    std::string line =
        fmt::format("{} input TPS varies by less than {} {} (TTFT p50 by less than {})",
                    layout.Label(), LessThanPercent(tps), LevelsText(n), LessThanPercent(ttft));
    if (!over.empty())
      line = fmt::format("{} input TPS varies by more than the {:.2f}% limit: {}", layout.Label(),
                         limit * 100, fmt::join(over, ", "));
    if (!unknown.empty()) line += "; " + unknown_text;
    out.push_back(line + ".");
  }
  return out;
}

std::string StageBalanceLine(const analysis::LayoutMemory& m) {
  std::string line = fmt::format("{} peak per PP stage:", m.layout.Label());
  for (const auto& s : m.stages)
    line += fmt::format(" stage {} {} MiB,", s.pp_rank, Mib(s.peak_mib));
  line.pop_back();
  return line + fmt::format(" (spread {} MiB).", Mib(m.stage_spread_mib.value_or(0)));
}

std::string NodeNames(const analysis::RunAnalysis& a, const std::vector<int>& nodes) {
  std::string out;
  for (int n : nodes) {
    const auto& hosts = a.spec().cluster.hosts;
    out += (out.empty() ? "" : " ") +
           (n >= 0 && n < static_cast<int>(hosts.size()) ? hosts[n].name : std::to_string(n));
  }
  return out;
}

std::string CommunicationLine(const analysis::RunAnalysis& a, const plan::LayoutPlan& lp,
                              const std::string& suffix) {
  size_t span = 0;
  std::string groups;
  for (const plan::TpGroup& g : lp.tp_groups) {
    span = std::max(span, g.nodes.size());
    groups += (groups.empty() ? "" : " | ") + NodeNames(a, g.nodes);
  }
  const std::string tp =
      span <= 1 ? "each TP group is node-local" : fmt::format("each TP group spans {} nodes", span);
  const std::string hops = lp.boundaries.empty()
                               ? "no pipeline stage hops"
                               : fmt::format("{} of {} pipeline stage hops cross nodes",
                                             lp.cross_node_stage_boundaries, lp.boundaries.size());
  return fmt::format("{}{}: {} ({}); {} all-reduces per forward, {} of them across nodes; {}.",
                     lp.layout.Label(), suffix, tp, groups, lp.allreduce_per_forward,
                     lp.cross_node_allreduce_per_forward, hops);
}

}  // namespace

std::string LessThanPercent(double fraction) {
  // The smallest tenth of a percent strictly above the spread.
  const double tenths = std::floor(std::max(0.0, fraction) * 1000) + 1;
  return fmt::format("{:.1f}%", tenths / 10);
}

std::vector<std::string> CheckLines(const analysis::RunAnalysis& a) {
  std::vector<std::string> out = {CompletionLine(a), VerdictLine(a)};
  for (const std::string& line : NonOkSampleLines(a)) out.push_back(line);
  for (const std::string& line : ProblemLines(a)) out.push_back(line);
  out.push_back(FindingsLine(a));
  out.push_back(MismatchLine(a));
  for (const std::string& line : StabilityLines(a)) out.push_back(line);
  for (const auto& m : a.memory)
    if (!m.imported && !m.stages.empty()) out.push_back(StageBalanceLine(m));
  for (const std::string& w : a.spec_warnings) out.push_back("Spec warning: " + w);
  // What the planner says of one layout (a version with a PP bug, the state
  // pool's rule it assumed, KV heads replicated): the report says it too.
  if (const plan::Plan* p = a.plan())
    for (const plan::LayoutPlan& lp : p->layouts)
      for (const plan::Diagnostic& w : lp.warnings) out.push_back("Layout warning: " + w.message);
  return out;
}

std::vector<std::string> CommunicationLines(const analysis::RunAnalysis& a) {
  std::vector<std::string> out;
  if (a.baseline_plan) out.push_back(CommunicationLine(a, *a.baseline_plan, " (baseline)"));
  if (!a.plan()) return out;
  for (const plan::LayoutPlan& lp : a.plan()->layouts) {
    const bool base = a.baseline_layout && lp.layout == *a.baseline_layout;
    out.push_back(CommunicationLine(a, lp, base ? " (baseline)" : ""));
  }
  return out;
}

}  // namespace ppsearch::report
