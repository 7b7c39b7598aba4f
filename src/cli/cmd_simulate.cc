// ppsearch simulate SPEC: predict every point (layout x concurrency) of a
// search with the calibrated performance model, print the result table, the
// per-layout time breakdown, memory, and what pp-max-micro-batch-size = 1
// would cost; each predicted value with its interval over the calibration's
// uncertainty, the parameters behind it, and the measurement that would
// narrow the choice most.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <thread>

#include "analysis/prediction.h"
#include "cli/command.h"
#include "cli/search_inputs.h"
#include "cli/simulate_disaggregated.h"
#include "cost/calibration.h"
#include "decide/steady_state.h"
#include "evidence/calibration_file.h"
#include "memory/memory_interval.h"
#include "plan/disaggregation.h"
#include "predict/search.h"
#include "report/result_table.h"
#include "report/simulation_page.h"
#include "report/uncertainty_tables.h"
#include "sim/trace.h"
#include "text/table.h"
#include "uncertainty/model_error_file.h"
#include "uncertainty/summary.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::cli {
namespace {

struct SimulateOptions {
  SpecOptions spec;
  PointSelection selection;
  std::string calibration_path;
  std::string trace_path;
  std::string html_path;
  bool json = false;
  bool skip_cap_check = false;
  uncertainty::EnsembleOptions ensemble;  // members 0: no intervals
};

// A predicted point and its interval (null: no intervals).
struct SimulatedPoint {
  const predict::SearchPoint& point;
  const uncertainty::PointUncertainty* spread;
  const uncertainty::Extrapolation* extrapolation;  // null: no model-form term
  // The share of its input TPS the profile's tensor burst gives
  // (predict::TensorBurstShare); nullopt: the profile has no burst.
  std::optional<double> burst_share = std::nullopt;
};

std::string Pct(double share) { return FormatPercent(share, 1); }

// The profile's tensor burst and the range of its share of the points'
// input TPS, for the text output; "" without a burst.
std::string BurstLine(const hardware::HardwareProfile& hw,
                      const std::vector<SimulatedPoint>& points) {
  double low = 1, high = 0;
  for (const auto& sp : points)
    if (sp.burst_share) {
      low = std::min(low, *sp.burst_share);
      high = std::max(high, *sp.burst_share);
    }
  if (low > high) return "";
  return fmt::format(
      "the tensor burst ({}; one public run's window, docs/model.md) gives {} to {} of these "
      "predictions' input TPS (tensor_burst_share in --json)",
      hw.TensorBurstText(), Pct(low), Pct(high));
}

// A decode figure of a point: its JSON key, the central value, its interval
// (null without intervals) and the factor to the key's unit.
struct DecodeFigure {
  const char* key;
  double value;
  const uncertainty::Interval* interval;
  const uncertainty::Interval* parameter;  // the interval before the model-form term
  double scale;                            // to the key's unit
};

std::vector<DecodeFigure> DecodeFigures(const SimulatedPoint& sp) {
  const auto& m = sp.point.prediction.metrics;
  const uncertainty::PointUncertainty* u = sp.spread;
  return {{"tpot_ms", m.tpot_s.p50, u ? &u->tpot_p50_s : nullptr,
           u ? &u->parameter.tpot_p50_s : nullptr, 1e3},
          {"itl_p99_ms", m.itl_s.p99, u ? &u->itl_p99_s : nullptr,
           u ? &u->parameter.itl_p99_s : nullptr, 1e3},
          {"output_tps", m.output_tps, u ? &u->output_tps : nullptr,
           u ? &u->parameter.output_tps : nullptr, 1},
          {"e2e_p50_s", m.e2e_s.p50, u ? &u->e2e_p50_s : nullptr,
           u ? &u->parameter.e2e_p50_s : nullptr, 1}};
}

// The sample a point simulates, for the steady-state rule: a closed loop
// at the point's concurrency, or an open loop (not judged).
decide::LoopSample SampleOf(const predict::PointPrediction& p, const spec::WorkloadSpec& w) {
  return {"C=" + std::to_string(p.concurrency), w.request_rate > 0 ? 0 : p.concurrency, w.requests};
}

// `decode`: the workload asks for more than one output token per request.
nlohmann::json PointJson(const SimulatedPoint& sp, const spec::WorkloadSpec& w, bool decode) {
  const auto& p = sp.point.prediction;
  const decide::LoopSample sample = SampleOf(p, w);
  const std::string not_steady = decide::NotSteady(sample.concurrency, sample.requests);
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < p.stage_shares.size(); ++s) {
    const auto& sh = p.stage_shares[s];
    const auto& mem = p.memory.stages[s];
    stages.push_back({{"stage", s},
                      {"compute_share", sh.compute},
                      {"exposed_comm_share", sh.exposed_comm},
                      {"pp_transfer_share", sh.transfer},
                      {"overhead_share", sh.overhead},
                      {"idle_share", sh.idle},
                      {"peak_gpu_mib", mem.peak_mib},
                      {"headroom_mib", mem.headroom_mib},
                      {"weight_mib", mem.weight_mib},
                      {"kv_pool_mib", mem.kv_pool_mib},
                      {"activation_mib", mem.activation_mib},
                      {"activation_peak", mem.activation_peak}});
    if (s < p.memory_interval.size()) {
      const memory::StagePeakInterval& i = p.memory_interval[s];
      nlohmann::json& st = stages.back();
      st["peak_gpu_mib_low"] = i.low_mib;
      st["peak_gpu_mib_high"] = i.high_mib;
      st["peak_gpu_mib_terms_low"] = i.terms_low_mib;
      st["peak_gpu_mib_terms_high"] = i.terms_high_mib;
      st["peak_gpu_mib_model_form"] = i.model_form_mib;
    }
  }
  nlohmann::json j = {
      {"pp", p.layout.pp},
      {"tp", p.layout.tp},
      {"ep", p.layout.ep},
      {"concurrency", p.concurrency},
      {"input_tps", p.metrics.input_tps},
      {"ttft_mean_s", p.metrics.ttft_s.mean},
      {"ttft_p50_s", p.metrics.ttft_s.p50},
      {"ttft_p95_s", p.metrics.ttft_s.p95},
      {"ttft_p99_s", p.metrics.ttft_s.p99},
      {"e2e_p50_s", p.metrics.e2e_s.p50},
      {"requests_completed", p.metrics.requests_completed},
      {"requests_total", p.metrics.requests_total},
      {"steady_state", not_steady.empty()},
      {"not_steady", not_steady.empty() ? nlohmann::json() : nlohmann::json(not_steady)},
      {"peak_gpu_mib", p.memory.peak_mib_max},
      {"peak_spread_mib", p.memory.peak_spread_mib},
      {"exposed_comm_share", p.exposed_comm_share},
      {"bubble_share", p.bubble_share},
      {"allreduce_per_forward", p.allreduce_per_forward},
      {"alltoall_per_forward", p.alltoall_per_forward},
      {"max_total_tokens", p.memory.max_total_tokens},
      {"max_running_requests", p.memory.max_running_requests},
      {"tightest_stage", p.memory.tightest_stage},
      {"tightest_reason", p.memory.tightest_reason},
      {"tensor_burst_share",
       sp.burst_share ? nlohmann::json(*sp.burst_share) : nlohmann::json(nullptr)},
      {"pp_max_micro_batch_size", p.sim.pp_max_micro_batch_size},
      {"micro_batches", p.sim.micro_batches},
      {"stages", stages}};
  if (sp.point.cap1_input_tps > 0)
    j["input_tps_with_pp_max_micro_batch_size_1"] = sp.point.cap1_input_tps;
  if (const uncertainty::PointUncertainty* u = sp.spread) {
    const std::pair<const char*, const uncertainty::Interval*> fields[] = {
        {"input_tps", &u->input_tps},
        {"ttft_p50_s", &u->ttft_p50_s},
        {"ttft_p95_s", &u->ttft_p95_s},
        {"peak_gpu_mib", &u->peak_gpu_mib}};
    for (const auto& [name, interval] : fields) {
      j[std::string(name) + "_low"] = interval->low;
      j[std::string(name) + "_high"] = interval->high;
    }
    // The two parts of each interval: the parameters' band, and the
    // model-form half-width (log space) it was widened by.
    const std::pair<const char*, const uncertainty::Interval*> parameter[] = {
        {"input_tps", &u->parameter.input_tps},
        {"ttft_p50_s", &u->parameter.ttft_p50_s},
        {"ttft_p95_s", &u->parameter.ttft_p95_s},
        {"peak_gpu_mib", &u->peak_gpu_mib}};
    for (const auto& [name, interval] : parameter) {
      j[std::string(name) + "_parameter_low"] = interval->low;
      j[std::string(name) + "_parameter_high"] = interval->high;
    }
    j["model_form_rel"] = u->model_form_rel;
    j["parameter_rel"] =
        u->central.input_tps > 0 && u->parameter.input_tps.low > 0
            ? std::log(u->parameter.input_tps.high / u->parameter.input_tps.low) / 2
            : 0.0;
    if (const uncertainty::Extrapolation* d = sp.extrapolation) {
      const auto values = d->Values();
      for (int k = 0; k < cost::kModelFormDistances; ++k)
        j["extrapolation"][cost::kModelFormDistanceNames[k]] = values[k];
    }
  }
  if (decode) {
    j["itl_p50_ms"] = p.metrics.itl_s.p50 * 1e3;
    for (const DecodeFigure& f : DecodeFigures(sp)) {
      j[f.key] = f.value * f.scale;
      if (!f.interval) continue;
      j[std::string(f.key) + "_low"] = f.interval->low * f.scale;
      j[std::string(f.key) + "_high"] = f.interval->high * f.scale;
      j[std::string(f.key) + "_parameter_low"] = f.parameter->low * f.scale;
      j[std::string(f.key) + "_parameter_high"] = f.parameter->high * f.scale;
    }
  }
  return j;
}

