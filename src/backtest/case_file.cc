#include "backtest/case_file.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "backtest/memory_case.h"
#include "evidence/csv_cells.h"
#include "evidence/medians_csv.h"
#include "spec/sections.h"
#include "spec/toml_access.h"
#include "stats/point_figures.h"
#include "util/did_you_mean.h"
#include "util/excerpt.h"
#include "util/files.h"

namespace ppsearch::backtest {
namespace {

using spec::Need;
using spec::TableReader;

constexpr char kCaseFile[] = "case.toml";
constexpr int kMaxCaseDepth = 4;

SourceLoc ElementLoc(const TableReader& t, std::string_view key, size_t i, const toml::node& n) {
  return t.source().Locate(n.source(),
                           spec::JoinKey(t.key_path(), key) + "[" + std::to_string(i) + "]");
}

// A point's figures out of the order a CSV of medians holds its rows to
// (evidence::FigureOutOfOrder): a TTFT p50 above its p95 was not measured.
Status CheckOrder(const TableReader& point, const calibrate::MeasuredPoint& p) {
  evidence::PointSummary s;
  s.held.assign(evidence::PointColumns().size(), false);
  for (const auto& [member, value] : {std::pair{&stats::Figures::input_tps, p.input_tps},
                                      std::pair{&stats::Figures::ttft_p50_s, p.ttft_p50_s},
                                      std::pair{&stats::Figures::ttft_p95_s, p.ttft_p95_s}}) {
    if (value <= 0) continue;  // not given
    s.median.*member = value;
    s.held[evidence::IndexOf(*evidence::ColumnOf(member))] = true;
  }
  const std::optional<evidence::FigureOrder> broken = evidence::FigureOutOfOrder(s);
  if (!broken) return Status::Ok();
  const std::string low = stats::FieldOf(broken->low->median)->name;
  const std::string high = stats::FieldOf(broken->high->median)->name;
  return spec::KeyError(point.KeyLoc(low), spec::FormatNumber(s.median.*broken->low->median) +
                                               " is above " + high + " (" +
                                               spec::FormatNumber(s.median.*broken->high->median) +
                                               "); expected at most it");
}

Result<std::vector<calibrate::MeasuredPoint>> ReadMeasured(const TableReader& config) {
  std::vector<calibrate::MeasuredPoint> points;
  const toml::node* node = config.Find("measured");
  if (node == nullptr) return points;
  PPS_ASSIGN_OR_RETURN(
      const toml::array* array,
      spec::ToArray(*node, config.KeyLoc("measured"),
                    "tables {concurrency = 1, input_tps = ..., ttft_p50_s = ...}"));
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    const SourceLoc loc = ElementLoc(config, "measured", i, element);
    PPS_ASSIGN_OR_RETURN(const toml::table* table,
                         spec::ToTable(element, loc, "{concurrency = 1, input_tps = 2702.5}"));
    TableReader point(config.source(), *table, loc.key);
    PPS_RETURN_IF_ERROR(point.CheckKeys({"concurrency", "input_tps", "ttft_p50_s", "ttft_p95_s"}));
    calibrate::MeasuredPoint p;
    PPS_RETURN_IF_ERROR(
        point.Int("concurrency", &p.concurrency, Need::kRequired, 1, spec::kMaxConcurrency));
    if (point.Find("input_tps") == nullptr) return point.Missing("input_tps");
    // The bounds a CSV of medians holds its measured figures to.
    PPS_RETURN_IF_ERROR(point.Number("input_tps", &p.input_tps, evidence::kMinMeasuredFigure,
                                     evidence::kMaxCsvFigure));
    PPS_RETURN_IF_ERROR(
        point.Number("ttft_p50_s", &p.ttft_p50_s, evidence::kMinMeasuredFigure, 1e9));
    PPS_RETURN_IF_ERROR(
        point.Number("ttft_p95_s", &p.ttft_p95_s, evidence::kMinMeasuredFigure, 1e9));
    PPS_RETURN_IF_ERROR(CheckOrder(point, p));
    // One point per concurrency, as a CSV of medians has one row per point:
    // both of two were fitted, and which one the case means is a guess.
    for (size_t k = 0; k < points.size(); ++k)
      if (points[k].concurrency == p.concurrency)
        return spec::KeyError(point.KeyLoc("concurrency"),
                              "concurrency " + std::to_string(p.concurrency) +
                                  " appears twice (first in " +
                                  spec::JoinKey(config.key_path(), "measured") + "[" +
                                  std::to_string(k) + "]); expected one point per concurrency");
    points.push_back(p);
  }
  return points;
}

// A deployment configuration: its layouts are the spec's pools, and with no
// fit of a deployment (calibrate refuses its rows) it is predicted with the
// priors, so it neither calibrates nor borrows a fit.
Result<Configuration> ReadDeployment(const TableReader& config, Configuration c) {
  for (const char* key :
       {"layout", "calibrate", "measured", "measured_csv", "profile_summary", "calibration_from"})
    if (config.Find(key) != nullptr)
      return spec::KeyError(config.KeyLoc(key),
                            std::string("a deployment configuration takes no '") + key +
                                "': its layouts are the spec's pools, and it is predicted with "
                                "the parameters' priors (a deployment is not calibrated on)");
  PPS_RETURN_IF_ERROR(config.StringList("set", &c.overrides, false));
  PPS_RETURN_IF_ERROR(
      config.Int("concurrency", &c.concurrency, Need::kOptional, 1, spec::kMaxConcurrency));
  return c;
}

Result<Configuration> ReadConfiguration(const TableReader& parent, const std::string& name,
                                        const toml::node& node, const std::string& base_dir) {
  const SourceLoc loc = parent.KeyLoc(name);
  PPS_ASSIGN_OR_RETURN(const toml::table* table,
                       spec::ToTable(node, loc, "{layout = {pp = 4, tp = 8}, set = [...]}"));
  TableReader config(parent.source(), *table, loc.key);
  PPS_RETURN_IF_ERROR(
      config.CheckKeys({"layout", "deployment", "set", "concurrency", "calibrate", "measured",
                        "measured_csv", "profile_summary", "calibration_from"}));
  Configuration c;
  c.name = name;
  c.origin = loc;
  PPS_RETURN_IF_ERROR(config.Bool("deployment", &c.deployment));
  const toml::node* layout = config.Find("layout");
  if (c.deployment) return ReadDeployment(config, std::move(c));
  if (layout == nullptr)
    return config.Missing("layout",
                          " (e.g. layout = {pp = 4, tp = 8}, or deployment = true for a "
                          "disaggregated spec's deployment)");
  PPS_ASSIGN_OR_RETURN(c.layout,
                       spec::ReadLayoutTuple(parent.source(), *layout, config.KeyLoc("layout")));
  // A case predicts every configuration; the simulator models DP attention at PP 1 only.
  if (c.layout.dp > 1 && c.layout.pp > 1)
    return spec::KeyError(config.KeyLoc("layout"),
                          "dp = " + std::to_string(c.layout.dp) +
                              " with pp = " + std::to_string(c.layout.pp) +
                              ": the simulator models DP attention at pp = 1 only, so a case "
                              "cannot predict it");
  PPS_RETURN_IF_ERROR(config.StringList("set", &c.overrides, false));
  PPS_RETURN_IF_ERROR(
      config.Int("concurrency", &c.concurrency, Need::kOptional, 1, spec::kMaxConcurrency));
  PPS_RETURN_IF_ERROR(config.Bool("calibrate", &c.calibrate));
  PPS_ASSIGN_OR_RETURN(c.measured, ReadMeasured(config));
  PPS_RETURN_IF_ERROR(config.String("measured_csv", &c.measured_csv, Need::kOptional));
  PPS_RETURN_IF_ERROR(config.String("profile_summary", &c.profile_summary, Need::kOptional));
  PPS_RETURN_IF_ERROR(config.String("calibration_from", &c.calibration_from, Need::kOptional));
  c.calibration_from_loc = config.KeyLoc("calibration_from");
  c.measured_csv_loc = config.KeyLoc("measured_csv");
  c.profile_summary_loc = config.KeyLoc("profile_summary");
  if (c.calibrate && !c.calibration_from.empty())
    return spec::KeyError(config.KeyLoc("calibration_from"),
                          "a calibration configuration is fitted itself; remove calibration_from "
                          "or calibrate = true");
  if (!c.measured_csv.empty()) c.measured_csv = ResolvePath(base_dir, c.measured_csv);
  if (!c.profile_summary.empty()) c.profile_summary = ResolvePath(base_dir, c.profile_summary);
  if (!c.measured.empty() && !c.measured_csv.empty())
    return spec::KeyError(config.KeyLoc("measured_csv"),
                          "give the measured points inline ('measured') or as a CSV, not both");
  const bool has_measurement = !c.measured.empty() || !c.measured_csv.empty();
  if (c.calibrate && !has_measurement)
    return spec::KeyError(config.KeyLoc("calibrate"),
                          "a calibration configuration needs 'measured' points or 'measured_csv'");
  if (!c.calibrate && (has_measurement || !c.profile_summary.empty()))
    return spec::KeyError(
        config.KeyLoc(has_measurement ? (c.measured.empty() ? "measured_csv" : "measured")
                                      : "profile_summary"),
        "measured figures are used only for calibration; set calibrate = true "
        "or give the figure as a [[reference]]");
  return c;
}

// Exactly one of ratio / ttft_p50_s / tpot_ms / beats / refused names the figure's
// configurations.
Result<Reference> ReadReference(const Case& c, const TableReader& ref) {
  PPS_RETURN_IF_ERROR(ref.CheckKeys({"ratio", "ttft_p50_s", "tpot_ms", "prefill_tps_per_node",
                                     "decode_tps_per_node", "beats", "refused", "because", "value",
                                     "what", "miss"}));
  Reference r;
  r.origin = ref.origin();
  int kinds = 0;
  for (const char* key : {"ratio", "ttft_p50_s", "tpot_ms", "prefill_tps_per_node",
                          "decode_tps_per_node", "beats", "refused"})
    kinds += ref.Find(key) != nullptr;
  if (kinds != 1)
    return spec::PositionError(
        ref.origin(), "reference '" + ref.key_path() +
                          "': expected exactly one of ratio = [\"a\", \"b\"], ttft_p50_s = \"a\", "
                          "tpot_ms = \"a\", prefill_tps_per_node = \"a\", "
                          "decode_tps_per_node = \"a\", "
                          "beats = [\"a\", \"b\"] or refused = \"a\"");
  std::string key = "ttft_p50_s";
  const bool pool =
      ref.Find("prefill_tps_per_node") != nullptr || ref.Find("decode_tps_per_node") != nullptr;
  if (pool) {
    key = ref.Find("prefill_tps_per_node") != nullptr ? "prefill_tps_per_node"
                                                      : "decode_tps_per_node";
    r.kind = key == "prefill_tps_per_node" ? FigureKind::kPrefillTpsPerNode
                                           : FigureKind::kDecodeTpsPerNode;
    PPS_RETURN_IF_ERROR(ref.String(key, &r.a, Need::kRequired));
  } else if (ref.Find("ttft_p50_s") != nullptr) {
    r.kind = FigureKind::kTtftP50;
    PPS_RETURN_IF_ERROR(ref.String("ttft_p50_s", &r.a, Need::kRequired));
  } else if (ref.Find("tpot_ms") != nullptr) {
    key = "tpot_ms";
    r.kind = FigureKind::kTpotMs;
    PPS_RETURN_IF_ERROR(ref.String("tpot_ms", &r.a, Need::kRequired));
  } else if (ref.Find("refused") != nullptr) {
    key = "refused";
    r.kind = FigureKind::kRefused;
    PPS_RETURN_IF_ERROR(ref.String("refused", &r.a, Need::kRequired));
    PPS_RETURN_IF_ERROR(ref.String("because", &r.because, Need::kOptional));
  } else {
    key = ref.Find("ratio") != nullptr ? "ratio" : "beats";
    r.kind = key == "ratio" ? FigureKind::kTpsRatio : FigureKind::kBeats;
    std::vector<std::string> pair;
    PPS_RETURN_IF_ERROR(ref.StringList(key, &pair, true));
    if (pair.size() != 2 || pair[0] == pair[1])
      return spec::KeyError(ref.KeyLoc(key), "expected two different configuration names");
    r.a = pair[0];
    r.b = pair[1];
  }
  for (const std::string* name : {&r.a, &r.b}) {
    if (name->empty() || c.Find(*name) != nullptr) continue;
    std::vector<std::string> names;
    for (const auto& config : c.configurations) names.push_back(config.name);
    return spec::KeyError(ref.KeyLoc(key),
                          "no configuration named '" + *name + "'" + DidYouMean(*name, names));
  }
  // A pool's figure needs pools; a refusal is the planner's of one layout.
  if (pool && !c.Find(r.a)->deployment)
    return spec::KeyError(ref.KeyLoc(key), "'" + r.a +
                                               "' is a layout, not a deployment (deployment = "
                                               "true); a pool's figure needs a deployment's pools");
  if (r.kind == FigureKind::kRefused && c.Find(r.a)->deployment)
    return spec::KeyError(ref.KeyLoc(key),
                          "'" + r.a +
                              "' is a deployment; a 'refused' reference names a layout the "
                              "planner must refuse");
  if (r.kind == FigureKind::kBeats || r.kind == FigureKind::kRefused) {
    if (ref.Find("value") != nullptr)
      return spec::KeyError(ref.KeyLoc("value"),
                            r.kind == FigureKind::kBeats
                                ? "a 'beats' reference is sign-only; remove value"
                                : "a 'refused' reference has no value; remove it");
  } else {
    if (ref.Find("value") == nullptr) return ref.Missing("value");
    PPS_RETURN_IF_ERROR(ref.Number("value", &r.value, 1e-9, 1e12));
  }
  if (r.kind != FigureKind::kRefused && ref.Find("because") != nullptr)
    return spec::KeyError(ref.KeyLoc("because"),
                          "'because' belongs to a 'refused' reference (the planner's reason)");
  PPS_RETURN_IF_ERROR(ref.String("what", &r.what, Need::kOptional));
  PPS_RETURN_IF_ERROR(ref.String("miss", &r.miss, Need::kOptional));
  if (!r.miss.empty() && (r.kind == FigureKind::kBeats || r.kind == FigureKind::kRefused))
    return spec::KeyError(ref.KeyLoc("miss"),
                          "a stated miss belongs to a figure with a value (ratio, ttft_p50_s, "
                          "tpot_ms)");
  return r;
}

}  // namespace

