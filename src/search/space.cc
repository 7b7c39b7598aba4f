#include "search/space.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "spec/engine_env.h"
#include "spec/limits.h"
#include "spec/moe_backends.h"
#include "util/format.h"

namespace ppsearch::search {
namespace {

std::vector<int> Divisors(int n, int at_most) {
  std::vector<int> out;
  for (int d = 1; d <= n && d <= at_most; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

// A dimension's values within its bound: the bound when given, else `all`.
template <typename T>
std::vector<T> Within(const std::vector<T>& bound, std::vector<T> all) {
  if (bound.empty()) return all;
  std::vector<T> out;
  for (T v : all)
    if (std::find(bound.begin(), bound.end(), v) != bound.end()) out.push_back(v);
  return out;
}

template <typename T>
Status CheckList(const std::vector<T>& values, const char* flag, T at_least) {
  if (values.size() > static_cast<size_t>(spec::kMaxSearchValues))
    return MakeError(
        fmt::format("{}: at most {} values, got {}", flag, spec::kMaxSearchValues, values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < at_least)
      return MakeError(fmt::format("{}: expected values >= {}, got {}", flag, at_least, values[i]));
    // A repeated value would predict the same candidates twice.
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) !=
        values.begin() + static_cast<std::ptrdiff_t>(i))
      return MakeError(fmt::format("{}: {} is listed twice", flag, values[i]));
  }
  return Status::Ok();
}

}  // namespace

std::string PdPools::Ratio() const {
  return fmt::format("{}P{}D", prefill.instances, decode.instances);
}

std::string Candidate::Label() const {
  const std::string set = knobs.Label();
  const std::string what =
      pd ? fmt::format("{} {} + {}", pd->Ratio(), pd->prefill.Label(), pd->decode.Label())
         : layout.Label();
  std::string label = what + (set == "spec's knobs" ? "" : " " + set);
  if (!layer_split.empty()) label += " split " + spec::PpLayerPartitionText(layer_split);
  return label;
}

int64_t Candidate::gpus() const {
  return pd ? pd->prefill.gpus() + pd->decode.gpus() : layout.gpus();
}

std::string LoadPoint::RateText() const { return FormatRate(request_rate); }

std::string LoadPoint::Label() const {
  if (!open()) return fmt::format("C={}", concurrency);
  const std::string rate = RateText();
  return concurrency > 0 ? fmt::format("{} req/s, C<={}", rate, concurrency) : rate + " req/s";
}

Status CheckBounds(const Bounds& b) {
  PPS_RETURN_IF_ERROR(CheckList(b.instances, "--instances", 1));
  PPS_RETURN_IF_ERROR(CheckList(b.pp, "--pp", 1));
  PPS_RETURN_IF_ERROR(CheckList(b.ep, "--ep", 1));
  PPS_RETURN_IF_ERROR(CheckList(b.dp, "--dp", 1));
  PPS_RETURN_IF_ERROR(CheckList(b.chunked_prefill_size, "--chunked-prefill-size", int64_t{-1}));
  // The section's rule ([search] max_running_requests): 0 is no cap SGLang
  // takes, not a name for its default.
  for (int m : b.max_running_requests)
    if (m < spec::kMinRunningRequests || m > spec::kMaxRunningRequests)
      return MakeError(
          fmt::format("--max-running-requests: expected an integer in [{}, {}], got {}",
                      spec::kMinRunningRequests, spec::kMaxRunningRequests, m));
  PPS_RETURN_IF_ERROR(
      CheckList(b.max_running_requests, "--max-running-requests", spec::kMinRunningRequests));
  PPS_RETURN_IF_ERROR(CheckList(b.concurrency, "--concurrency", 1));
  PPS_RETURN_IF_ERROR(CheckList(b.moe_a2a_backend, "--moe-a2a-backend", std::string()));
  for (const std::string& name : b.moe_a2a_backend)
    if (!spec::IsMoeA2aBackend(name))
      return MakeError(fmt::format("--moe-a2a-backend: \"{}\" is not an SGLang backend ({})", name,
                                   spec::MoeA2aBackendNames()));
  if (!b.disaggregated.empty() && b.disaggregated != "on" && b.disaggregated != "off")
    return MakeError(
        fmt::format("--disaggregated: expected on or off, got \"{}\"", b.disaggregated));
  for (int64_t c : b.chunked_prefill_size)
    if (c == 0)
      return MakeError("--chunked-prefill-size: 0 is not a chunk size (-1 disables chunking)");
  for (double r : b.request_rate)
    if (!(r >= spec::kMinRequestRate) || std::isinf(r))
      return MakeError(fmt::format("--request-rate: expected requests/s >= {:g}, got {}",
                                   spec::kMinRequestRate, r));
  // Past the spec's own bounds a value could not be written into the run
  // spec --emit-spec derives.
  for (int c : b.concurrency)
    if (c > spec::kMaxConcurrency)
      return MakeError(
          fmt::format("--concurrency: expected values <= {}, got {}", spec::kMaxConcurrency, c));
  for (int64_t c : b.chunked_prefill_size)
    if (c > spec::kMaxTokens)
      return MakeError(fmt::format("--chunked-prefill-size: expected values <= {}, got {}",
                                   spec::kMaxTokens, c));
  PPS_RETURN_IF_ERROR(CheckList(b.request_rate, "--request-rate", 0.0));
  if (!b.request_rate.empty() && b.concurrency.size() > 1)
    return MakeError(fmt::format(
        "--concurrency: with request rates it is the one cap on requests in flight; got {} "
        "values",
        b.concurrency.size()));
  return Status::Ok();
}

Bounds SpecBounds(const spec::SearchSpec& section) {
  Bounds b;
  b.instances = section.instances;
  b.pp = section.pp;
  b.ep = section.ep;
  b.chunked_prefill_size = section.chunked_prefill_size;
  b.max_running_requests = section.max_running_requests;
  b.dp = section.dp;
  b.moe_a2a_backend = section.moe_a2a_backend;
  b.concurrency = section.concurrency;
  b.request_rate = section.request_rate;
  b.disaggregated = section.disaggregated;
  return b;
}

Bounds WithFlags(Bounds section, const Bounds& flags) {
  auto over = [](auto& kept, const auto& given) {
    if (!given.empty()) kept = given;
  };
  over(section.instances, flags.instances);
  over(section.pp, flags.pp);
  over(section.ep, flags.ep);
  over(section.dp, flags.dp);
  over(section.chunked_prefill_size, flags.chunked_prefill_size);
  over(section.max_running_requests, flags.max_running_requests);
  over(section.moe_a2a_backend, flags.moe_a2a_backend);
  over(section.concurrency, flags.concurrency);
  over(section.request_rate, flags.request_rate);
  over(section.disaggregated, flags.disaggregated);
  return section;
}

std::vector<int> DefaultConcurrency() { return {1, 2, 4, 8, 16, 32, 64}; }

std::vector<LoadPoint> LoadPoints(const Bounds& bounds) {
  std::vector<LoadPoint> out;
  if (!bounds.request_rate.empty()) {
    const int cap = bounds.concurrency.empty() ? 0 : bounds.concurrency.front();
    for (double r : bounds.request_rate) out.push_back({cap, r});
    return out;
  }
  for (int c : bounds.concurrency.empty() ? DefaultConcurrency() : bounds.concurrency)
    out.push_back({c, 0});
  return out;
}

std::vector<int> InstanceCounts(const Bounds& bounds, const spec::Spec& spec) {
  if (!bounds.instances.empty()) return bounds.instances;
  return Divisors(static_cast<int>(spec.cluster.hosts.size()),
                  static_cast<int>(spec.cluster.hosts.size()));
}

namespace {

// The chunk sizes a search tries: the bound's, else the engine's (the spec's,
// or SGLang's default for the GPU) with half and twice it.
std::vector<int64_t> ChunkSizes(const Bounds& bounds, const plan::EngineConfig& engine) {
  if (!bounds.chunked_prefill_size.empty()) return bounds.chunked_prefill_size;
  const int64_t chunk = engine.chunked_prefill_size;
  if (chunk <= 0) return {chunk};
  // Twice the chunk only where a spec may hold it (--emit-spec writes it).
  if (chunk * 2 > spec::kMaxTokens) return {chunk / 2, chunk};
  return {chunk / 2, chunk, chunk * 2};
}

// Calls `each(instances, pp, tp)` for every layout shape Enumerate lists.
template <typename F>
void ForEachShape(const Bounds& bounds, const spec::Spec& spec, const model::ModelDesc& model,
                  F each) {
  const int world = spec.cluster.world_size();
  for (int instances : InstanceCounts(bounds, spec)) {
    // Instances x PP x TP must use every GPU; whether the instances get whole
    // nodes is the planner's check, counted among the refusals.
    if (instances < 1 || world % instances != 0) continue;
    const int instance_gpus = world / instances;
    const std::vector<int> pps =
        bounds.pp.empty() ? Divisors(instance_gpus, std::max(model.num_layers, 1)) : bounds.pp;
    for (int pp : pps) {
      if (pp < 1 || instance_gpus % pp != 0) continue;
      each(instances, pp, instance_gpus / pp);
    }
  }
}

}  // namespace

SpaceEstimate EstimateSpace(const Bounds& bounds, const spec::Spec& spec,
                            const model::ModelDesc& model, const plan::EngineConfig& engine,
                            int threads, int interval_members) {
  const std::vector<int64_t> chunks = ChunkSizes(bounds, engine);
  const double knob_settings =
      static_cast<double>(std::max<size_t>(1, bounds.max_running_requests.size())) *
      static_cast<double>(std::max<size_t>(1, bounds.moe_a2a_backend.size()));
  const double load_points = static_cast<double>(LoadPoints(bounds).size());
  const spec::WorkloadSpec& w = spec.workload;
  const double input = static_cast<double>(std::max<int64_t>(1, w.input_tokens));
  // A request's decode costs its stretches' boundaries, not its tokens.
  const double decode = std::min(static_cast<double>(std::max<int64_t>(0, w.output_tokens - 1)),
                                 kDecodeUnitsPerRequest);
  double per_chunk_list = 0;  // sum over the chunk sizes of one request's steps
  for (int64_t c : chunks) per_chunk_list += std::ceil(input / (c > 0 ? c : input)) + decode;
  SpaceEstimate e;
  ForEachShape(bounds, spec, model, [&](int, int pp, int tp) {
    const double shapes = static_cast<double>(Within(bounds.ep, Divisors(tp, tp)).size()) *
                          static_cast<double>(Within(bounds.dp, Divisors(tp, tp)).size()) *
                          knob_settings;
    e.candidates += shapes * static_cast<double>(chunks.size());
    e.work_units +=
        shapes * load_points * std::max(1, w.requests + w.warmup_requests) * per_chunk_list * pp;
  });
  // A disaggregated candidate (the spec's engine, PP 1): each prompt once
  // on a prefill server, each answer's decode on a decode server.
  const double pd = static_cast<double>(EnumerateDisaggregated(bounds, spec, model).size());
  e.candidates += pd;
  e.work_units += pd * load_points * std::max(1, w.requests + w.warmup_requests) *
                  (std::ceil(input / static_cast<double>(engine.chunked_prefill_size > 0
                                                             ? engine.chunked_prefill_size
                                                             : input)) +
                   decode);
  e.predictions = e.candidates * load_points;
  e.interval_factor =
      1 + kIntervalShare * static_cast<double>(std::max(0, interval_members)) / load_points;
  e.seconds = (e.predictions * kSecondsPerPrediction + e.work_units * kSecondsPerWorkUnit) *
              e.interval_factor / std::max(1, threads);
  return e;
}

Status CheckSpaceEstimate(const SpaceEstimate& e, double max_seconds) {
  if (max_seconds <= 0 || e.seconds <= max_seconds) return Status::Ok();
  return MakeError(fmt::format(
      "the search would predict {} candidates at {} load points ({} predictions, x{} with the "
      "interval draws), an estimated {} of simulation, past --max-search-s {:g}; narrow it "
      "(--pp, --ep, --dp, --chunked-prefill-size, --max-running-requests, --concurrency, "
      "workload.requests, --samples 0 for no intervals) or raise --max-search-s (0: no bound)",
      FormatNumber(e.candidates, 0), FormatNumber(e.predictions / std::max(e.candidates, 1.0), 0),
      FormatNumber(e.predictions, 0), FormatNumber(e.interval_factor, 2),
      FormatNumber(e.seconds, 0) + " s", max_seconds));
}

std::vector<Candidate> Enumerate(const Bounds& bounds, const spec::Spec& spec,
                                 const model::ModelDesc& model, const plan::EngineConfig& engine) {
  const std::vector<int64_t> chunks = ChunkSizes(bounds, engine);
  const std::vector<int> mrrs =
      bounds.max_running_requests.empty() ? std::vector<int>{0} : bounds.max_running_requests;
  // The spec's backend is written as the empty "keep" so a default search's
  // candidates and labels are the spec's own.
  const std::vector<std::string> backends =
      bounds.moe_a2a_backend.empty() ? std::vector<std::string>{""} : bounds.moe_a2a_backend;
  std::vector<Candidate> out;
  ForEachShape(bounds, spec, model, [&](int instances, int pp, int tp) {
    for (int ep : Within(bounds.ep, Divisors(tp, tp)))
      for (int dp : Within(bounds.dp, Divisors(tp, tp)))
        for (int64_t c : chunks)
          for (int mrr : mrrs)
            for (const std::string& backend : backends) {
              Candidate cand;
              cand.layout.pp = pp;
              cand.layout.tp = tp;
              cand.layout.ep = ep;
              cand.layout.dp = dp;
              cand.layout.instances = instances;
              cand.layout.origin.file = "search";
              cand.knobs.chunked_prefill_size = c;
              cand.knobs.max_running_requests = mrr;
              cand.knobs.moe_a2a_backend = backend;
              out.push_back(cand);
            }
  });
  return out;
}

bool WantsDisaggregated(const Bounds& bounds, const spec::Spec& spec) {
  if (bounds.disaggregated == "off") return false;
  if (spec.cluster.hosts.size() < 2) return false;
  return bounds.disaggregated == "on" || spec.workload.output_tokens > 1;
}

std::vector<Candidate> EnumerateDisaggregated(const Bounds& bounds, const spec::Spec& spec,
                                              const model::ModelDesc& model) {
  std::vector<Candidate> out;
  if (!WantsDisaggregated(bounds, spec)) return out;
  const int hosts = static_cast<int>(spec.cluster.hosts.size());
  const int per_node = spec.cluster.gpus_per_node;
  auto server = [&](int pool_nodes, int server_nodes, int dp) {
    spec::LayoutSpec l;
    l.tp = server_nodes * per_node;
    l.ep = model.is_moe() ? l.tp : 1;
    l.dp = dp;
    l.instances = pool_nodes / server_nodes;
    l.origin.file = "search";
    return l;
  };
  for (int p = 1; p < hosts; ++p) {
    const int d = hosts - p;
    for (int ps : Divisors(p, p))
      for (int ds : Divisors(d, d)) {
        const int tp = ds * per_node;
        for (int dp : Within(bounds.dp, tp > 1 ? std::vector<int>{1, tp} : std::vector<int>{1})) {
          Candidate c;
          c.pd = PdPools{server(p, ps, 1), server(d, ds, dp), p, d};
          out.push_back(c);
        }
      }
  }
  return out;
}

}  // namespace ppsearch::search