// What each stage's peak_gpu_mib_low/_high hold: the estimated terms'
// corners and, apart, the model form measured on the memory backtest.
nlohmann::json MemoryIntervalJson(const memory::MemoryTermRange& r) {
  return {{"terms",
           {{"runtime_mib", {r.runtime_low_mib, r.runtime_high_mib}},
            {"activation_scale", {r.activation_low_scale, r.activation_high_scale}}}},
          {"model_form",
           {{"kv_pool_share", r.kv_model_form_share},
            {"source", "largest |error| of KV pool tokens, validation/memory-sglang-logs"}}},
          {"note",
           "peak_gpu_mib_terms_low/_high: the stage peak at the corners of the estimated terms; "
           "peak_gpu_mib_model_form: the model-form half-width added on each side to give "
           "peak_gpu_mib_low/_high"}};
}

nlohmann::json LayoutJson(const spec::LayoutSpec& l) {
  return {{"pp", l.pp}, {"tp", l.tp}, {"ep", l.ep}, {"label", l.Label()}};
}

nlohmann::json UncertaintyJson(const uncertainty::UncertaintySummary& s,
                               const cost::Calibration& calibration,
                               const uncertainty::EnsembleOptions& eo,
                               const decide::Objective& objective) {
  nlohmann::json j = {{"samples", eo.members},
                      {"seed", eo.seed},
                      {"low_percentile", uncertainty::kIntervalLowPercentile},
                      {"high_percentile", uncertainty::kIntervalHighPercentile},
                      {"sensitivity", nlohmann::json::array()}};
  for (const auto& l : s.sensitivity) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : l.top)
      params.push_back({{"name", cost::Info(p.param).name},
                        {"share", p.share},
                        {"rank_correlation", p.correlation},
                        {"status", cost::ParamStatusName(calibration.Status(p.param))}});
    nlohmann::json e = LayoutJson(l.layout);
    e["parameters"] = params;
    e["model_form_share"] = l.model_form_share;
    j["sensitivity"].push_back(e);
  }
  if (s.ranking.size() >= 2) {
    nlohmann::json d = {{"objective", objective.name()},
                        {"primary", LayoutJson(s.ranking[0].layout)},
                        {"runner_up", LayoutJson(s.ranking[1].layout)},
                        {"primary_score", s.ranking[0].score},
                        {"runner_up_score", s.ranking[1].score},
                        {"intervals_overlap", s.overlap},
                        {"overlap_note", s.overlap_note}};
    if (s.next) {
      d["runner_up_first_in"] = s.next->flips;
      d["members"] = s.next->members;
      nlohmann::json n = {{"line", uncertainty::NextMeasurementLine(*s.next)},
                          {"explained", s.next->explained}};
      if (s.next->layout) {
        n["layout"] = LayoutJson(*s.next->layout);
        n["concurrency"] = s.next->concurrency;
      }
      d["next_measurement"] = n;
    }
    j["decision"] = d;
  }
  return j;
}

