#include "backtest/backtest_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "cost/calibration.h"
#include "cost/parameters.h"
#include "decide/steady_state.h"
#include "table/table.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::backtest {
namespace {

std::string Value(double v, const std::string& unit) {
  if (unit == "x") return FormatNumber(v, 2) + " x";
  if (unit == "s") return FormatNumber(v, 2) + " s";
  if (unit == "ms") return FormatNumber(v, 2) + " ms";
  if (unit == "GiB") return FormatNumber(v, 2) + " GiB";
  if (unit == "tokens") return FormatNumber(v, 0);
  return FormatNumber(v, 1);
}

std::string Tolerance(double t) { return FormatPercent(t, 0); }

// "# not predicted: a, b: why", one line per reason,
// naming every configuration that has it.
std::string NotPredictedLines(const CaseResult& c) {
  std::vector<std::pair<std::string, std::string>> reasons;  // (reason, names)
  for (const ConfigurationResult& r : c.configurations) {
    const std::string& why = r.prediction.not_predicted;
    if (why.empty()) continue;
    auto it =
        std::find_if(reasons.begin(), reasons.end(), [&](const auto& x) { return x.first == why; });
    const std::string& named = r.name;
    if (it == reasons.end())
      reasons.push_back({why, named});
    else
      it->second += ", " + named;
  }
  std::string out;
  for (const auto& [why, names] : reasons) out += "# not predicted: " + names + ": " + why + "\n";
  return out;
}

// "3.04 x - 3.91 x", "fit" for a residual (what the fit saw carries no
// interval), "priors" for a deployment's figure (predicted uncalibrated,
// with none drawn).
std::string IntervalCell(const FigureResult& f) {
  if (f.deployment) return "(priors)";
  if (!f.has_interval) return "(fit)";
  return Value(f.interval.low, f.unit) + " - " + Value(f.interval.high, f.unit);
}

std::string ModelFormCell(const FigureResult& f) {
  return f.has_interval ? "+-" + FormatPercent(f.model_form_rel, 1) : "";
}

std::string InsideCell(const FigureResult& f) {
  if (!f.has_interval) return "";
  return std::string(f.inside ? "yes" : "no") + (f.held_out ? "" : " (fit)");
}

// "7/8 held-out figures inside their 10-90% interval (87.5%, nominal 80%), mean width 21.0%".
std::string CoverageLine(const CoverageCount& c) {
  if (c.figures == 0) return "no held-out figure carries an interval";
  return fmt::format(
      "{}/{} held-out figures inside their 10-90% interval ({}, nominal {}), mean interval "
      "width {} of the prediction (model form fitted leave-one-case-out){}",
      c.inside, c.figures, FormatPercent(c.coverage, 1), FormatPercent(kNominalCoverage, 0),
      FormatPercent(c.mean_interval_width, 1),
      c.stated == 0 ? "" : fmt::format("; {} stated misses not counted", c.stated));
}

// The uncalibrated figures' coverage and how far off they are: "the same
// cases predicted with no calibration: 9/12 held-out figures inside ...;
// median |error| 21.3%".
std::string UncalibratedLine(const std::vector<CaseResult>& cases, const Coverage& coverage) {
  std::vector<double> errors;
  for (const CaseResult& c : cases)
    for (const FigureResult& f : c.uncalibrated)
      if (f.known_miss.empty() && std::isfinite(f.error)) errors.push_back(std::fabs(f.error));
  std::string out =
      "the same cases predicted with no calibration: " + CoverageLine(coverage.uncalibrated);
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    out += "; median |error| " + FormatPercent(errors[errors.size() / 2], 1) + " of " +
           std::to_string(errors.size()) + " figures";
  }
  return out;
}

// "deepseek-v3" for .../deepseek-v3/config.json: the folder names the model.
std::string ModelName(const std::string& config_path) {
  const std::string dir = DirName(config_path);
  const bool json = config_path.size() > 5 && config_path.ends_with(".json");
  const std::string& path = json && !dir.empty() ? dir : config_path;
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  return lines;
}

struct Totals {
  int figures = 0, within = 0, stated = 0, signs = 0, right = 0, refusals = 0, refused = 0;
};

