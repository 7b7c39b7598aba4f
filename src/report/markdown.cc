#include "report/markdown.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "report/compare_render.h"
#include "report/result_table.h"
#include "util/format.h"
#include "util/json_text.h"

namespace ppsearch::report {
namespace {

std::string Mib(const std::optional<double>& v) {
  return v ? FormatThousands(static_cast<int64_t>(std::llround(*v))) : std::string("-");
}

std::string LayoutCell(const spec::LayoutSpec& l) {
  return fmt::format("{} / {} / {}", l.pp, l.tp, l.ep);
}

ResultRow ToRow(const analysis::PointSummary& p) {
  ResultRow r;
  r.layout = p.layout;
  r.concurrency = p.concurrency;
  r.input_tps = p.input_tps_median;
  r.ttft_p50_s = p.ttft_p50_s_median;
  r.ttft_p95_s = p.ttft_p95_s_median;
  r.peak_gpu_mib = p.peak_gpu_mib.value_or(0);
  r.imported = p.imported;
  return r;
}

void Bullets(const std::vector<std::string>& lines, std::string& out) {
  for (const std::string& line : lines) out += "- " + line + "\n";
}

// The calibration and noise model a simulated run used, as run.json records them.
std::string SimulationNote(const nlohmann::json& run) {
  std::string out;
  const auto calibration = run.find("calibration");
  if (calibration != run.end() && calibration->is_object() && calibration->contains("parameters") &&
      (*calibration)["parameters"].is_object()) {
    std::string params;
    for (const auto& [key, value] : (*calibration)["parameters"].items())
      if (value.is_number())
        params +=
            fmt::format("{}{} = {:.4g}", params.empty() ? "" : ", ", key, value.get<double>());
    out += " Calibration: " + params + ".";
  } else {
    out += " Uncalibrated (hardware profile as shipped).";
  }
  const auto noise = run.find("noise");
  if (noise != run.end() && noise->is_object() && noise->contains("model")) {
    const nlohmann::json& n = *noise;
    out += fmt::format(
        " Repeat noise: {}, cv {}, seed {}.",
        n["model"].is_string() ? n["model"].get<std::string>() : JsonText(n["model"]),
        n.contains("cv") ? JsonText(n["cv"]) : "?", n.contains("seed") ? JsonText(n["seed"]) : "?");
  }
  return out;
}

void RenderHeader(const analysis::RunAnalysis& a, std::string& out) {
  const spec::Spec& spec = a.spec();
  out += fmt::format("# ppsearch report: {}{}\n\n", a.evidence.run_id,
                     a.evidence.simulated ? " (simulated)" : "");
  out += fmt::format(
      "Experiment `{}`, engine `{}`{}: {} layouts x {} concurrency levels x {} repeats = {} "
      "samples of {} requests ({} input tokens, {} output {}).",
      spec.experiment.name, a.evidence.engine.empty() ? "?" : a.evidence.engine,
      spec.engine.image.empty() ? "" : ", image `" + spec.engine.image + "`",
      spec.sweep.layouts.size(), spec.sweep.concurrency.size(), spec.sweep.repeats,
      spec.sweep.sample_count(), spec.workload.requests,
      FormatThousands(spec.workload.input_tokens), FormatThousands(spec.workload.output_tokens),
      spec.workload.output_tokens == 1 ? "token" : "tokens");
  if (a.evidence.simulated) {
    out += " Every number below was **predicted by the simulator**, not measured.";
    out += SimulationNote(a.evidence.run_json);
  }
  out += "\n";
}

void RenderResults(const analysis::RunAnalysis& a, std::string& out) {
  out += "\n## Results\n\n";
  out +=
      fmt::format("Medians of the completed repeats (up to {} per point).", a.spec().sweep.repeats);
  if (a.baseline_layout && a.baseline_rows.empty())
    out += " **No baseline rows**: " + a.baseline_note + ".";
  else if (a.baseline_layout)
    out +=
        fmt::format(" Deltas are against {} at the same concurrency{}.", a.baseline_layout->Label(),
                    a.baseline_imported ? ", imported from `" + a.baseline_source + "`" : "");
  if (a.baseline_imported && !a.baseline_rows.empty() && !a.baseline_note.empty()) {
    std::string note = a.baseline_note;
    note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
    out += " " + note + ".";
  }
  out += "\n\n";
  std::vector<ResultRow> rows, baseline;
  for (const auto& p : a.baseline_rows)
    if (p.imported) rows.push_back(ToRow(p));
  for (const auto& p : a.points) rows.push_back(ToRow(p));
  for (const auto& p : a.baseline_rows) baseline.push_back(ToRow(p));
  out += RenderResultTable(rows, baseline, a.baseline_layout, /*markdown=*/true);
}

// A markdown table whose columns line up in a terminal too; the first and
// last columns (labels) are left-aligned, the numbers between right-aligned.
std::string AlignedTable(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 3);
  for (size_t i = 0; i < header.size(); ++i) {
    width[i] = std::max(width[i], header[i].size());
    for (const auto& row : rows) width[i] = std::max(width[i], row[i].size());
  }
  auto left = [&](size_t i) { return i == 0 || i + 1 == header.size(); };
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = "|";
    for (size_t i = 0; i < row.size(); ++i) {
      s += left(i) ? fmt::format(" {:<{}} |", row[i], width[i])
                   : fmt::format(" {:>{}} |", row[i], width[i]);
    }
    return s + "\n";
  };
  std::string out = line(header) + "|";
  for (size_t i = 0; i < width.size(); ++i) {
    const std::string dashes(width[i] - 1, '-');
    out += left(i) ? fmt::format(" :{} |", dashes) : fmt::format(" {}: |", dashes);
  }
  out += "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

void RenderMemory(const analysis::RunAnalysis& a, std::string& out) {
  out += "\n## Memory\n\n";
  out +=
      "Peak GPU memory is the highest per-GPU value in the post-sample snapshots across all "
      "nodes and samples; remaining is the GPU total minus that peak; stage spread is the "
      "highest minus the lowest per-stage peak.\n\n";
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const analysis::LayoutMemory& m) {
    rows.push_back({LayoutCell(m.layout) + (m.imported ? " (imported)" : ""), Mib(m.peak_gpu_mib),
                    Mib(m.gpu_total_mib), Mib(m.remaining_mib), Mib(m.stage_spread_mib),
                    m.peak_where.empty() ? "-" : m.peak_where});
  };
  for (const auto& m : a.memory)
    if (m.imported) row(m);
  for (const auto& m : a.memory)
    if (!m.imported) row(m);
  out += AlignedTable({"PP / TP / EP", "Peak GPU memory MiB", "GPU total MiB", "Remaining MiB",
                       "Stage spread MiB", "Peak on"},
                      rows);
}