// The layouts of the plan the calibration says it was fitted to.
std::vector<spec::LayoutSpec> MeasuredLayouts(const cost::Calibration& calibration,
                                              const plan::Plan& plan) {
  std::vector<spec::LayoutSpec> out;
  for (const std::string& label : calibration.fitted_layouts)
    for (const auto& lp : plan.layouts)
      if (label == lp.layout.Label()) out.push_back(lp.layout);
  return out;
}

void PrintBreakdown(const std::vector<predict::SearchPoint>& points) {
  std::cout << "\n# time breakdown: share of the sample window per stage (compute | exposed TP "
               "collectives | PP receive all-gather | kernel gaps | idle = bubble)\n";
  for (const auto& sp : points) {
    const auto& p = sp.prediction;
    const plan::LayoutPlan& lp = *sp.plan;
    // DeepEP's dispatch and combine replace the MoE layers' FFN all-reduces.
    const std::string alltoall =
        lp.alltoall_per_forward > 0
            ? fmt::format("  all-to-all/forward {} ({} across nodes)", lp.alltoall_per_forward,
                          lp.cross_node_alltoall_per_forward)
            : "";
    std::cout << fmt::format(
        "{}  C={}  all-reduce/forward {} ({} across nodes){}  exposed comm {}  bubble {}\n",
        p.layout.Label(), p.concurrency, lp.allreduce_per_forward,
        lp.cross_node_allreduce_per_forward, alltoall, Pct(p.exposed_comm_share),
        Pct(p.bubble_share));
    text::Table t{
        {"stage", "layers", "TP group", "compute", "comm", "pp-recv", "gaps", "idle", "peak"},
        {},
        {false, true, true, false, false, false, false, false, false}};
    for (size_t s = 0; s < p.stage_shares.size(); ++s) {
      const auto& sh = p.stage_shares[s];
      const auto& st = lp.stages[s];
      t.rows.push_back({std::to_string(s), fmt::format("[{},{})", st.first_layer, st.end_layer),
                        st.collectives.crosses_nodes()
                            ? fmt::format("{} nodes", st.collectives.nodes_spanned)
                            : std::string("node-local"),
                        Pct(sh.compute), Pct(sh.exposed_comm), Pct(sh.transfer), Pct(sh.overhead),
                        Pct(sh.idle), FormatNumber(p.memory.stages[s].peak_mib, 0) + " MiB"});
    }
    std::cout << text::Indent(text::RenderTextTable(t), 2);
    if (!p.memory.stages.empty()) {
      const auto& tight = p.memory.stages[p.memory.tightest_stage];
      std::cout << fmt::format("  tightest: stage {} ({}); headroom {} MiB\n",
                               p.memory.tightest_stage, p.memory.tightest_reason,
                               FormatNumber(tight.headroom_mib, 0));
    }
  }
}