bool Case::Refused(const std::string& config_name) const {
  return std::any_of(references.begin(), references.end(), [&](const Reference& r) {
    return r.kind == FigureKind::kRefused && r.a == config_name;
  });
}

namespace {

// A configuration the source says cannot run has nothing to calibrate on or
// compare.
Status CheckRefusedUse(const Case& c) {
  std::set<std::string> refused;
  for (const Reference& r : c.references)
    if (r.kind == FigureKind::kRefused && !refused.insert(r.a).second)
      return spec::PositionError(
          r.origin, "a second 'refused' reference for '" + r.a + "'; give one, with one 'because'");
  for (const Reference& r : c.references) {
    if (r.kind == FigureKind::kRefused) continue;
    for (const std::string* name : {&r.a, &r.b})
      if (!name->empty() && c.Refused(*name))
        return spec::PositionError(r.origin, "reference compares '" + *name +
                                                 "', which a 'refused' reference says cannot "
                                                 "run; a refused configuration has no figures");
  }
  for (const Configuration& config : c.configurations) {
    if (!c.Refused(config.name)) continue;
    // (calibration_from names calibration configurations only, so a refused
    // configuration cannot lend its fit either.)
    if (config.calibrate)
      return spec::KeyError(config.origin, "configuration '" + config.name +
                                               "' is calibrated on, but a 'refused' reference "
                                               "says it cannot run");
  }
  return Status::Ok();
}

// The case file's key of a one-configuration figure.
const char* KeyOf(FigureKind kind) {
  switch (kind) {
    case FigureKind::kTtftP50:
      return "ttft_p50_s";
    case FigureKind::kTpotMs:
      return "tpot_ms";
    case FigureKind::kPrefillTpsPerNode:
      return "prefill_tps_per_node";
    case FigureKind::kDecodeTpsPerNode:
      return "decode_tps_per_node";
    default:
      return "ratio";
  }
}

// A reference as written, for messages that set two side by side.
std::string Written(const Reference& r) {
  const std::string pair = "[\"" + Excerpt(r.a) + "\", \"" + Excerpt(r.b) + "\"]";
  if (r.kind == FigureKind::kBeats) return "beats = " + pair;
  if (r.kind != FigureKind::kTpsRatio)
    return std::string(KeyOf(r.kind)) + " = \"" + Excerpt(r.a) +
           "\", value = " + spec::FormatNumber(r.value);
  return "ratio = " + pair + ", value = " + spec::FormatNumber(r.value);
}

// Whether `r` says `faster`'s input TPS exceeds `slower`'s: a 'beats' that
// names them in that order, or a ratio of them above 1 (below 1 reversed).
bool SaysFaster(const Reference& r, const std::string& faster, const std::string& slower) {
  if (r.kind == FigureKind::kBeats) return r.a == faster && r.b == slower;
  if (r.kind != FigureKind::kTpsRatio) return false;
  return (r.a == faster && r.b == slower && r.value > 1) ||
         (r.a == slower && r.b == faster && r.value < 1);
}

// Two 'beats' references of one pair, or one against a ratio of the same
// pair: the evaluation would keep the first and drop the other without a
// word, so the case is refused naming both.
Status CheckBeatsAgree(const Case& c) {
  for (size_t i = 0; i < c.references.size(); ++i) {
    const Reference& later = c.references[i];
    for (size_t j = 0; j < i; ++j) {
      const Reference& first = c.references[j];
      const Reference* beats = later.kind == FigureKind::kBeats   ? &later
                               : first.kind == FigureKind::kBeats ? &first
                                                                  : nullptr;
      if (beats == nullptr) continue;
      const Reference& other = beats == &later ? first : later;
      std::string what;
      if (other.kind == FigureKind::kBeats && other.a == beats->a && other.b == beats->b)
        what = "repeats";
      else if (SaysFaster(other, beats->b, beats->a))
        what = "contradicts";
      if (what.empty()) continue;
      return spec::PositionError(
          later.origin,
          "reference '" + later.origin.key + "': " + Written(later) + " " + what + " " +
              Written(first) + " at " + first.origin.Position() +
              (what == "repeats" ? "; give it once" : "; keep the one the source supports"));
    }
  }
  return Status::Ok();
}

// log(a's input TPS / b's) as a ratio reference states it, seen from `from`
// (its a or b).
double LogRatioFrom(const Reference& r, const std::string& from) {
  return r.a == from ? std::log(r.value) : -std::log(r.value);
}

// The implied log(to / from) along earlier ratio references (indices below
// `before`), and the references on the path; nullopt when none connects them.
std::optional<std::pair<double, std::vector<size_t>>> ImpliedLogRatio(const Case& c, size_t before,
                                                                      const std::string& from,
                                                                      const std::string& to) {
  std::map<std::string, std::pair<double, std::vector<size_t>>> reached{{from, {0.0, {}}}};
  std::vector<std::string> frontier{from};
  while (!frontier.empty()) {
    const std::string at = frontier.back();
    frontier.pop_back();
    for (size_t j = 0; j < before; ++j) {
      const Reference& r = c.references[j];
      if (r.kind != FigureKind::kTpsRatio || (r.a != at && r.b != at)) continue;
      const std::string& next = r.a == at ? r.b : r.a;
      if (reached.count(next) != 0) continue;
      auto path = reached[at];
      path.first -= LogRatioFrom(r, at);  // log(next / at) = -log(at / next)
      path.second.push_back(j);
      reached[next] = path;
      frontier.push_back(next);
    }
  }
  const auto it = reached.find(to);
  if (it == reached.end()) return std::nullopt;
  return it->second;
}

// Figures that cannot all be true: a TTFT or TPOT of one configuration given
// twice, a ratio of one pair given twice (either way round), or a ratio
// that a chain of others implies differently by more than the case's
// tolerance (a / b = 2 and b / c = 2 with a / c = 8). The evaluation would
// judge the prediction against both; the case is refused naming them.
Status CheckFiguresAgree(const Case& c) {
  const double slack = std::log1p(c.tolerance);
  for (size_t i = 0; i < c.references.size(); ++i) {
    const Reference& later = c.references[i];
    if (later.kind == FigureKind::kBeats || later.kind == FigureKind::kRefused) continue;
    const auto refuse = [&](const std::string& what, const std::string& with) {
      return spec::PositionError(
          later.origin,
          "reference '" + later.origin.key + "': " + Written(later) + " " + what + " " + with +
              (what == "repeats" ? "; give it once" : "; keep the one the source supports"));
    };
    for (size_t j = 0; j < i; ++j) {
      const Reference& first = c.references[j];
      if (first.kind != later.kind) continue;
      const bool same_pair =
          (first.a == later.a && first.b == later.b) || (first.a == later.b && first.b == later.a);
      if (!same_pair) continue;
      const double stated = later.kind == FigureKind::kTpsRatio
                                ? LogRatioFrom(later, later.a) - LogRatioFrom(first, later.a)
                                : std::log(later.value / first.value);
      return refuse(std::abs(stated) <= 1e-9 ? "repeats" : "contradicts",
                    Written(first) + " at " + first.origin.Position());
    }
    if (later.kind != FigureKind::kTpsRatio) continue;
    const auto implied = ImpliedLogRatio(c, i, later.b, later.a);
    if (!implied || std::abs(implied->first - std::log(later.value)) <= slack) continue;
    std::string chain;
    for (size_t j : implied->second)
      chain += (chain.empty() ? "" : " and ") + Written(c.references[j]) + " at " +
               c.references[j].origin.Position();
    return refuse("contradicts",
                  chain + ", which give " +
                      spec::FormatNumber(std::round(std::exp(implied->first) * 1000) / 1000) +
                      " (more than the case's tolerance " + spec::FormatNumber(c.tolerance) +
                      " apart)");
  }
  return Status::Ok();
}

// The configurations: at least one, and at least one calibrated on.
Status ReadConfigurations(const TableReader& top, const std::string& base_dir, Case& c) {
  PPS_ASSIGN_OR_RETURN(const toml::table* configs,
                       top.Table("configurations", Need::kRequired,
                                 "[configurations.pp1-tp8] layout = {pp = 1, tp = 8}"));
  TableReader config_table(top.source(), *configs, "configurations");
  for (const auto& [key, node] : spec::InWrittenOrder(config_table)) {
    PPS_ASSIGN_OR_RETURN(Configuration config,
                         ReadConfiguration(config_table, std::string(key->str()), *node, base_dir));
    c.configurations.push_back(std::move(config));
  }
  if (c.configurations.empty())
    return spec::KeyError(top.KeyLoc("configurations"), "expected at least one configuration");
  // Layouts are predicted with a fit; deployments with the priors alone.
  const auto any = [&](auto pred) {
    return std::any_of(c.configurations.begin(), c.configurations.end(), pred);
  };
  if (any([](const Configuration& x) { return !x.deployment; }) &&
      !any([](const Configuration& x) { return x.calibrate; }))
    return spec::KeyError(top.KeyLoc("configurations"),
                          "expected at least one configuration with calibrate = true");

  for (const Configuration& config : c.configurations) {
    if (config.calibration_from.empty()) continue;
    const Configuration* from = c.Find(config.calibration_from);
    if (from != nullptr && from->calibrate) continue;
    std::vector<std::string> names;
    for (const auto& x : c.configurations)
      if (x.calibrate) names.push_back(x.name);
    return spec::KeyError(config.calibration_from_loc,
                          from == nullptr
                              ? "no configuration named '" + config.calibration_from + "'" +
                                    DidYouMean(config.calibration_from, names)
                              : "'" + config.calibration_from +
                                    "' is not a calibration configuration (calibrate = true)");
  }

  return Status::Ok();
}

}  // namespace

