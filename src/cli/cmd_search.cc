// ppsearch search SPEC [--instances ...] [--pp ...] [--ep ...] [--chunked-prefill-size ...]
// [--max-running-requests ...] [--concurrency ...] [--calibration FILE]
// [--target-rate R] [--json] [--top N]: every layout of the spec's cluster within the bounds
// (the spec's [search] lists, each replaced by its flag when one is given),
// through the planner's checks, predicted, ranked by the decision's
// objective at each one's best load point with intervals where they matter,
// and the Pareto front; with --target-rate, the GPUs that serve that rate.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command.h"
#include "cli/command_inputs.h"
#include "cost/calibration.h"
#include "evidence/calibration_file.h"
#include "inputs/search_inputs.h"
#include "launch/process.h"
#include "plan/disaggregation.h"
#include "plan/spec_hardware.h"
#include "report/search_page.h"
#include "search/capacity.h"
#include "search/measure.h"
#include "search/search.h"
#include "search/search_render.h"
#include "spec/disaggregation_section.h"
#include "spec/emit.h"
#include "spec/limits.h"
#include "spec/spec_parser.h"
#include "uncertainty/model_error_file.h"
#include "util/files.h"
#include "util/format.h"

namespace ppsearch::cli {
namespace {

struct SearchCliOptions {
  SpecOptions spec;
  std::string calibration_path;
  search::SearchOptions search;
  std::string emit_spec;
  std::string html;
  bool json = false;
  bool exhaustive = false;
  int top = 10;
  double target_rate = 0;  // requests/s to plan capacity for; 0: none
};

// The search's arguments as a shell takes them, for the emitted spec's
// header: the spec, the space searched (the [search] section's lists and
// the flags, merged), the calibration and the draws, and the overrides, so
// that the header's command reproduces the search.
std::string SearchArgs(const SearchCliOptions& opts) {
  std::vector<std::string> a = {opts.spec.spec_path};
  const search::Bounds& b = opts.search.bounds;
  auto list = [&a](const char* flag, const auto& values) {
    if (values.empty()) return;
    a.push_back(flag);
    a.push_back(fmt::format("{}", fmt::join(values, ",")));
  };
  list("--instances", b.instances);
  list("--pp", b.pp);
  list("--ep", b.ep);
  list("--dp", b.dp);
  list("--chunked-prefill-size", b.chunked_prefill_size);
  list("--max-running-requests", b.max_running_requests);
  list("--moe-a2a-backend", b.moe_a2a_backend);
  list("--concurrency", b.concurrency);
  list("--request-rate", b.request_rate);
  if (!b.disaggregated.empty()) a.insert(a.end(), {"--disaggregated", b.disaggregated});
  if (!opts.calibration_path.empty()) a.insert(a.end(), {"--calibration", opts.calibration_path});
  const uncertainty::EnsembleOptions defaults;
  if (opts.search.ensemble.members != defaults.members)
    a.insert(a.end(), {"--samples", std::to_string(opts.search.ensemble.members)});
  if (opts.search.ensemble.seed != defaults.seed)
    a.insert(a.end(), {"--interval-seed", std::to_string(opts.search.ensemble.seed)});
  for (const std::string& o : opts.spec.overrides) a.insert(a.end(), {"--set", o});
  return launch::ShellJoin(a);
}

// Writes the run spec of the candidates worth measuring, after checking that
// it parses and that every layout in it plans as valid.
Status EmitSpec(const SearchCliOptions& opts, const search::SearchResult& result, int requests,
                const std::vector<spec::HostSpec>& cluster_hosts) {
  std::vector<std::string> hosts;
  for (const spec::HostSpec& h : cluster_hosts) hosts.push_back(h.name);
  const search::Measurement m = search::WorthMeasuring(result, SearchArgs(opts), requests, hosts);
  if (m.measured.empty())
    return MakeError("--emit-spec " + opts.emit_spec +
                     (m.disaggregated.empty()
                          ? ": no candidate qualifies; nothing to measure"
                          : ": no aggregated candidate qualifies, and real servers do not run "
                            "a disaggregated deployment yet; nothing to measure"));
  PPS_ASSIGN_OR_RETURN(const std::string source, ReadFile(opts.spec.spec_path));
  PPS_ASSIGN_OR_RETURN(
      const std::string text,
      spec::DeriveSpecText(source, opts.spec.spec_path, opts.spec.overrides, m.sweep, m.header));
  Result<spec::Spec> parsed = spec::ParseSpec(text, opts.emit_spec, {});
  if (!parsed.ok())
    return MakeError("--emit-spec: the derived spec does not parse (a bug): " +
                     parsed.error().message);
  if (m.sweep.prefill) {
    // A disaggregated deployment: checked as `plan` checks one.
    Result<std::optional<spec::Disaggregation>> d =
        spec::ParseDisaggregation(text, opts.emit_spec, {});
    if (!d.ok() || !d->has_value())
      return MakeError("--emit-spec: the derived disaggregated spec does not parse (a bug): " +
                       (d.ok() ? std::string("no pools") : d.error().message));
    PPS_ASSIGN_OR_RETURN(const model::ModelDesc model, inputs::LoadSpecModel(*parsed));
    PPS_ASSIGN_OR_RETURN(const hardware::HardwareProfile hw, plan::LoadSpecHardware(*parsed));
    const plan::DisaggregatedPlan check = plan::PlanDisaggregated(*parsed, **d, model, hw);
    if (const std::vector<plan::Diagnostic> errors = check.AllErrors(); !errors.empty())
      return MakeError("--emit-spec: the deployment does not plan in the derived spec (a bug): " +
                       errors.front().message);
    PPS_RETURN_IF_ERROR(WriteFileAtomic(opts.emit_spec, text));
    std::cerr << "wrote " << opts.emit_spec << ": the disaggregated deployment "
              << m.measured.front().Label() << " (`ppsearch simulate " << opts.emit_spec
              << "` predicts it, `ppsearch run " << opts.emit_spec
              << " --engine sim` runs it; real servers do not run one yet)\n";
    return Status::Ok();
  }
  PPS_ASSIGN_OR_RETURN(const SearchInputs check, inputs::LoadSearchInputs(*parsed));
  for (const auto& lp : check.plan.layouts)
    if (!lp.valid)
      return MakeError("--emit-spec: " + lp.layout.Label() +
                       " does not plan in the derived spec (a bug): " + lp.errors.front().message);
  PPS_RETURN_IF_ERROR(WriteFileAtomic(opts.emit_spec, text));
  std::cerr << "wrote " << opts.emit_spec << ": " << m.measured.size()
            << " layout(s) to measure with `ppsearch run " << opts.emit_spec << "`\n";
  return Status::Ok();
}

// Progress on stderr for a search that takes more than a moment: the
// estimate when it passes kQuietS, then, once kQuietS have passed, a line
// at most every second and one when a phase ends.
class SearchProgress {
 public:
  static constexpr double kQuietS = 2.0;