void PrintDecode(const std::vector<SimulatedPoint>& points) {
  std::cout << "\n# decode (predicted): TPOT p50 = median over requests of (e2e - TTFT) / "
               "(output tokens - 1); ITL = gaps between streamed tokens\n";
  text::Table t{{"layout", "C", "TPOT p50 ms", "ITL p99 ms", "output tok/s", "e2e p50 s"},
                {},
                {true, false, false, false, false, false}};
  for (const auto& sp : points) {
    const auto& p = sp.point.prediction;
    std::vector<std::string> row = {p.layout.Label(), std::to_string(p.concurrency)};
    for (const DecodeFigure& f : DecodeFigures(sp)) {
      std::string cell = FormatNumber(f.value * f.scale, 2);
      if (f.interval)
        cell += fmt::format(" [{}, {}]", FormatNumber(f.interval->low * f.scale, 2),
                            FormatNumber(f.interval->high * f.scale, 2));
      row.push_back(cell);
    }
    t.rows.push_back(std::move(row));
  }
  std::cout << text::RenderTextTable(t);
}

void PrintCapCheck(const std::vector<predict::SearchPoint>& points) {
  std::cout << "\n# pp-max-micro-batch-size = 1 (one request per micro-batch) vs SGLang's default, "
               "this workload\n";
  for (const auto& sp : points) {
    if (sp.cap1_input_tps <= 0) continue;
    const auto& p = sp.prediction;
    std::cout << fmt::format("  {}  C={}  default cap {}: {} tok/s   cap 1: {} tok/s   change {}\n",
                             p.layout.Label(), p.concurrency, p.sim.pp_max_micro_batch_size,
                             FormatNumber(p.metrics.input_tps, 2),
                             FormatNumber(sp.cap1_input_tps, 2),
                             FormatSignedPercent(sp.cap1_input_tps / p.metrics.input_tps - 1));
  }
}