// ", 2/2 refusals right" when the cases check any.
std::string RefusalCount(int right, int total) {
  return total == 0 ? "" : fmt::format(", {}/{} refusals right", right, total);
}

Totals Sum(const std::vector<CaseResult>& cases) {
  Totals t;
  for (const CaseResult& c : cases) {
    t.figures += static_cast<int>(c.figures.size());
    t.within += c.figures_within();
    for (const FigureResult& f : c.figures) t.stated += !f.within && f.accepted();
    t.signs += static_cast<int>(c.signs.size());
    t.right += c.signs_right();
    t.refusals += static_cast<int>(c.refusals.size());
    t.refused += c.refusals_right();
  }
  return t;
}

// Each configuration's simulated sample, for the steady-state rule.
std::vector<decide::LoopSample> Samples(const CaseResult& c) {
  std::vector<decide::LoopSample> out;
  for (const ConfigurationResult& r : c.configurations) out.push_back(r.sample);
  return out;
}

std::string NotSteady(const ConfigurationResult& r) {
  return decide::NotSteady(r.sample.concurrency, r.sample.requests);
}

void RenderCase(const CaseResult& c, std::string& out) {
  out += fmt::format("# case {} ({}), tolerance {}\n", c.name, c.path, Tolerance(c.tolerance));
  for (const FamilyFit& f : c.fits) {
    std::string names;
    for (const auto& n : f.configurations) names += (names.empty() ? "" : ", ") + n;
    out += fmt::format("# calibrated {} on {}\n", ModelName(f.model), names);
    // The fit's own account of what it could not reach (cost::Calibration::infeasible).
    for (const std::string& s : f.calibration.infeasible) out += "#   fit: " + s + "\n";
    for (const std::string& s : f.calibration.off_prior) out += "#   off prior: " + s + "\n";
  }
  for (const ConfigurationResult& r : c.configurations)
    if (!r.calibration_from.empty())
      out += fmt::format("# {} ({}, quantization {}) is predicted with the fit of {}\n", r.name,
                         ModelName(r.model), r.weights, r.calibration_from);
  table::Table configurations{{"configuration", "layout", "hardware", "weights", "chunk", "dynamic",
                               "C", "input TPS", "TTFT p50", "TPOT p50"},
                              {},
                              {true, true, true, true, false, false, false, false, false, false}};
  for (const ConfigurationResult& r : c.configurations)
    configurations.rows.push_back(
        {r.name + (r.calibrated_on ? " *" : ""),
         r.deployment.empty() ? r.layout.Label() : r.deployment, r.hardware, r.weights,
         std::to_string(r.chunked_prefill_size), r.dynamic_chunking ? "yes" : "no",
         std::to_string(r.concurrency), FormatNumber(r.prediction.input_tps, 1),
         Value(r.prediction.ttft_p50_s, "s"),
         // A prefill-only workload has no TPOT.
         r.prediction.tpot_ms > 0 ? Value(r.prediction.tpot_ms, "ms") : std::string("-")});
  // A case of startup logs alone has no configuration to show.
  if (!c.configurations.empty()) {
    out += table::RenderTextTable(configurations);
    if (std::any_of(c.configurations.begin(), c.configurations.end(),
                    [](const ConfigurationResult& r) { return r.calibrated_on; }))
      out += "(* calibration configuration)\n";
    out += NotPredictedLines(c);
    if (const std::string line = decide::SteadyStateLine(Samples(c), "configuration");
        !line.empty())
      out += "# " + line + "\n";
    out += "\n";
  }
  table::Table figures{
      {"figure", "reference", "predicted", "error", "within " + Tolerance(c.tolerance),
       "interval (10-90%)", "model form", "inside"},
      {},
      {true, false, false, false, true, false, false, true}};
  for (const FigureResult& f : c.figures)
    figures.rows.push_back(
        {f.label, Value(f.reference, f.unit), Value(f.predicted, f.unit),
         FormatSignedPercent(f.error, 1),
         std::string(f.within ? (f.accepted() ? "yes" : "YES, STALE REASON")
                              : (f.accepted() ? "no, stated" : "NO")) +
             (f.tolerance != c.tolerance ? " (" + Tolerance(f.tolerance) + ")" : ""),
         IntervalCell(f), ModelFormCell(f), InsideCell(f)});
  out += table::RenderTextTable(figures);
  for (const FigureResult& f : c.figures)
    if (!f.known_miss.empty()) out += "# stated miss, " + f.label + ": " + f.known_miss + "\n";
  if (!c.signs.empty()) {
    table::Table signs{{"comparison (implied by the references)", "predicted"}, {}, {true, true}};
    for (const SignResult& s : c.signs)
      signs.rows.push_back(
          {s.better + " beats " + s.worse + " in " + s.metric + " (" + s.implied_by + ")",
           s.right ? "right" : "WRONG"});
    out += '\n';
    out += table::RenderTextTable(signs);
  }
  if (!c.refusals.empty()) {
    table::Table refusals{{"cannot run (the source says so)", "ppsearch"}, {}, {true, true}};
    for (const RefusalResult& r : c.refusals)
      refusals.rows.push_back({r.configuration + " " + r.layout.Label(),
                               r.refused          ? "refuses it"
                               : r.reason.empty() ? "PLANS IT"
                                                  : "REFUSES IT FOR ANOTHER REASON"});
    // Each refusal's row, then the sentences behind it.
    const std::vector<std::string> lines = Lines(table::RenderTextTable(refusals));
    out += '\n';
    out += lines[0] + "\n";
    for (size_t i = 0; i < c.refusals.size(); ++i) {
      const RefusalResult& r = c.refusals[i];
      out += lines[i + 1] + "\n";
      if (!r.what.empty()) out += "  source: " + r.what + "\n";
      if (!r.because.empty()) out += "  expected reason: " + r.because + "\n";
      if (!r.reason.empty()) out += "  ppsearch: " + r.reason + "\n";
    }
  }
  out += fmt::format("# {}: {}/{} figures within {}, {}/{} signs right{}\n\n", c.name,
                     c.figures_within(), c.figures.size(), Tolerance(c.tolerance), c.signs_right(),
                     c.signs.size(), RefusalCount(c.refusals_right(), c.refusals.size()));
}

