#include "run/replay_medians.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "analysis/points.h"
#include "evidence/medians_csv.h"
#include "evidence/validation.h"
#include "nvidia_smi/gpu_memory.h"
#include "predict/predict.h"
#include "run/runner.h"
#include "run/sim_sample.h"
#include "stats/stats.h"
#include "util/sha256.h"

namespace ppsearch::run {
namespace {

// Sorted TTFTs whose Percentile(50) is p50 and Percentile(95) is p95
// exactly: the ranks around each percentile's interpolation point hold its
// value (stats/stats.h's definition), flat below the median, linear between
// the two, flat above. With fewer than three requests p95 cannot be held
// apart from p50 and only the median is kept.
std::vector<double> TtftValues(size_t n, double p50, double p95) {
  std::vector<double> v(n, p50);
  if (n < 3) return v;
  const double h50 = (n - 1) * 0.5, h95 = (n - 1) * 0.95;
  const size_t m_hi = static_cast<size_t>(std::ceil(h50));
  const size_t q_lo = static_cast<size_t>(std::floor(h95));
  const double frac = h95 - q_lo;
  // Above the p95 pair: its upper value; when the pair's lower rank is a
  // median rank, the upper one makes up the interpolation alone.
  const double top = q_lo <= m_hi && frac > 0 ? p50 + (p95 - p50) / frac : p95;
  for (size_t i = m_hi + 1; i < n; ++i) {
    if (i > q_lo)
      v[i] = top;
    else if (i == q_lo)
      v[i] = p95;
    else
      v[i] = p50 + (p95 - p50) * static_cast<double>(i - m_hi) / static_cast<double>(q_lo - m_hi);
  }
  return v;
}

}  // namespace

Result<std::vector<workload::RequestRecord>> SynthesizeRecords(
    const std::vector<workload::PlannedRequest>& requests, int concurrency,
    const MedianTarget& target, double factor) {
  const size_t n = requests.size();
  if (n == 0) return MakeError("the workload sends no request");
  int64_t input_tokens = 0;
  for (const auto& r : requests) input_tokens += r.input_tokens;
  const double tps = target.input_tps / factor;
  const double window_s = input_tokens / tps;
  // Little's law in a closed loop: each request holds one of the clients
  // for its share of the window.
  const double in_flight = static_cast<double>(std::min<size_t>(concurrency, n));
  const double p50 = target.ttft_p50_s ? *target.ttft_p50_s * factor : window_s * in_flight / n;
  const double p95 = target.ttft_p95_s ? *target.ttft_p95_s * factor : p50;
  if (p95 < p50)
    return MakeError(fmt::format("TTFT p95 {:.4g} s is below TTFT p50 {:.4g} s", p95, p50));
  const std::vector<double> ttft = TtftValues(n, p50, p95);
  if (ttft.back() > window_s)
    return MakeError(fmt::format(
        "a TTFT of {:.4g} s does not fit in the {:.4g} s that {} requests ({} input tokens) take "
        "at {:.6g} tokens/s",
        ttft.back(), window_s, n, input_tokens, tps));
  std::vector<workload::RequestRecord> out;
  for (size_t i = 0; i < n; ++i) {
    // Sends spread so the first is at 0 and the last request ends the
    // window; each request ends within it since its TTFT does not exceed it.
    const double send_s = n == 1 ? 0 : (window_s - ttft[i]) * i / (n - 1);
    workload::RequestRecord r;
    r.id = requests[i].id;
    r.send_ns = std::llround(send_s * 1e9);
    r.first_token_ns = r.send_ns + std::llround((n == 1 ? window_s : ttft[i]) * 1e9);
    r.end_ns = r.first_token_ns;
    r.input_tokens = requests[i].input_tokens;
    r.output_tokens = 1;
    r.http_status = 200;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

// The figures SynthesizeRecords reproduces from `row`: its input TPS, and
// the TTFT percentiles it holds (one it lacks is made up: Little's law, or
// p95 = p50).
std::vector<std::string> FiguresFromFile(const evidence::MedianRow& row) {
  std::vector<std::string> out = {"input_tps"};
  for (double stats::Figures::*m : {&stats::Figures::ttft_p50_s, &stats::Figures::ttft_p95_s})
    if (row.Holds(m)) out.push_back(stats::FieldOf(m)->name);
  return out;
}

// More than any GPU made computes (dense FP4 peaks are below 2e16 FLOP/s).
constexpr double kMaxGpuFlops = 1e17;

struct Point {
  const evidence::MedianRow* row = nullptr;
  double noise_cv = 0;
  std::string noise_source;
};

class MediansReplayEngine : public SampleEngine {
 public:
  MediansReplayEngine(const spec::Spec& spec, const plan::Plan& plan, evidence::MediansCsv csv,
                      std::string sha256)
      : spec_(spec), plan_(plan), csv_(std::move(csv)), sha256_(std::move(sha256)) {}

  const char* kind() const override { return "replay"; }
  // Predictions stay predictions: only a file whose every row says so.
  bool simulated() const override {
    return !csv_.rows.empty() && std::all_of(csv_.rows.begin(), csv_.rows.end(), [](const auto& r) {
      return r.simulated.value_or(false);
    });
  }
  std::optional<evidence::ReplaySource> replayed() const override {
    return evidence::ReplaySource{csv_.path, "medians", sha256_};
  }

  // The figures some measured row of the sweep's points reproduces: one no
  // row holds would exclude every layout (a row without it, its own).
  std::vector<std::string> HeldAnywhere() const {
    std::vector<std::string> held;
    for (const plan::LayoutPlan& lp : plan_.layouts)
      for (int c : spec_.sweep.concurrency)
        if (const evidence::MedianRow* row = Find(lp.layout, c); lp.valid && row && row->measured)
          for (const std::string& name : FiguresFromFile(*row))
            if (std::find(held.begin(), held.end(), name) == held.end()) held.push_back(name);
    return held;
  }

  const evidence::MedianRow* Find(const spec::LayoutSpec& layout, int concurrency) const {
    for (const auto& r : csv_.rows)
      if (r.point.layout == layout && r.point.concurrency == concurrency) return &r;
    return nullptr;
  }

  std::string Where(const evidence::MedianRow& row) const {
    return fmt::format("{}:{}: {} at C={}", csv_.path, row.line(), row.point.layout.Label(),
                       row.point.concurrency);
  }

  Point PointOf(const evidence::MedianRow& row) const {
    const int repeats = row.point.valid_repeats;
    if (const std::optional<double> spread = row.Get(&evidence::PointSummary::input_tps_spread);
        spread && repeats >= 2)
      return {&row, *spread / (2 * stats::ExpectedMaxOfNormals(repeats)),
              fmt::format("input_tps_spread {} over {} repeats", *spread, repeats)};
    return {&row, spec_.sim.noise_cv,
            "the spec's [sim] noise_cv: the file records no spread over two or more repeats"};
  }

  // The row's figures against the workload at every repeat's seed, before
  // any sample runs: what a sample made of them would be, checked as the
  // report checks evidence, and figures no GPU could reach.
  Status Check(const evidence::MedianRow& row) const {
    // A negative figure (a spread, a TTFT) is the CSV reader's refusal.
    if (!row.measured) return Status::Ok();  // its samples fail as they did
    for (int r = 1; r <= spec_.sweep.repeats; ++r) {
      const evidence::SampleId id{row.point.layout, row.point.concurrency, r};
      const auto requests = workload::PlanRequests(
          predict::WorkloadFor(spec_, row.point.concurrency, SampleSeed(spec_, id)));
      PPS_RETURN_IF_ERROR(CheckReachable(row, requests));
      Result<std::vector<workload::RequestRecord>> records = Records(row, SampleSeed(spec_, id));
      if (!records.ok()) return MakeError(Where(row) + ": " + records.error().message);
      const evidence::RecordLimits limits{
          spec_.workload.requests,
          static_cast<int64_t>(
              std::llround(evidence::SampleDeadlineS(spec_, row.point.concurrency) * 1e9)),
          /*concurrency=*/0, evidence::MaxInputTokens(spec_.workload),
          evidence::MaxOutputTokens(spec_.workload)};
      std::vector<evidence::EvidenceProblem> problems =
          evidence::CheckRecords(*records, limits, "the synthesized records");
      if (const std::string csv = GpuCsv(row, spec_.cluster.hosts[0].name); !csv.empty())
        if (Result<std::vector<nvidia_smi::GpuMemory>> gpus = nvidia_smi::ParseGpuMemoryCsv(csv);
            gpus.ok())
          for (auto& p : evidence::CheckGpuSnapshot(*gpus, "the synthesized GPU snapshot"))
            problems.push_back(std::move(p));
      if (!problems.empty())
        return MakeError(Where(row) + ": its figures make evidence that cannot be true: " +
                         problems.front().Text());
    }
    return Status::Ok();
  }

  // No GPU computes faster than kMaxGpuFlops, and a prompt token costs at
  // least 2 FLOPs per active parameter (one multiply-add each): the input
  // TPS and the TTFT of the row's shortest prompt are bounded by the
  // layout's GPUs.
  Status CheckReachable(const evidence::MedianRow& row,
                        const std::vector<workload::PlannedRequest>& requests) const {
    const double flops_per_token = 2.0 * static_cast<double>(plan_.model.active_params);
    const double gpus = static_cast<double>(row.point.layout.gpus());
    if (!(flops_per_token > 0) || requests.empty()) return Status::Ok();
    const double max_tps = gpus * kMaxGpuFlops / flops_per_token;
    const double input_tps = row.point.median.input_tps;
    if (!(input_tps > 0) || input_tps > max_tps)
      return MakeError(fmt::format(
          "{}: input_tps_median {:.4g} is not in (0, {:.4g}] tokens/s, the most {} GPUs at {:.0e} "
          "FLOP/s each could prefill of a model with {} active parameters",
          Where(row), input_tps, max_tps, gpus, kMaxGpuFlops, plan_.model.active_params));
    int64_t shortest = requests.front().input_tokens;
    for (const auto& r : requests) shortest = std::min(shortest, r.input_tokens);
    const double min_ttft_s = static_cast<double>(shortest) / max_tps;
    for (const std::optional<double>& ttft :
         {row.Get(&stats::Figures::ttft_p50_s), row.Get(&stats::Figures::ttft_p95_s)})
      if (ttft && !(*ttft >= min_ttft_s))
        return MakeError(fmt::format(
            "{}: a TTFT of {:.4g} s is below {:.4g} s, the least a prompt of {} tokens takes at "
            "that bound",
            Where(row), *ttft, min_ttft_s, shortest));
    return Status::Ok();
  }

  Result<std::vector<workload::RequestRecord>> Records(const evidence::MedianRow& row,
                                                       uint64_t seed, double factor = 1) const {
    const auto requests =
        workload::PlanRequests(predict::WorkloadFor(spec_, row.point.concurrency, seed));
    return SynthesizeRecords(requests, row.point.concurrency,
                             {row.point.median.input_tps, row.Get(&stats::Figures::ttft_p50_s),
                              row.Get(&stats::Figures::ttft_p95_s)},
                             factor);
  }

  Result<SampleOutput> Run(const SampleContext& ctx) override {
    const evidence::MedianRow* row = Find(ctx.id.layout, ctx.id.concurrency);
    if (row == nullptr)  // the factory checked every sample of the sweep
      return MakeError(fmt::format("{}: no row for {} at C={}", csv_.path, ctx.id.layout.Label(),
                                   ctx.id.concurrency));
    if (!row->measured)
      return MakeError(Where(*row) + ": the file records no valid repeat of this point");
    const Point point = PointOf(*row);
    spec::SimSpec noise = spec_.sim;
    noise.noise_cv = point.noise_cv;
    const double f = SimSampleEngine::NoiseFactor(noise, ctx.id);
    SampleOutput out;
    PPS_ASSIGN_OR_RETURN(out.records, Records(*row, ctx.workload_seed, f));
    for (size_t n = 0; n < spec_.cluster.hosts.size(); ++n) {
      NodeEvidence node;
      node.host = spec_.cluster.hosts[n].name;
      node.log = fmt::format(
          "[ppsearch replay] no server ran: this sample is synthesized from {}\n", Where(*row));
      node.gpu_csv = GpuCsv(*row, node.host);
      out.nodes.push_back(std::move(node));
    }
    out.bench.sample = ctx.id.str();
    out.bench.replayed_from.emplace().file = csv_.path;
    out.bench.replayed_from->line = row->line();
    out.bench.seed = ctx.workload_seed;
    out.bench.noise_factor = f;
    out.bench.synthesis = evidence::BenchSynthesis{
        .noise_cv = point.noise_cv,
        .noise_source = point.noise_source,
        .ttft = row->Holds(&stats::Figures::ttft_p50_s)
                    ? "from the file"
                    : "not in the file: Little's law from the concurrency and input TPS",
        .decode = "not in the file: each record carries its first token only",
        .gpu_memory =
            row->point.peak_gpu_mib ? "peak_gpu_mib on every GPU" : "not in the file: no snapshot",
        .figures_from_file = FiguresFromFile(*row)};
    return out;
  }

 private:
  // Every GPU of the node at the row's peak: the worst rank's headroom is
  // then the row's.
  std::string GpuCsv(const evidence::MedianRow& row, const std::string& host) const {
    const evidence::PointSummary& p = row.point;
    if (!p.peak_gpu_mib) return "";
    const double total = p.gpu_total_mib  ? *p.gpu_total_mib
                         : p.headroom_mib ? *p.peak_gpu_mib + *p.headroom_mib
                                          : plan_.cluster.gpu_memory_mib;
    std::vector<nvidia_smi::GpuMemory> gpus;
    for (int g = 0; g < spec_.cluster.gpus_per_node; ++g) {
      nvidia_smi::GpuMemory m;
      m.index = g;
      m.uuid = fmt::format("GPU-replay-{}-{}", host, g);
      m.name = plan_.cluster.gpu_name.empty() ? "replayed GPU" : plan_.cluster.gpu_name;
      m.used_mib = std::round(*p.peak_gpu_mib);
      m.total_mib = std::round(total);
      gpus.push_back(m);
    }
    return nvidia_smi::FormatGpuMemoryCsv(gpus);
  }

  const spec::Spec& spec_;
  const plan::Plan& plan_;
  const evidence::MediansCsv csv_;
  const std::string sha256_;
};

}  // namespace

Result<std::unique_ptr<SampleEngine>> MakeMediansReplay(const spec::Spec& spec,
                                                        const plan::Plan& plan,
                                                        const std::string& path) {
  PPS_ASSIGN_OR_RETURN(evidence::MediansCsv csv, evidence::ReadMediansCsv(path));
  PPS_ASSIGN_OR_RETURN(std::string sha256, Sha256File(path));
  auto engine = std::make_unique<MediansReplayEngine>(spec, plan, std::move(csv), sha256);
  // Checked once, before any sample: every point of the sweep has its row,
  // and every row's figures fit the spec's workload.
  std::vector<std::string> missing;
  for (const plan::LayoutPlan& lp : plan.layouts) {
    if (!lp.valid) continue;
    for (int c : spec.sweep.concurrency) {
      const evidence::MedianRow* row = engine->Find(lp.layout, c);
      if (row == nullptr) {
        missing.push_back(fmt::format("{} at C={}", lp.layout.Label(), c));
        continue;
      }
      PPS_RETURN_IF_ERROR(engine->Check(*row));
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += "\n  " + m;
    return MakeError(
        fmt::format("{} has no row (pp, tp, ep, concurrency) for {} of this sweep's "
                    "points:{}",
                    path, missing.size(), list));
  }
  // A figure the decision judges that no row holds would exclude every
  // layout whatever the file says: refused once, here.
  if (const std::vector<std::string> lines =
          analysis::DecisionFiguresNotHeld(spec, engine->HeldAnywhere(), path);
      !lines.empty()) {
    return MakeError(fmt::format("{}\nreplay a run directory, or judge by what the file holds",
                                 fmt::join(lines, "\n")));
  }
  return std::unique_ptr<SampleEngine>(std::move(engine));
}

}  // namespace ppsearch::run