void PrintUncertainty(const uncertainty::UncertaintySummary& s,
                      const cost::Calibration& calibration, const decide::Objective& objective) {
  std::cout << "\n# sensitivity: how much of a layout's input TPS interval is the model's form "
               "(its structural error, fitted to the backtest's misses) and how much the "
               "parameters (log-space variance shares); each parameter's share of the variance "
               "of the predicted input TPS it explains alone (squared rank correlation across "
               "the draws; + when TPS rises with it), and its calibration status\n";
  std::cout << text::RenderTextTable(report::SensitivityTable(s, calibration));
  const std::vector<std::string> lines = report::DecisionUncertaintyLines(s, objective);
  if (lines.empty()) return;
  std::cout << "\n# decision under uncertainty (predicted)\n";
  for (const std::string& line : lines) std::cout << "  " << line << "\n";
}

Result<ExitCode> RunSimulate(const SimulateOptions& opts) {
  const NamedPath spec{"the spec", opts.spec.spec_path};
  const NamedPath calibration_file{"the calibration", opts.calibration_path};
  PPS_RETURN_IF_ERROR(CheckOutputPath(
      "--html", opts.html_path, {spec, calibration_file, {"the --trace file", opts.trace_path}}));
  PPS_RETURN_IF_ERROR(CheckOutputPath("--trace", opts.trace_path, {spec, calibration_file}));
  PPS_ASSIGN_OR_RETURN(std::optional<plan::DisaggregatedInputs> disaggregated,
                       plan::LoadDisaggregatedInputs(opts.spec.spec_path, opts.spec.overrides));
  if (disaggregated && !opts.selection.layouts.empty())
    return MakeError(
        "--layout picks among [sweep]'s layouts; this spec's are its [sweep.prefill] and "
        "[sweep.decode] pools");
  if (disaggregated && (!opts.html_path.empty() || !opts.trace_path.empty()))
    return MakeError(
        "--html and --trace are not built for a disaggregated deployment yet; its tables and "
        "--json are");
  cost::Calibration calibration;
  if (!opts.calibration_path.empty()) {
    Result<cost::Calibration> loaded = evidence::LoadCalibration(opts.calibration_path);
    if (!loaded.ok()) return loaded.error();
    calibration = *loaded;
  }
  if (disaggregated)
    return SimulateDisaggregated(*disaggregated, calibration, opts.selection.concurrency,
                                 opts.ensemble.members > 0, opts.json);
  Result<SearchInputs> in = LoadSearchInputs(opts.spec, opts.selection);
  if (!in.ok()) return in.error();
  // The valid layouts are still predicted and printed; the invalid ones make
  // the outcome an error, reported after them.
  std::vector<std::string> errors;
  bool invalid = false;
  for (const auto& lp : in->plan.layouts) {
    if (lp.valid) {
      if (auto why = predict::NotModelled(lp)) {
        errors.push_back(*why);
        invalid = true;
      }
      continue;
    }
    for (const auto& e : lp.errors) errors.push_back(e.message);
    invalid = true;
  }
  predict::SearchOptions so;
  so.cap_check = !opts.skip_cap_check;
  so.keep_trace = !opts.trace_path.empty();
  so.ensemble = opts.ensemble;
  so.measured = MeasuredLayouts(calibration, in->plan);
  so.threads = static_cast<int>(std::min(2u, std::max(1u, std::thread::hardware_concurrency())));
  if (so.ensemble.members > 0) {
    Result<cost::ModelFormScales> model_form = uncertainty::ModelFormFor(calibration);
    if (!model_form.ok()) return model_form.error();
    so.model_form = *model_form;
  }
  const predict::SearchPrediction prediction = predict::PredictSearch(*in, calibration, so);
  const uncertainty::UncertaintySummary& summary = prediction.summary;
  const bool intervals = !prediction.intervals.empty();
  std::vector<SimulatedPoint> points;
  for (size_t i = 0; i < prediction.points.size(); ++i)
    points.push_back(
        {prediction.points[i], prediction.IntervalOf(i),
         i < prediction.extrapolation.size() ? &prediction.extrapolation[i] : nullptr});
  if (in->hardware.TensorBurstRatio() > 1)
    for (auto& sp : points) {
      predict::PointRequest request;
      request.concurrency = sp.point.prediction.concurrency;
      sp.burst_share = predict::TensorBurstShare(*in, *sp.point.plan, calibration, request,
                                                 sp.point.prediction.metrics.input_tps);
    }
  const bool decode = in->spec.workload.output_tokens > 1;
  // Each simulated sample once (a layout's points share their concurrency levels).
  std::vector<decide::LoopSample> samples;
  for (const auto& sp : points) {
    decide::LoopSample s = SampleOf(sp.point.prediction, in->spec.workload);
    if (std::none_of(samples.begin(), samples.end(),
                     [&](const decide::LoopSample& o) { return o.label == s.label; }))
      samples.push_back(std::move(s));
  }
  std::vector<report::ResultRow> rows;
  for (const auto& sp : points) {
    const auto& p = sp.point.prediction;
    report::ResultRow row{p.layout,
                          p.concurrency,
                          p.metrics.input_tps,
                          p.metrics.ttft_s.p50,
                          p.metrics.ttft_s.p95,
                          p.memory.peak_mib_max};
    if (sp.spread) {
      row.input_tps_interval = sp.spread->input_tps;
      row.ttft_p50_interval = sp.spread->ttft_p50_s;
      row.ttft_p95_interval = sp.spread->ttft_p95_s;
    }
    rows.push_back(row);
  }
  if (opts.json) {
    nlohmann::json j = {{"simulated", true},
                        {"calibration", calibration.source},
                        {"calibration_infeasible", calibration.infeasible},
                        {"points", nlohmann::json::array()}};
    for (const auto& sp : points) j["points"].push_back(PointJson(sp, in->spec.workload, decode));
    j["steady_rule"] = decide::SteadyRule();
    j["memory_interval"] = MemoryIntervalJson(memory::DefaultMemoryTermRange());
    if (intervals) {
      j["uncertainty"] =
          UncertaintyJson(summary, calibration, opts.ensemble, in->spec.decision.objective);
      if (const auto& m = prediction.model_form) {
        auto& mj = j["uncertainty"]["model_form"];
        mj["form"] = cost::kModelForm;
        mj["s0"] = m->s0;
        const auto scales = m->PerUnit();
        for (int k = 0; k < cost::kModelFormDistances; ++k)
          mj[cost::kModelFormDistanceNames[k]] = scales[k];
        mj["source"] = m->source;
        mj["applies_to"] = {"input_tps",  "ttft_p50_s", "ttft_p95_s", "tpot_ms",
                            "itl_p99_ms", "output_tps", "e2e_p50_s"};
      }
    }
    std::cout << j.dump(2) << "\n";
  } else {
    const auto& w = in->spec.workload;
    std::cout << fmt::format("# ppsearch simulate {} (predicted values; calibration: {})\n",
                             opts.spec.spec_path, calibration.source);
    std::cout << fmt::format(
        "# {} on {} x {} {}; {} requests x {} input / {} output tokens per sample\n",
        in->model.name, in->spec.cluster.hosts.size(), in->spec.cluster.gpus_per_node,
        in->hardware.gpu_name, w.requests, FormatThousands(w.input_tokens), w.output_tokens);
    // A fit that hit a physical bound still predicts, but the user must know
    // the model could not reach the measurement.
    if (!calibration.infeasible.empty())
      std::cout << "# the calibration is infeasible: " << calibration.infeasible.size()
                << " finding(s) in " << calibration.source
                << " (parameters held at physical bounds while the data pulls further; see "
                   "its \"infeasible\" list)\n";
    if (const std::string line = decide::SteadyStateLine(samples, "load point"); !line.empty())
      std::cout << "# " << line << "\n";
    if (const std::string line = BurstLine(in->hardware, points); !line.empty())
      std::cout << "# " << line << "\n";
    if (intervals)
      std::cout << "# " << report::IntervalMeaning(opts.ensemble.members, opts.ensemble.seed)
                << "\n";
    std::cout << report::RenderResultTable(rows, rows, in->spec.baseline.layout, false);
    if (decode) PrintDecode(points);
    PrintBreakdown(prediction.points);
    PrintCapCheck(prediction.points);
    if (intervals) PrintUncertainty(summary, calibration, in->spec.decision.objective);
  }
  if (!opts.html_path.empty()) {
    const auto& w = in->spec.workload;
    report::SimulationPage page;
    page.spec_path = opts.spec.spec_path;
    page.calibration_source = calibration.source;
    page.setup = fmt::format(
        "{} on {} x {} {}; {} requests x {} input / {} output tokens per sample", in->model.name,
        in->spec.cluster.hosts.size(), in->spec.cluster.gpus_per_node, in->hardware.gpu_name,
        w.requests, FormatThousands(w.input_tokens), w.output_tokens);
    page.gpu_total_mib = in->hardware.memory_mib;
    page.prediction.points = analysis::PredictedPoints(prediction);
    page.prediction.interval_members = intervals ? opts.ensemble.members : 0;
    page.prediction.note = "Predicted by the simulator (calibration: " + calibration.source + ")";
    page.uncertainty = summary;
    page.calibration = &calibration;
    page.interval_seed = opts.ensemble.seed;
    if (Status s = WriteFileAtomic(opts.html_path, report::RenderSimulationHtml(in->spec, page));
        !s.ok()) {
      errors.push_back(s.error().message);
      return ErrorLines(errors, ErrorKind::kIo);
    }
    std::cerr << "page written to " << opts.html_path << " (open it in a browser)\n";
  }
  if (!opts.trace_path.empty()) {
    std::vector<sim::TracePoint> tps;
    for (const auto& sp : prediction.points) {
      sim::TracePoint tp{
          sp.prediction.layout.Label() + " C=" + std::to_string(sp.prediction.concurrency),
          {},
          &sp.prediction.sim};
      for (const auto& st : sp.plan->stages) {
        std::string nodes;
        for (int n : st.nodes) nodes += (nodes.empty() ? "" : " ") + in->plan.cluster.hosts[n];
        tp.stage_names.push_back("stage " + std::to_string(st.pp_rank) + " (" + nodes + ")");
      }
      tps.push_back(std::move(tp));
    }
    if (Status s = WriteFileAtomic(opts.trace_path, sim::TraceToJson(tps).dump() + "\n"); !s.ok()) {
      errors.push_back(s.error().message);
      return ErrorLines(errors, ErrorKind::kIo);
    }
    std::cerr << "trace written to " << opts.trace_path << " (open in ui.perfetto.dev)\n";
  }
  if (invalid) return ErrorLines(errors);
  return kExitOk;
}

}  // namespace