// A markdown cell: a '|' inside would end it.
std::string MdCell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

// Whether the calibration's off-prior findings name parameter `name`.
bool OffPrior(const cost::Calibration& calibration, std::string_view name) {
  for (const std::string& s : calibration.off_prior)
    if (s.rfind(std::string(name) + " = ", 0) == 0) return true;
  return false;
}

// "attention_eff 1 (at bound), ...": what the data determined or pushed
// onto a bound, and "off prior" where the off-prior rule flagged it; every
// other parameter keeps its prior.
std::string MovedParameters(const cost::Calibration& calibration) {
  std::string out;
  for (const auto& p : cost::AllParams()) {
    const cost::ParamStatus status = calibration.status[cost::Index(p.param)];
    if (status == cost::ParamStatus::kPrior) continue;
    out += fmt::format("{}{} {:.4g} ({}{})", out.empty() ? "" : ", ", p.name,
                       calibration.value[cost::Index(p.param)], cost::ParamStatusName(status),
                       OffPrior(calibration, p.name) ? ", OFF PRIOR" : "");
  }
  return out.empty() ? "none" : out;
}

// The planner's reason quotes SGLang's own message; the rest of it names
// local paths, which a document cannot hold.
std::string QuotedMessage(const std::string& reason) {
  const size_t open = reason.find('"');
  const size_t close = open == std::string::npos ? open : reason.find('"', open + 1);
  return close == std::string::npos ? "" : reason.substr(open, close - open + 1);
}

std::string RefusalVerdict(const RefusalResult& r) {
  if (r.refused) {
    const std::string quoted = QuotedMessage(r.reason);
    return quoted.empty() ? "refuses it" : "refuses it: " + quoted;
  }
  return r.reason.empty() ? "PLANS IT" : "REFUSES IT FOR ANOTHER REASON";
}

std::string TotalsLine(const std::vector<CaseResult>& cases) {
  const Totals t = Sum(cases);
  return fmt::format(
      "{} cases, {}/{} figures within tolerance{}, {}/{} signs right{}: {}", cases.size(), t.within,
      t.figures, t.stated == 0 ? "" : fmt::format(" ({} stated misses)", t.stated), t.right,
      t.signs, RefusalCount(t.refused, t.refusals), AllPassed(cases) ? "PASS" : "FAIL");
}

