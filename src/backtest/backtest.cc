#include "backtest/backtest.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "backtest/memory_case.h"
#include "calibrate/fit.h"
#include "inputs/search_inputs.h"
#include "predict/disaggregated.h"
#include "predict/predict.h"
#include "predict/search_points.h"
#include "spec/spec_parser.h"
#include "spec/toml_access.h"

namespace ppsearch::backtest {
namespace {

// One configuration with everything it is planned and predicted from: the
// case's spec narrowed to this configuration's layout and concurrency.
struct Loaded {
  const Configuration* config = nullptr;
  inputs::SearchInputs in;
  const plan::LayoutPlan& plan() const { return in.plan.layouts.front(); }
};

Error AtConfiguration(const Configuration& c, const std::string& message) {
  return MakeError(c.origin.Where() + ": " + message);
}

Result<Loaded> LoadConfiguration(const Case& c, const Configuration& config) {
  Result<spec::Spec> spec = spec::LoadSpec(c.spec_path, config.overrides);
  if (!spec.ok()) return AtConfiguration(config, spec.error().message);
  Result<inputs::SearchInputs> in =
      inputs::LoadSearchInputs(std::move(spec).value(), {config.layout}, {config.concurrency});
  if (!in.ok()) return AtConfiguration(config, in.error().message);
  Loaded l{&config, std::move(in).value()};
  if (!l.plan().valid && !c.Refused(config.name)) {
    std::string errors;
    for (const auto& d : l.plan().errors) errors += "\n  " + d.message;
    return AtConfiguration(config, config.layout.Label() + " is not a valid layout:" + errors);
  }
  return l;
}

Result<calibrate::Measurement> MeasurementOf(const Configuration& config) {
  std::vector<calibrate::Measurement> found;
  if (!config.measured_csv.empty()) {
    Result<std::vector<calibrate::Measurement>> csv =
        calibrate::LoadMeasurements(config.measured_csv);
    if (!csv.ok()) return spec::KeyError(config.measured_csv_loc, csv.error().message);
    for (auto& m : *csv)
      if (m.layout == config.layout) found.push_back(std::move(m));
    if (found.empty())
      return spec::KeyError(config.measured_csv_loc, config.measured_csv + " has no row for " +
                                                         config.layout.Label() +
                                                         ", the configuration's layout");
  } else {
    calibrate::Measurement m;
    m.layout = config.layout;
    m.points = config.measured;
    m.source = config.origin.Position();
    found.push_back(std::move(m));
  }
  if (!config.profile_summary.empty())
    if (Status s = calibrate::AttachProfileSummary(config.profile_summary, found); !s.ok())
      return spec::KeyError(config.profile_summary_loc, s.error().message);
  return std::move(found.front());
}

RefusalResult RefusalOf(const Case& c, const Loaded& l) {
  RefusalResult r;
  r.configuration = l.config->name;
  r.layout = l.config->layout;
  for (const Reference& ref : c.references)
    if (ref.kind == FigureKind::kRefused && ref.a == r.configuration) {
      r.what = ref.what;
      r.because = ref.because;
    }
  for (const auto& d : l.plan().errors) r.reason += (r.reason.empty() ? "" : "\n") + d.message;
  // Refused for another reason than the source's is not a match.
  r.refused = !l.plan().valid && r.reason.find(r.because) != std::string::npos;
  return r;
}

uncertainty::Site SiteOf(const Loaded& l) {
  return {l.config->layout,      l.in.spec.cluster.gpus_per_node,
          l.in.hardware.name,    l.in.spec.workload.input_tokens,
          l.config->concurrency, l.in.spec.workload.output_tokens};
}

// A deployment configuration: its spec's pools planned, and predicted by
// the disaggregated predictor with the parameters' priors.
struct LoadedDeployment {
  const Configuration* config = nullptr;
  inputs::DisaggregatedInputs in;
  std::string not_predicted;  // why it cannot be predicted; empty: it can
};

Result<LoadedDeployment> LoadDeployment(const Case& c, const Configuration& config) {
  Result<std::optional<inputs::DisaggregatedInputs>> in =
      inputs::LoadDisaggregatedInputs(c.spec_path, config.overrides);
  if (!in.ok()) return AtConfiguration(config, in.error().message);
  if (!in->has_value())
    return AtConfiguration(config, "deployment = true, but " + c.spec_path +
                                       " has no [sweep.prefill] and [sweep.decode] pools");
  LoadedDeployment l{&config, std::move(**in), {}};
  // A deployment the source ran but ppsearch cannot plan or simulate is a
  // limit of the model, not a broken case: it is reported, not refused.
  for (const plan::Diagnostic& d : l.in.plan.AllErrors())
    l.not_predicted += (l.not_predicted.empty() ? "" : "; ") + d.message;
  if (l.not_predicted.empty())
    if (auto why = predict::DisaggregatedNotModelled(l.in.plan)) l.not_predicted = *why;
  return l;
}

// The pools as "4P x PP1/TP8/EP8 + 9D x ...": instances and one server's layout.
std::string DeploymentLabel(const plan::DisaggregatedPlan& plan) {
  const auto pool = [](const plan::PoolPlan& x, const char* role) {
    return std::to_string(std::max(x.pool.layout.instances, 1)) + role + " x " +
           x.pool.layout.Label();
  };
  return pool(plan.prefill, "P") + " + " + pool(plan.decode, "D");
}

// An error when the point's requests do not all complete, as for a layout.
Result<ConfigurationResult> PredictDeployment(const LoadedDeployment& l) {
  const inputs::DisaggregatedInputs& in = l.in;
  ConfigurationResult r;
  r.name = l.config->name;
  r.layout = in.plan.prefill.pool.layout;
  r.deployment = DeploymentLabel(in.plan);
  r.hardware = in.hardware.name;
  r.model = in.spec.engine.model_config;
  r.weights = in.model.quantization;
  r.concurrency = l.config->concurrency;
  r.sample = {r.name, in.spec.workload.request_rate > 0 ? 0 : r.concurrency,
              in.spec.workload.requests};
  ConfigurationPrediction& out = r.prediction;
  out.name = r.name;
  out.deployment = true;
  // No ensemble and no site: a deployment carries no interval here.
  out.from_calibration.uncalibrated = 1;
  if (!l.not_predicted.empty()) {
    out.not_predicted = l.not_predicted;
    return r;
  }

  predict::PointOptions options;
  options.concurrency = l.config->concurrency;
  options.seed = static_cast<uint64_t>(in.spec.workload.seed);
  options.token_times = false;  // TPOT is (e2e - TTFT) / (output - 1), no gaps needed
  const predict::DisaggregatedPrediction p = predict::PredictDisaggregated(
      in.plan, in.spec, in.model, in.hardware, cost::Calibration{}, options);
  // The prefill pool computes every prompt; the decode pool every output
  // token but the first, which the prefill server streams.
  if (p.metrics.requests_completed < p.metrics.requests_total)
    return AtConfiguration(*l.config, std::to_string(p.metrics.request_errors) + " of " +
                                          std::to_string(p.metrics.requests_total) +
                                          " simulated requests of the deployment failed");
  double input_tokens = 0, decode_tokens = 0;
  for (const workload::RequestRecord& request : p.sim.records) {
    if (request.status != workload::RequestStatus::kOk) continue;
    input_tokens += static_cast<double>(request.input_tokens);
    decode_tokens += static_cast<double>(std::max<int64_t>(request.output_tokens - 1, 0));
  }
  r.chunked_prefill_size = p.prefill.scheduler.chunked_prefill_size;
  out.input_tps = p.metrics.input_tps;
  out.ttft_p50_s = p.metrics.ttft_s.p50;
  out.tpot_ms = p.metrics.tpot_s.p50 * 1000;
  const int per_node = in.spec.cluster.gpus_per_node;
  out.prefill_tps_per_node = PerNodeWhileBusy(input_tokens, p.prefill.busy_share, p.sim.window_ns,
                                              p.prefill.gpus, per_node);
  out.decode_tps_per_node = PerNodeWhileBusy(decode_tokens, p.decode.busy_share, p.sim.window_ns,
                                             p.decode.gpus, per_node);
  return r;
}

// `l`'s one point predicted by the one predictor of a search, with its
// ensemble's members when `options` draws any; an error when the simulator
// cannot predict the layout or the point's requests do not all fit.
Result<predict::SearchPrediction> PredictConfiguration(const Loaded& l,
                                                       const cost::Calibration& fit,
                                                       const RunOptions& options) {
  predict::SearchOptions so;
  so.ensemble = options.ensemble;
  so.threads = options.threads;
  predict::SearchPrediction p = predict::PredictSearch(l.in, fit, so);
  if (p.points.size() != 1)
    return AtConfiguration(*l.config,
                           "the simulator cannot predict " + l.config->layout.Label() + ": " +
                               predict::NotModelled(l.plan()).value_or("not a valid layout"));
  const predict::PointPrediction& point = p.points.front().prediction;
  if (point.metrics.requests_completed < point.metrics.requests_total)
    return AtConfiguration(*l.config, std::to_string(point.metrics.request_errors) + " of " +
                                          std::to_string(point.metrics.requests_total) +
                                          " simulated requests failed (they do not fit the KV "
                                          "cache pool)");
  return p;
}

// The model config whose fit predicts `l`: its own, or that of the
// calibration configuration it names in calibration_from.
std::string FamilyOf(const std::vector<Loaded>& loaded, const Loaded& l) {
  if (l.config->calibration_from.empty()) return l.in.spec.engine.model_config;
  for (const Loaded& other : loaded)
    if (other.config->name == l.config->calibration_from) return other.in.spec.engine.model_config;
  return l.in.spec.engine.model_config;  // ParseCase checked the name exists
}

// The calibration of one model family: a fit to its calibration
// configurations, which must share one spec (FitInputs holds one).
Result<FamilyFit> FitFamily(const std::vector<Loaded>& loaded, const std::string& model,
                            double tolerance, std::vector<FigureResult>* residuals) {
  FamilyFit fit;
  fit.model = model;
  calibrate::FitInputs in;
  const Loaded* first = nullptr;
  for (const Loaded& l : loaded) {
    if (l.in.spec.engine.model_config != model || !l.config->calibrate) continue;
    if (first == nullptr) {
      first = &l;
    } else if (l.config->overrides != first->config->overrides) {
      return AtConfiguration(
          *l.config, "calibration configurations '" + first->config->name + "' and '" +
                         l.config->name + "' of " + model +
                         " have different overrides; one fit takes one spec, so give each its "
                         "own case or the same overrides");
    }
    PPS_ASSIGN_OR_RETURN(calibrate::Measurement m, MeasurementOf(*l.config));
    in.measurements.push_back(std::move(m));
    in.plans.push_back(l.plan());
    fit.configurations.push_back(l.config->name);
  }
  if (first == nullptr) {
    // A family is some loaded configuration's (FamilyOf): name the first.
    const Loaded& of = *std::find_if(loaded.begin(), loaded.end(),
                                     [&](const Loaded& l) { return FamilyOf(loaded, l) == model; });
    return AtConfiguration(*of.config, "no calibration configuration for " + model +
                                           " (calibrate = true on one of its configurations)");
  }
  in.search = &first->in;
  Result<calibrate::FitResult> result = calibrate::FitCalibration(in);
  if (!result.ok()) return AtConfiguration(*first->config, result.error().message);
  fit.calibration = result->calibration;
  fit.calibration.fitted_layouts.clear();
  for (const auto& m : in.measurements) fit.calibration.fitted_layouts.push_back(m.layout.Label());
  const uncertainty::Site site = SiteOf(*first);
  fit.calibration.fitted_hardware = site.hardware;
  fit.calibration.fitted_gpus_per_node = site.gpus_per_node;
  fit.calibration.fitted_input_tokens = site.input_tokens;
  std::vector<std::string> names;
  for (const auto& r : result->residuals) {
    std::string name = r.layout.Label();
    for (size_t i = 0; i < in.measurements.size(); ++i)
      if (in.measurements[i].layout == r.layout) name = fit.configurations[i];
    names.push_back(name);
  }
  for (auto& f : ResidualFigures(result->residuals, names, tolerance))
    residuals->push_back(std::move(f));
  return fit;
}

// What `prediction` (of `l`, with `calibration`) says, for the figures.
ConfigurationPrediction PredictionOf(const Loaded& l, const predict::SearchPrediction& prediction,
                                     const cost::Calibration& calibration) {
  const predict::PointPrediction& p = prediction.points.front().prediction;
  ConfigurationPrediction out;
  out.name = l.config->name;
  out.input_tps = p.metrics.input_tps;
  out.ttft_p50_s = p.metrics.ttft_s.p50;
  out.tpot_ms = p.metrics.tpot_s.p50 * 1000;
  out.site = SiteOf(l);
  // The nearest fitted layout by plain distance (the scales are not known yet).
  cost::ModelFormScales unit;
  unit.s0 = 1;
  std::array<double, cost::kModelFormDistances> ones;
  ones.fill(1);
  unit.SetPerUnit(ones);
  out.from_calibration = uncertainty::FromCalibration(out.site, calibration, unit);
  if (const uncertainty::PointUncertainty* u = prediction.IntervalOf(0))
    for (const uncertainty::MemberValues& m : u->members) {
      out.member_input_tps.push_back(m.input_tps);
      out.member_ttft_p50_s.push_back(m.ttft_p50_s);
      out.member_tpot_ms.push_back(m.tpot_p50_s * 1000);
    }
  return out;
}

// The 10th-90th percentile of `members`, and whether there are any.
void SetMemberInterval(FigureResult& f, const std::vector<double>& members) {
  f.has_interval = !members.empty();
  if (f.has_interval) f.parameter = uncertainty::IntervalOf(members);
}

// Every configuration predicted with no calibration, against the case's
// references and against each calibration configuration's measured input
// TPS and TTFT p50 at its concurrency (the absolute figures a fit would
// have absorbed; a TTFT the references already state once).
Result<std::vector<FigureResult>> UncalibratedFigures(const Case& c,
                                                      const std::vector<Loaded>& loaded,
                                                      const RunOptions& options) {
  const cost::Calibration priors;
  std::vector<ConfigurationPrediction> predictions;
  std::vector<FigureResult> out;
  for (const Loaded& l : loaded) {
    PPS_ASSIGN_OR_RETURN(const predict::SearchPrediction prediction,
                         PredictConfiguration(l, priors, options));
    ConfigurationPrediction p = PredictionOf(l, prediction, priors);
    if (l.config->calibrate) {
      PPS_ASSIGN_OR_RETURN(const calibrate::Measurement m, MeasurementOf(*l.config));
      for (const calibrate::MeasuredPoint& point : m.points) {
        if (point.concurrency != l.config->concurrency) continue;
        const std::string at = " (measured, c=" + std::to_string(point.concurrency) + ")";
        out.push_back(MakeFigure(p.name + " input TPS" + at, "tok/s", point.input_tps, p.input_tps,
                                 c.tolerance));
        SetMemberInterval(out.back(), p.member_input_tps);
        out.back().extrapolation = p.from_calibration;
        // A TTFT reference of this configuration is the same figure.
        const bool referenced = std::any_of(
            c.references.begin(), c.references.end(),
            [&](const Reference& r) { return r.kind == FigureKind::kTtftP50 && r.a == p.name; });
        if (point.ttft_p50_s > 0 && !referenced) {
          out.push_back(MakeFigure(p.name + " TTFT p50" + at, "s", point.ttft_p50_s, p.ttft_p50_s,
                                   c.tolerance));
          SetMemberInterval(out.back(), p.member_ttft_p50_s);
          out.back().extrapolation = p.from_calibration;
        }
      }
    }
    predictions.push_back(std::move(p));
  }
  for (FigureResult& f : ReferenceFigures(c, predictions)) out.push_back(std::move(f));
  for (FigureResult& f : out) f.held_out = true;  // nothing was fitted
  return out;
}

}  // namespace

int CaseResult::figures_within() const {
  return static_cast<int>(std::count_if(figures.begin(), figures.end(),
                                        [](const FigureResult& f) { return f.within; }));
}

int CaseResult::figures_accepted() const {
  return static_cast<int>(std::count_if(figures.begin(), figures.end(),
                                        [](const FigureResult& f) { return f.accepted(); }));
}

int CaseResult::refusals_right() const {
  return static_cast<int>(std::count_if(refusals.begin(), refusals.end(),
                                        [](const RefusalResult& r) { return r.refused; }));
}

int CaseResult::signs_right() const {
  return static_cast<int>(
      std::count_if(signs.begin(), signs.end(), [](const SignResult& s) { return s.right; }));
}

Result<CaseResult> RunCase(const Case& c, const RunOptions& run_options) {
  CaseResult out;
  out.path = c.path;
  out.name = c.name;
  out.tolerance = c.tolerance;
  std::vector<Loaded> loaded;
  std::vector<LoadedDeployment> deployments;
  for (const Configuration& config : c.configurations) {
    if (config.deployment) {
      PPS_ASSIGN_OR_RETURN(LoadedDeployment d, LoadDeployment(c, config));
      deployments.push_back(std::move(d));
      continue;
    }
    PPS_ASSIGN_OR_RETURN(Loaded l, LoadConfiguration(c, config));
    if (c.Refused(config.name))
      out.refusals.push_back(RefusalOf(c, l));
    else
      loaded.push_back(std::move(l));
  }
  std::vector<std::string> models;  // families in the order first written
  for (const Loaded& l : loaded) {
    const std::string family = FamilyOf(loaded, l);
    if (std::find(models.begin(), models.end(), family) == models.end()) models.push_back(family);
  }
  for (const std::string& model : models) {
    Result<FamilyFit> fit = FitFamily(loaded, model, c.tolerance, &out.figures);
    if (!fit.ok()) return fit.error();  // each names the case file's line
    out.fits.push_back(std::move(fit).value());
  }
  std::vector<ConfigurationPrediction> predictions;
  for (const Loaded& l : loaded) {
    const std::string family = FamilyOf(loaded, l);
    const FamilyFit& fit = *std::find_if(out.fits.begin(), out.fits.end(),
                                         [&](const FamilyFit& f) { return f.model == family; });
    PPS_ASSIGN_OR_RETURN(const predict::SearchPrediction prediction,
                         PredictConfiguration(l, fit.calibration, run_options));
    const predict::PointPrediction& p = prediction.points.front().prediction;
    ConfigurationResult r;
    r.name = l.config->name;
    r.layout = l.config->layout;
    r.hardware = l.in.hardware.name;
    r.model = l.in.spec.engine.model_config;
    r.weights = l.in.model.quantization;
    r.calibration_from = l.config->calibration_from;
    r.concurrency = l.config->concurrency;
    r.sample = {r.name, l.in.spec.workload.request_rate > 0 ? 0 : r.concurrency,
                l.in.spec.workload.requests};
    r.calibrated_on = l.config->calibrate;
    r.dynamic_chunking = p.sim.dynamic_chunking;
    r.chunked_prefill_size = p.scheduler.chunked_prefill_size;
    r.prediction = PredictionOf(l, prediction, fit.calibration);
    predictions.push_back(r.prediction);
    out.configurations.push_back(std::move(r));
  }
  // A deployment is predicted with the priors: the same prediction is its
  // calibrated and its uncalibrated one.
  std::vector<ConfigurationPrediction> deployment_predictions;
  for (const LoadedDeployment& d : deployments) {
    PPS_ASSIGN_OR_RETURN(ConfigurationResult r, PredictDeployment(d));
    out.configurations.push_back(std::move(r));
    // A figure the model cannot predict is no uncalibrated error either.
    if (d.not_predicted.empty())
      deployment_predictions.push_back(out.configurations.back().prediction);
    predictions.push_back(out.configurations.back().prediction);
  }
  PPS_ASSIGN_OR_RETURN(out.uncalibrated, UncalibratedFigures(c, loaded, run_options));
  for (FigureResult& f : ReferenceFigures(c, deployment_predictions)) {
    f.held_out = true;
    out.uncalibrated.push_back(std::move(f));
  }
  for (auto& f : ReferenceFigures(c, predictions)) out.figures.push_back(std::move(f));
  out.signs = ImpliedSigns(c, predictions);
  PPS_ASSIGN_OR_RETURN(std::vector<FigureResult> memory, MemoryFigures(c));
  for (auto& f : memory) out.figures.push_back(std::move(f));
  return out;
}

}  // namespace ppsearch::backtest
