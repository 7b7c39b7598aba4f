#pragma once
// The space `ppsearch search` explores: every layout SGLang could run on the
// cluster (instances x PP x TP using every GPU, EP dividing TP, DP attention) crossed
// with the engine knobs that change what a layout does (chunked-prefill-size,
// max-running-requests) and the load points. Pure: bounds in, candidates out.

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "model/model.h"
#include "plan/engine_config.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::search {

// What a candidate sets beyond its layout; 0 keeps the spec's value (or
// SGLang's default when the spec has none).
using Knobs = plan::EngineKnobs;

// Where a candidate is predicted: `concurrency` requests in a closed loop,
// or an open Poisson loop of `request_rate` requests/s with at most
// `concurrency` in flight (0: no cap), as `workload.request_rate` and the
// sweep's concurrency set it for a run.
struct LoadPoint {
  int concurrency = 0;
  double request_rate = 0;
  bool open() const { return request_rate > 0; }
  // "C=8"; "2 req/s"; "2 req/s, C<=64" (for tables and sentences).
  std::string Label() const;
  // The request rate as the labels write it: "2.00", "12.5", "0.001" (a
  // rate below 0.005 to its first significant digit, not "0.00").
  std::string RateText() const;
  bool operator==(const LoadPoint& o) const {
    return concurrency == o.concurrency && request_rate == o.request_rate;
  }
};

// A disaggregated candidate's pools (SGLang's prefill-decode
// disaggregation): `prefill.instances` prefill servers on the first
// `prefill_nodes` hosts, `decode.instances` decode servers on the others.
struct PdPools {
  spec::LayoutSpec prefill;
  spec::LayoutSpec decode;
  int prefill_nodes = 0;
  int decode_nodes = 0;
  // "1P3D": prefill servers, decode servers.
  std::string Ratio() const;
};

struct Candidate {
  spec::LayoutSpec layout;  // aggregated; a disaggregated candidate's is unused
  Knobs knobs;
  std::optional<PdPools> pd;  // set: a disaggregated deployment
  // Set: the layout runs with this layer split (SGLANG_PP_LAYER_PARTITION,
  // one count per stage) as [engine.pp_layer_partition]'s entry for its
  // pipeline size; empty: the spec's split (SGLang's even one without).
  std::vector<int> layer_split;
  // "PP8/TP4/EP4 chunk 8192"; "PP8/TP4/EP4 chunk 8192 split 12,12,12,12,12,11,11,11";
  // "1P3D PP1/TP8/EP8 + 3xPP1/TP8/EP8/DP8".
  std::string Label() const;
  int64_t gpus() const;
};

// Bounds on each dimension; an empty list takes the default.
struct Bounds {
  // default: every count that splits the hosts into equal whole-node instances
  std::vector<int> instances;
  std::vector<int> pp;  // default: every divisor of the GPU count up to the layer count
  std::vector<int> ep;  // default: every divisor of TP
  std::vector<int> dp;  // default: every divisor of TP (SGLang's tp % dp rule)
  // default: the spec's value (8192 without one) with half and twice it
  std::vector<int64_t> chunked_prefill_size;
  std::vector<int> max_running_requests;  // default: {0} (the spec's, or SGLang's default)
  // default: the spec's backend alone (an all-to-all backend is the
  // deployment's choice: it needs its library and, for DeepEP, EP = TP)
  std::vector<std::string> moe_a2a_backend;
  std::vector<int> concurrency;  // default: 1, 2, 4, ..., 64
  // Disaggregated candidates (EnumerateDisaggregated): "on", "off", or ""
  // (default): on for a decode workload (more than one output token) on
  // two hosts or more.
  std::string disaggregated;
  // Open-loop load points, requests/s; with them `concurrency` holds at most
  // one value, the cap on requests in flight (none: no cap).
  std::vector<double> request_rate;
};

// Bounds that cannot describe a space (a size below 1, a list of more than
// spec::kMaxSearchValues values, a rate that is not a positive number,
// several concurrencies with request rates), naming the flag.
Status CheckBounds(const Bounds& bounds);

// The bounds a spec's [search] section sets (empty lists where it sets none).
Bounds SpecBounds(const spec::SearchSpec& section);

// `flags` over `section`, one dimension at a time: a list given on the
// command line replaces that dimension's list; the others keep the section's.
Bounds WithFlags(Bounds section, const Bounds& flags);

// The default load points of a search.
std::vector<int> DefaultConcurrency();