nlohmann::ordered_json ExtrapolationJson(const uncertainty::Extrapolation& d) {
  nlohmann::ordered_json j;
  const auto values = d.Values();
  for (int k = 0; k < cost::kModelFormDistances; ++k)
    j[cost::kModelFormDistanceNames[k]] = values[k];
  return j;
}

nlohmann::ordered_json ScalesJson(const cost::ModelFormScales& s) {
  nlohmann::ordered_json j;
  j["s0"] = s.s0;
  const auto scales = s.PerUnit();
  for (int k = 0; k < cost::kModelFormDistances; ++k)
    j[cost::kModelFormDistanceNames[k]] = scales[k];
  return j;
}

// The model-form scales fitted to every case, then without each case.
table::Table ScalesTable(const Coverage& coverage) {
  table::Table t{{"model-form scales fitted to", "s0"}, {}, {true, false}};
  for (const char* name : cost::kModelFormDistanceNames) {
    t.header.push_back(name);
    t.left.push_back(false);
  }
  // `identified`: null, or which scales the misses identified.
  const auto row = [&](const std::string& name, const cost::ModelFormScales& s,
                       const bool* identified) {
    std::vector<std::string> cells = {name, FormatPercent(s.s0, 1)};
    const auto scales = s.PerUnit();
    for (int k = 0; k < cost::kModelFormDistances; ++k)
      cells.push_back(FormatPercent(scales[k], 1) +
                      (identified == nullptr || identified[k] ? "" : " (not identified)"));
    t.rows.push_back(std::move(cells));
  };
  const uncertainty::ModelFormFit& all = coverage.all;
  row(fmt::format("every case ({} misses)", all.misses), all.scales, all.identified);
  for (const auto& [name, scales] : coverage.left_out) row("all but " + name, scales, nullptr);
  return t;
}

}  // namespace

bool AllPassed(const std::vector<CaseResult>& cases) {
  for (const auto& c : cases)
    if (!c.passed()) return false;
  return true;
}

std::string RenderText(const std::vector<CaseResult>& cases, const Coverage& coverage) {
  std::string out;
  for (const CaseResult& c : cases) RenderCase(c, out);
  out += "# backtest: " + TotalsLine(cases) + "\n";
  if (!coverage.left_out.empty()) {
    out += "# coverage: " + CoverageLine(coverage) + "\n";
    out += "# coverage uncalibrated: " + UncalibratedLine(cases, coverage) + "\n";
  }
  return out;
}