void RenderDecision(const analysis::RunAnalysis& a, std::string& out) {
  const analysis::Decision& d = a.decision;
  const spec::DecisionSpec& policy = a.spec().decision;
  out += "\n## Decision\n\n";
  out += fmt::format(
      "Policy: objective `{}`, min_headroom_mib {}, max_repeat_spread {:.2f}%, failure_policy "
      "`{}`. Qualifying layouts are ranked by the geometric mean over concurrency levels of their "
      "objective median relative to the best qualifying layout at that level.\n\n",
      policy.objective, FormatThousands(static_cast<int64_t>(policy.min_headroom_mib)),
      policy.max_repeat_spread * 100, policy.failure_policy);
  if (d.primary) {
    out += fmt::format("- **Primary: {}**: {}.\n", d.primary->Label(), d.primary_reason);
    if (d.fallback)
      out += fmt::format("- **Fallback: {}**: {}.\n", d.fallback->Label(), d.fallback_reason);
    else
      out += "- **Fallback: none**: no other layout qualifies.\n";
  } else {
    out += fmt::format("**None qualifies**: {}.\n", d.none_reason);
  }
  std::vector<std::string> excluded, notes;
  for (const auto& v : d.verdicts) {
    excluded.insert(excluded.end(), v.exclusions.begin(), v.exclusions.end());
    notes.insert(notes.end(), v.notes.begin(), v.notes.end());
  }
  if (!excluded.empty()) {
    out += "\nExcluded:\n\n";
    Bullets(excluded, out);
  }
  if (!notes.empty()) {
    out += "\nNoted (not excluding):\n\n";
    Bullets(notes, out);
  }
  out += "\nFlags not to carry forward:\n\n";
  if (d.flags_not_to_carry_forward.empty())
    out += "- none: the planner raised no warning about this spec's settings.\n";
  else
    Bullets(d.flags_not_to_carry_forward, out);
}

void RenderBaseline(const analysis::RunAnalysis& a, const compare::ConfounderReport* check,
                    std::string& out) {
  if (!a.baseline_imported && a.comparability.empty()) return;
  out += "\n## Baseline comparability\n\n";
  if (a.comparability.empty() && check == nullptr) {
    out += fmt::format("The imported baseline `{}` matches this run in everything checked.\n",
                       a.baseline_source);
    return;
  }
  for (const std::string& w : a.comparability) out += "- warning: " + w + "\n";
  if (check == nullptr) return;
  out += fmt::format(
      "{}Confounders: this run (A) against the imported baseline `{}` (B), every recorded "
      "setting besides layout and concurrency:\n\n",
      a.comparability.empty() ? "" : "\n", a.baseline_source);
  out += RenderConfounders(*check, true);
}

void RenderReproduce(const analysis::RunAnalysis& a, std::string& out) {
  out += "\n## How to reproduce\n\n```sh\n";
  out += a.evidence.command_line.empty() ? "# (run.json has no command_line)\n"
                                         : a.evidence.command_line + "\n";
  out += "ppsearch report " + a.evidence.run_dir + "\n```\n";
}

}  // namespace

std::string RenderReportMarkdown(const analysis::RunAnalysis& a,
                                 const compare::ConfounderReport* baseline_check) {
  std::string out;
  RenderHeader(a, out);
  RenderResults(a, out);
  RenderMemory(a, out);
  out += "\n## Checks\n\n";
  Bullets(CheckLines(a), out);
  const std::vector<std::string> comm = CommunicationLines(a);
  if (!comm.empty()) {
    out += "\n## Communication domains\n\n";
    out +=
        "From the planner's rank map (two TP all-reduces per layer plus the embedding's; "
        "moe-a2a-backend none).\n\n";
    Bullets(comm, out);
  }
  RenderDecision(a, out);
  RenderBaseline(a, baseline_check, out);
  if (!a.warnings.empty()) {
    out += "\n## Evidence warnings\n\n";
    Bullets(a.warnings, out);
  }
  RenderReproduce(a, out);
  return out;
}

}  // namespace ppsearch::report