// Every candidate within `bounds`, in instances, PP, EP, DP, chunk, mrr,
// backend order. TP is an instance's GPU count over PP: a layout leaving GPUs idle
// is not a candidate; EP and DP sizes that do not divide TP are not
// candidates either (SGLang refuses them before any check of the planner's).
// Without a chunk bound, the chunks are the engine's (the spec's, else
// SGLang's default for the GPU), half and twice it.
std::vector<Candidate> Enumerate(const Bounds& bounds, const spec::Spec& spec,
                                 const model::ModelDesc& model, const plan::EngineConfig& engine);

// Whether `bounds` and the spec ask for disaggregated candidates.
bool WantsDisaggregated(const Bounds& bounds, const spec::Spec& spec);

// Every disaggregated deployment of the cluster's whole nodes: x nodes of
// prefill servers and the rest of decode servers, for every x, each
// server one or more whole nodes (PP 1, TP its GPUs, EP = TP for a MoE
// model, as SGLang's PD recipes run them), the decode servers with and
// without DP attention (dp = TP, or within `bounds.dp`), the prefill
// servers without. Empty unless WantsDisaggregated.
std::vector<Candidate> EnumerateDisaggregated(const Bounds& bounds, const spec::Spec& spec,
                                              const model::ModelDesc& model);

// The instance counts of a search within `bounds`: by default every count
// that splits the cluster's hosts into equal runs of whole nodes.
std::vector<int> InstanceCounts(const Bounds& bounds, const spec::Spec& spec);

// The load points of a search within `bounds`: its request rates when it
// has any, else its concurrencies.
std::vector<LoadPoint> LoadPoints(const Bounds& bounds);

// What a search would cost, counted before anything is enumerated or
// predicted (the lists' product can be billions of candidates):
// candidates as Enumerate would list them, predictions (candidates x load
// points), and the simulator's work, one unit per scheduled chunk per
// request per pipeline stage, and for decode what the simulator plays one
// by one: a decode stretch (sim/decode_stretch.cc) jumps its lone slot's
// cycles and its pipeline's rounds in closed form, and each request's
// admission and last token break the stretches, so a request's decode
// costs about kDecodeUnitsPerRequest units however long its answer:
//   requests x (ceil(input_tokens / chunk)
//               + min(output_tokens - 1, kDecodeUnitsPerRequest)) x pp
// summed over the predictions; a chunk of -1 (no chunking) is the prompt.
//
// The intervals re-simulate each kept candidate's best load point once per
// draw, its prompts in as many chunks as a central prediction's: with a
// tiny chunk a draw costs as much as a central point, and the candidates
// the screen keeps draw `interval_members` each, about half the central
// work again. They count as kIntervalShare of the central work per load
// point per draw:
//   interval_factor = 1 + kIntervalShare x interval_members / load points
struct SpaceEstimate {
  double candidates = 0;
  double predictions = 0;  // central: candidates x load points
  double work_units = 0;   // of the central predictions
  double interval_factor = 1;
  // (predictions x kSecondsPerPrediction + work_units x kSecondsPerWorkUnit)
  // x interval_factor / threads
  double seconds = 0;
};
// CPU seconds of one prediction as enumerated (planning it, most refused by
// the planner's checks, pricing the rest) and of one work unit, fitted to
// `ppsearch search` of the example with --samples 0 (release build, 2-core
// machine): the default space, 3,696 predictions in 0.18 s; five
// max-running-requests values, 12,320 in 0.60 s; chunk sizes 1, 2 and 4,
// 4.05e9 work units in 107 s (docs/search.md).
inline constexpr double kSecondsPerPrediction = 5e-5;
inline constexpr double kSecondsPerWorkUnit = 2.6e-8;
// The intervals' share of the central work per load point per draw, fitted
// to the same search of chunk sizes 1, 2 and 4 with 32 draws: 15 of its 99
// predicted candidates kept by the screen added 49 s to its 107 s.
inline constexpr double kIntervalShare = 0.1;
// Decode units per request, fitted to `ppsearch search` of the chat example
// (examples/deepseek-v3-chat-search.toml, --samples 0: 3,696 predictions of
// 512 requests, 2,000 tokens in and 1,000 out) at 1.4 s of CPU on the 2-core
// machine with pipelines' rounds jumped (docs/search.md).
inline constexpr double kDecodeUnitsPerRequest = 13;
// The most estimated seconds a search starts without --max-search-s.
inline constexpr double kDefaultMaxSearchSeconds = 300;
// `interval_members`: the draws behind each interval (0: central values only).
SpaceEstimate EstimateSpace(const Bounds& bounds, const spec::Spec& spec,
                            const model::ModelDesc& model, const plan::EngineConfig& engine,
                            int threads, int interval_members);

// Refuses a search whose estimate passes `max_seconds` (0: no bound),
// naming its size and the flags that narrow it or lift the bound.
Status CheckSpaceEstimate(const SpaceEstimate& estimate, double max_seconds);

}  // namespace ppsearch::search