std::string RenderMarkdown(const std::vector<CaseResult>& cases, const Coverage& coverage) {
  table::Table fits{{"case", "model", "calibrated on", "parameters off their prior", "fit"},
                    {},
                    {true, true, true, true, true}};
  table::Table figures{{"case", "figure", "reference", "predicted", "error", "within",
                        "interval (10-90%)", "model form", "inside"},
                       {},
                       {true, true, false, false, false, true, false, false, true}};
  table::Table signs{
      {"case", "comparison implied by the references", "predicted"}, {}, {true, true, true}};
  table::Table refusals{
      {"case", "cannot run (the source says so)", "ppsearch"}, {}, {true, true, true}};
  for (const CaseResult& c : cases) {
    for (const FamilyFit& f : c.fits) {
      std::string names;
      for (const auto& n : f.configurations) names += (names.empty() ? "" : ", ") + n;
      fits.rows.push_back({MdCell(c.name), MdCell(ModelName(f.model)), MdCell(names),
                           MovedParameters(f.calibration),
                           f.calibration.infeasible.empty() ? "feasible" : "infeasible"});
    }
    for (const FigureResult& f : c.figures)
      figures.rows.push_back(
          {MdCell(c.name), MdCell(f.label), Value(f.reference, f.unit), Value(f.predicted, f.unit),
           FormatSignedPercent(f.error, 1),
           std::string(f.within ? (f.accepted() ? "yes (" : "YES, STALE REASON (")
                                : (f.accepted() ? "no, stated (" : "NO (")) +
               Tolerance(f.tolerance) + ")",
           IntervalCell(f), ModelFormCell(f), InsideCell(f)});
    for (const SignResult& s : c.signs)
      signs.rows.push_back({MdCell(c.name),
                            MdCell(s.better + " beats " + s.worse + " in " + s.metric),
                            s.right ? "right" : "WRONG"});
    for (const RefusalResult& r : c.refusals)
      refusals.rows.push_back({MdCell(c.name), MdCell(r.configuration + " " + r.layout.Label()),
                               MdCell(RefusalVerdict(r))});
  }
  std::string out = table::RenderMarkdownTable(fits) + "\n" + table::RenderMarkdownTable(figures);
  std::string stated;
  for (const CaseResult& c : cases)
    for (const FigureResult& f : c.figures)
      if (!f.known_miss.empty()) stated += "- " + f.label + ": " + f.known_miss + "\n";
  if (!stated.empty()) out += "\nStated misses (the case file gives the reason):\n\n" + stated;
  std::string short_of;
  for (const CaseResult& c : cases)
    if (const std::string s = decide::ShortOfSteadyState(Samples(c)); !s.empty())
      short_of += "- " + c.name + ": " + s + "\n";
  if (!short_of.empty())
    out += "\nShort of their steady state (" + decide::SteadyRule() + "):\n\n" + short_of;
  if (!signs.rows.empty()) out += "\n" + table::RenderMarkdownTable(signs);
  if (!refusals.rows.empty()) out += "\n" + table::RenderMarkdownTable(refusals);
  // Coverage (when measured) before the totals line, which ends the document.
  if (!coverage.left_out.empty()) {
    out += "\nCoverage: " + CoverageLine(coverage) + ".\n";
    out += "\nUncalibrated coverage: " + UncalibratedLine(cases, coverage) + ".\n";
    out += "\n" + table::RenderMarkdownTable(ScalesTable(coverage));
  }
  out += "\nTotals: " + TotalsLine(cases) + ".\n";
  return out;
}

// One figure as --json writes it.
nlohmann::ordered_json FigureJson(const FigureResult& f) {
  nlohmann::ordered_json fj = {{"figure", f.label},
                               {"what", f.what},
                               {"unit", f.unit},
                               {"reference", f.reference},
                               {"predicted", f.predicted},
                               {"error", f.error},
                               {"tolerance", f.tolerance},
                               {"within_tolerance", f.within},
                               {"known_miss", f.known_miss}};
  if (f.deployment) fj["deployment"] = true;
  if (f.has_interval) {
    fj["held_out"] = f.held_out;
    fj["low"] = f.interval.low;
    fj["high"] = f.interval.high;
    fj["parameter_low"] = f.parameter.low;
    fj["parameter_high"] = f.parameter.high;
    fj["model_form_rel"] = f.model_form_rel;
    fj["extrapolation"] = ExtrapolationJson(f.extrapolation);
    fj["inside"] = f.inside;
  }
  return fj;
}