  void Estimate(const search::SpaceEstimate& e) {
    if (e.seconds < kQuietS) return;
    std::cerr << fmt::format("search: {} candidates, {} predictions, estimated {} s\n",
                             FormatNumber(e.candidates, 0), FormatNumber(e.predictions, 0),
                             FormatNumber(e.seconds, 0));
  }

  void Update(const char* phase, size_t done, size_t total) {
    const auto now = Clock::now();
    if (Seconds(now - start_) < kQuietS) return;
    if (done < total && Seconds(now - last_) < 1.0) return;
    last_ = now;
    std::cerr << fmt::format("search: {} {} of {} candidates ({:.0f}%), {:.0f} s\n", phase, done,
                             total, total > 0 ? 100.0 * done / total : 100.0,
                             Seconds(now - start_));
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

Result<ExitCode> RunSearch(SearchCliOptions opts) {
  const NamedPath spec{"the spec", opts.spec.spec_path};
  const NamedPath calibration_file{"the calibration", opts.calibration_path};
  PPS_RETURN_IF_ERROR(CheckOutputPath("--emit-spec", opts.emit_spec,
                                      {spec, calibration_file, {"the --html page", opts.html}}));
  PPS_RETURN_IF_ERROR(CheckOutputPath("--html", opts.html, {spec, calibration_file}));
  PPS_ASSIGN_OR_RETURN(const SearchInputs in, LoadSearchInputs(opts.spec, {}));
  // The spec's [search] lists, each replaced by its flag when one is given.
  opts.search.bounds = search::WithFlags(search::SpecBounds(in.spec.search), opts.search.bounds);
  // Refused before the search, as other bad arguments are, not after its
  // output is printed.
  if (!opts.emit_spec.empty() && opts.search.bounds.request_rate.size() > 1)
    return MakeError(
        fmt::format("--emit-spec {}: a run spec holds one workload.request_rate, the search has {} "
                    "(--request-rate or [search] request_rate); search one rate to emit its spec",
                    opts.emit_spec, opts.search.bounds.request_rate.size()));
  cost::Calibration calibration;
  if (!opts.calibration_path.empty()) {
    PPS_ASSIGN_OR_RETURN(calibration, evidence::LoadCalibration(opts.calibration_path));
  }
  opts.search.screen = !opts.exhaustive;
  if (opts.search.ensemble.members > 0) {
    PPS_ASSIGN_OR_RETURN(opts.search.model_form, uncertainty::ModelFormFor(calibration));
  }
  SearchProgress progress;
  opts.search.on_estimate = [&](const search::SpaceEstimate& e) { progress.Estimate(e); };
  opts.search.progress = [&](const char* phase, size_t done, size_t total) {
    progress.Update(phase, done, total);
  };
  PPS_ASSIGN_OR_RETURN(const search::SearchResult result,
                       search::Search(in, calibration, opts.search));
  std::optional<search::CapacityPlan> capacity;
  if (opts.target_rate > 0)
    capacity = search::PlanCapacity(result, opts.target_rate, in.spec.cluster.world_size());
  if (opts.json) {
    nlohmann::json j = search::SearchToJson(result);
    if (capacity) j["capacity"] = search::CapacityToJson(*capacity);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << search::RenderSearchText(result, opts.top);
    if (capacity && result.qualifying > 0)
      std::cout << search::RenderCapacityText(result, *capacity, opts.top);
  }
  if (!opts.html.empty()) {
    PPS_RETURN_IF_ERROR(WriteFileAtomic(
        opts.html, report::RenderSearchHtml(opts.spec.spec_path, result, opts.top)));
    std::cerr << "wrote " << opts.html << "\n";
  }
  if (result.qualifying == 0 || (capacity && capacity->rows.empty())) {
    if (!opts.emit_spec.empty())
      std::cerr << "--emit-spec " << opts.emit_spec
                << ": not written: no candidate qualifies, so there is nothing to measure\n";
    return kExitNoneQualifies;
  }
  if (!opts.emit_spec.empty())
    PPS_RETURN_IF_ERROR(EmitSpec(opts, result, in.spec.workload.requests, in.spec.cluster.hosts));
  return kExitOk;
}

}  // namespace

Runner AddSearchCommand(CLI::App& app) {
  auto opts = std::make_shared<SearchCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "search",
      "Predict every layout the cluster could run (instances x PP x TP using every GPU, EP, "
      "chunk size, "
      "max-running-requests) at several load points; rank them, with intervals, and print the "
      "Pareto front");
  AddSpecOptions(sub, opts->spec);
  search::Bounds& b = opts->search.bounds;
  sub->add_option("--instances", b.instances,
                  "Instance counts to consider: independent copies of a layout on disjoint "
                  "nodes behind a router (default: [search] instances, else every count that "
                  "splits the hosts into equal whole-node instances)")
      ->delimiter(',');
  sub->add_option(
         "--pp", b.pp,
         "PP sizes to consider (default: [search] pp, else every divisor of an instance's GPU "
         "count)")
      ->delimiter(',');
  sub->add_option("--ep", b.ep,
                  "EP sizes to consider (default: [search] ep, else every divisor of TP)")
      ->delimiter(',');
  sub->add_option("--dp", b.dp,
                  "DP-attention sizes to consider, each dividing TP (default: [search] dp, else "
                  "every divisor of TP)")
      ->delimiter(',');
  sub->add_option("--disaggregated", b.disaggregated,
                  "Disaggregated prefill/decode deployments over the hosts' whole nodes beside the "
                  "aggregated layouts: on or off (default: on for a decode workload on two hosts "
                  "or more)")
      ->check(CLI::IsMember({"on", "off"}));
  sub->add_option("--chunked-prefill-size", b.chunked_prefill_size,
                  "chunked-prefill-size values (default: [search] chunked_prefill_size, else the "
                  "spec's, half and twice it)")
      ->delimiter(',');
  sub->add_option("--max-running-requests", b.max_running_requests,
                  fmt::format("max-running-requests values, each from {} to {} (default: "
                              "[search] max_running_requests, else the spec's, or SGLang's "
                              "default)",
                              spec::kMinRunningRequests, spec::kMaxRunningRequests))
      ->delimiter(',');
  sub->add_option("--moe-a2a-backend", b.moe_a2a_backend,
                  "MoE all-to-all backends to consider, e.g. none,deepep (default: [search] "
                  "moe_a2a_backend, else the spec's)")
      ->delimiter(',');
  sub->add_option("--concurrency", b.concurrency,
                  "load points: requests in flight (default: [search] concurrency, else "
                  "1,2,4,8,16,32,64)")
      ->delimiter(',');
  sub->add_option("--request-rate", b.request_rate,
                  "open-loop load points, requests/s of Poisson arrivals, instead of closed-loop "
                  "concurrencies; --concurrency then takes one value, the cap on requests in "
                  "flight (default: [search] request_rate, else none)")
      ->delimiter(',');
  sub->add_option("--calibration", opts->calibration_path,
                  "Calibration file written by 'ppsearch calibrate'");
  sub->add_option("--samples", opts->search.ensemble.members,
                  "Draws behind each interval (0: central values only)")
      ->default_val(opts->search.ensemble.members)
      ->check(CLI::Range(0, 4096));
  sub->add_option("--interval-seed", opts->search.ensemble.seed, "Seed of the draws")
      ->default_val(opts->search.ensemble.seed);
  sub->add_option("--max-search-s", opts->search.max_search_s,
                  "Refuse a search whose estimated simulation time passes this many seconds "
                  "(0: no bound)")
      ->default_val(opts->search.max_search_s)
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--exhaustive", opts->exhaustive,
                "Draw intervals for every qualifying candidate and bisect every candidate's "
                "load to its SLA limit, instead of screening by central values (the same "
                "best, slower)");
  sub->add_option("--top", opts->top,
                  "Ranked candidates to print (those tied with the best are "
                  "always printed)")
      ->default_val(opts->top)
      ->check(CLI::Range(1, 100000));
  sub->add_option("--target-rate", opts->target_rate,
                  "Plan capacity for this many requests/s: how many GPUs, in which layout and "
                  "how many instances, serve it under the SLA (the fewest GPUs first)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--json", opts->json, "Print the whole result as JSON");
  sub->add_option("--html", opts->html,
                  "Write the result as a self-contained HTML page with the Pareto front drawn");
  sub->add_option("--emit-spec", opts->emit_spec,
                  "Write a run spec of the candidates worth measuring (those that could still be "
                  "the best), checked before it is written");
  return [opts] { return RunSearch(*opts); };
}

}  // namespace ppsearch::cli