const Configuration* Case::Find(const std::string& config_name) const {
  for (const auto& c : configurations)
    if (c.name == config_name) return &c;
  return nullptr;
}

Result<Case> ParseCase(const std::string& text, const std::string& path) {
  PPS_ASSIGN_OR_RETURN(toml::table root, spec::ParseToml(text, path));
  const spec::SpecSource source(path, {});
  const std::string base_dir = DirName(path);
  TableReader top(source, root, "");
  PPS_RETURN_IF_ERROR(top.CheckKeys({"case", "configurations", "reference", "memory"}));
  Case c;
  c.path = path;
  PPS_ASSIGN_OR_RETURN(const toml::table* head, top.Table("case", Need::kRequired));
  TableReader header(source, *head, "case");
  PPS_RETURN_IF_ERROR(header.CheckKeys({"name", "spec", "tolerance"}));
  PPS_RETURN_IF_ERROR(header.String("name", &c.name, Need::kRequired));
  PPS_RETURN_IF_ERROR(header.String("spec", &c.spec_path, Need::kRequired));
  c.spec_path = ResolvePath(base_dir, c.spec_path);
  c.spec_loc = header.KeyLoc("spec");
  if (header.Find("tolerance") == nullptr) return header.Missing("tolerance", " (e.g. 0.15)");
  PPS_RETURN_IF_ERROR(header.Number("tolerance", &c.tolerance, 1e-6, 10));

  PPS_ASSIGN_OR_RETURN(c.memory, ReadMemoryReferences(top));
  // A case of startup logs alone has nothing to calibrate.
  if (c.memory.empty() || top.Find("configurations") != nullptr)
    PPS_RETURN_IF_ERROR(ReadConfigurations(top, base_dir, c));

  if (const toml::node* refs = top.Find("reference")) {
    PPS_ASSIGN_OR_RETURN(const toml::array* array,
                         spec::ToArray(*refs, top.KeyLoc("reference"), "[[reference]] tables"));
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const SourceLoc loc = ElementLoc(top, "reference", i, element);
      PPS_ASSIGN_OR_RETURN(const toml::table* table, spec::ToTable(element, loc));
      PPS_ASSIGN_OR_RETURN(Reference r, ReadReference(c, TableReader(source, *table, loc.key)));
      c.references.push_back(std::move(r));
    }
  }
  PPS_RETURN_IF_ERROR(CheckRefusedUse(c));
  PPS_RETURN_IF_ERROR(CheckBeatsAgree(c));
  PPS_RETURN_IF_ERROR(CheckFiguresAgree(c));
  return c;
}

Result<Case> LoadCase(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  PPS_ASSIGN_OR_RETURN(Case c, ParseCase(text, path));
  // Checked once at its key, not as each configuration's failure to load it.
  if (std::error_code ec; !std::filesystem::is_regular_file(c.spec_path, ec))
    return spec::KeyError(c.spec_loc, "cannot read " + c.spec_path +
                                          ": no such file (expected the case's experiment spec, "
                                          "relative to the case)");
  return c;
}

Result<std::vector<std::string>> FindCases(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return MakeError(dir + ": not a directory (expected a case folder or a folder of cases)");
  const fs::path own = fs::path(dir) / kCaseFile;
  if (fs::is_regular_file(own, ec)) return std::vector<std::string>{own.string()};
  std::vector<std::string> found;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= kMaxCaseDepth) it.disable_recursion_pending();
    if (it->is_regular_file(ec) && it->path().filename() == kCaseFile)
      found.push_back(it->path().string());
  }
  if (ec) return IoError(dir + ": " + ec.message());
  if (found.empty()) return MakeError(dir + ": no " + std::string(kCaseFile) + " in it or below");
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace ppsearch::backtest