nlohmann::ordered_json RenderJson(const std::vector<CaseResult>& cases, const Coverage& coverage) {
  nlohmann::ordered_json j;
  j["cases"] = nlohmann::ordered_json::array();
  for (const CaseResult& c : cases) {
    nlohmann::ordered_json cj;
    cj["name"] = c.name;
    cj["path"] = c.path;
    cj["tolerance"] = c.tolerance;
    cj["calibrations"] = nlohmann::ordered_json::array();
    for (const FamilyFit& f : c.fits) {
      nlohmann::ordered_json params;
      for (const auto& p : cost::AllParams())
        params[p.name] = f.calibration.value[cost::Index(p.param)];
      nlohmann::ordered_json status;
      for (const auto& p : cost::AllParams())
        status[p.name] = cost::ParamStatusName(f.calibration.status[cost::Index(p.param)]);
      cj["calibrations"].push_back({{"model", f.model},
                                    {"configurations", f.configurations},
                                    {"parameters", params},
                                    {"status", status},
                                    {"infeasible", f.calibration.infeasible},
                                    {"off_prior", f.calibration.off_prior}});
    }
    cj["configurations"] = nlohmann::ordered_json::array();
    for (const ConfigurationResult& r : c.configurations) {
      cj["configurations"].push_back(
          {{"name", r.name},
           {"pp", r.layout.pp},
           {"tp", r.layout.tp},
           {"ep", r.layout.ep},
           {"hardware", r.hardware},
           {"model", r.model},
           {"weights", r.weights},
           {"calibration_from", r.calibration_from},
           {"concurrency", r.concurrency},
           {"requests", r.sample.requests},
           {"steady_state", NotSteady(r).empty()},
           {"not_steady",
            NotSteady(r).empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(NotSteady(r))},
           {"calibration", r.calibrated_on},
           {"chunked_prefill_size", r.chunked_prefill_size},
           {"dynamic_chunking", r.dynamic_chunking},
           {"input_tps", r.prediction.input_tps},
           {"ttft_p50_s", r.prediction.ttft_p50_s},
           {"tpot_ms", r.prediction.tpot_ms}});
      if (r.prediction.deployment) {
        nlohmann::ordered_json& d = cj["configurations"].back();
        d["deployment"] = r.deployment;
        d["prefill_tps_per_node"] = r.prediction.prefill_tps_per_node;
        d["decode_tps_per_node"] = r.prediction.decode_tps_per_node;
        if (!r.prediction.not_predicted.empty()) d["not_predicted"] = r.prediction.not_predicted;
      }
    }
    cj["figures"] = nlohmann::ordered_json::array();
    for (const FigureResult& f : c.figures) cj["figures"].push_back(FigureJson(f));
    cj["uncalibrated_figures"] = nlohmann::ordered_json::array();
    for (const FigureResult& f : c.uncalibrated)
      cj["uncalibrated_figures"].push_back(FigureJson(f));
    cj["signs"] = nlohmann::ordered_json::array();
    for (const SignResult& s : c.signs)
      cj["signs"].push_back({{"better", s.better},
                             {"worse", s.worse},
                             {"metric", s.metric},
                             {"implied_by", s.implied_by},
                             {"right", s.right}});
    cj["refusals"] = nlohmann::ordered_json::array();
    for (const RefusalResult& r : c.refusals)
      cj["refusals"].push_back({{"configuration", r.configuration},
                                {"pp", r.layout.pp},
                                {"tp", r.layout.tp},
                                {"ep", r.layout.ep},
                                {"what", r.what},
                                {"because", r.because},
                                {"refused", r.refused},
                                {"reason", r.reason}});
    cj["figures_within"] = c.figures_within();
    cj["signs_right"] = c.signs_right();
    cj["refusals_right"] = c.refusals_right();
    cj["passed"] = c.passed();
    j["cases"].push_back(std::move(cj));
  }
  const Totals t = Sum(cases);
  j["figures"] = t.figures;
  j["figures_within"] = t.within;
  j["signs"] = t.signs;
  j["signs_right"] = t.right;
  j["refusals"] = t.refusals;
  j["refusals_right"] = t.refused;
  j["passed"] = AllPassed(cases);
  j["coverage"] = coverage.coverage;
  j["coverage_figures"] = coverage.figures;
  j["coverage_inside"] = coverage.inside;
  j["coverage_stated_misses"] = coverage.stated;
  j["nominal_coverage"] = kNominalCoverage;
  j["mean_interval_width"] = coverage.mean_interval_width;
  j["uncalibrated_coverage"] = coverage.uncalibrated.coverage;
  j["uncalibrated_coverage_figures"] = coverage.uncalibrated.figures;
  j["uncalibrated_coverage_inside"] = coverage.uncalibrated.inside;
  j["uncalibrated_coverage_stated_misses"] = coverage.uncalibrated.stated;
  j["uncalibrated_mean_interval_width"] = coverage.uncalibrated.mean_interval_width;
  j["model_form"] = ScalesJson(coverage.all.scales);
  j["model_form_left_out"] = nlohmann::ordered_json::array();
  for (const auto& [name, s] : coverage.left_out)
    j["model_form_left_out"].push_back({{"case", name}, {"scales", ScalesJson(s)}});
  return j;
}

}  // namespace ppsearch::backtest