Runner AddSimulateCommand(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand(
      "simulate", "Predict every layout x concurrency point with the calibrated performance model");
  AddSpecOptions(sub, opts->spec);
  AddPointSelection(sub, opts->selection);
  sub->add_option("--calibration", opts->calibration_path,
                  "Calibration file written by 'ppsearch calibrate'");
  sub->add_option("--trace", opts->trace_path,
                  "Write a Chrome/Perfetto trace JSON of the simulated timelines");
  sub->add_option("--html", opts->html_path,
                  "Write a self-contained HTML page of the prediction (tables and charts)");
  sub->add_flag("--json", opts->json, "Print points[] as JSON");
  sub->add_flag("--no-cap-check", opts->skip_cap_check,
                "Skip the extra run with pp-max-micro-batch-size = 1 for PP > 1 layouts");
  sub->add_option("--samples", opts->ensemble.members,
                  "Draws of the calibration's uncertain parameters behind each interval (0: no "
                  "intervals)")
      ->default_val(opts->ensemble.members)
      ->check(CLI::Range(0, 4096));
  sub->add_option("--interval-seed", opts->ensemble.seed,
                  "Seed of the draws (the same seed gives the same intervals)")
      ->default_val(opts->ensemble.seed);
  return [opts] { return RunSimulate(*opts); };
}

}  // namespace ppsearch::cli
