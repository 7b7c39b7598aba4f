// Settings that do not stop a run but make its numbers misleading: flags
// known to hurt PP, workloads that are not controlled, caches that let some
// requests skip prefill, engine versions with PP bugs. Sources: SGLang
// v0.5.18 python/sglang/srt/managers/scheduler.py (pp_max_micro_batch_size,
// get_num_allocatable_reqs), python/sglang/benchmark/serving.py
// (bench_serving), and SGLang release notes / PRs (#23006, #33666).

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "plan/disaggregation.h"
#include "plan/plan_internal.h"

namespace ppsearch::plan {
namespace {

Diagnostic At(SourceLoc loc, const std::string& key, const std::string& what) {
  if (!key.empty()) loc.key = key;
  const std::string where = loc.Where();
  return {(where.empty() ? "" : where + ": ") + what, loc, ""};
}

std::string JoinInts(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

std::string ShortDouble(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

void WarnMicroBatchSize(const EngineConfig& engine, std::vector<Diagnostic>& out) {
  // Only where the spec set it: the warning points there.
  if (!engine.pp_max_micro_batch_size_origin || engine.pp_max_micro_batch_size != 1) return;
  out.push_back(At(*engine.pp_max_micro_batch_size_origin, "",
                   "pp-max-micro-batch-size = 1 lets the scheduler admit only one new request "
                   "per micro-batch, which serializes a concurrent load and exposes pipeline "
                   "bubbles; SGLang's default is max(max_running_requests // pp_size, 1). "
                   "Remove it to keep the default"));
}

void WarnPartialWaves(const spec::Spec& spec, std::vector<Diagnostic>& out) {
  const int requests = spec.workload.requests;
  if (requests <= 0) return;
  std::vector<int> misfits;
  int64_t lcm = 1;
  for (int c : spec.sweep.concurrency) {
    if (c <= 0) continue;
    lcm = std::lcm(lcm, static_cast<int64_t>(c));
    if (requests % c != 0) misfits.push_back(c);
  }
  if (misfits.empty()) return;
  const int64_t suggestion = (requests + lcm - 1) / lcm * lcm;
  out.push_back(
      At(spec.workload.origin, "workload.requests",
         std::to_string(requests) +
             " requests per sample is not a multiple of "
             "concurrency " +
             JoinInts(misfits) +
             ": the last wave of each sample has fewer requests in flight, so its "
             "throughput mixes two load levels. Use a multiple of every concurrency (e.g. " +
             std::to_string(suggestion) + ")"));
}

void WarnVariableLengths(const spec::WorkloadSpec& workload, std::vector<Diagnostic>& out) {
  if (workload.input_distribution == "fixed" && workload.range_ratio == 1.0) return;
  const std::string key = workload.input_distribution != "fixed" ? "workload.input_distribution"
                                                                 : "workload.range_ratio";
  out.push_back(At(workload.origin, key,
                   "prompt lengths are not fixed (input_distribution = \"" +
                       workload.input_distribution +
                       "\", range_ratio = " + ShortDouble(workload.range_ratio) +
                       "), so TTFT and input TPS depend on the lengths drawn and layouts are "
                       "harder to compare. Use input_distribution = \"fixed\" and range_ratio = "
                       "1 (bench_serving: --random-range-ratio 1)"));
}

void WarnPrefixCache(const spec::Spec& spec, const EngineConfig& engine,
                     std::vector<Diagnostic>& out) {
  if (engine.disable_radix_cache) return;
  const spec::WorkloadSpec& workload = spec.workload;
  if (!workload.unique_prompts) {
    out.push_back(At(workload.origin, "workload.unique_prompts",
                     "prompts repeat (unique_prompts = false) while SGLang's radix (prefix) "
                     "cache is on: repeated prompts hit the cache and skip most of their "
                     "prefill, inflating input TPS. Set disable-radix-cache = true in the "
                     "engine args"));
  }
  if (workload.warmup_requests > 0) {
    out.push_back(At(workload.origin, "workload.warmup_requests",
                     "warmup_requests = " + std::to_string(workload.warmup_requests) +
                         " while SGLang's radix (prefix) cache is on: the warmup reuses "
                         "request 0's prompt (as sglang.bench_serving does), so request 0 hits "
                         "the cache and its TTFT is too short. Set disable-radix-cache = true "
                         "in the engine args"));
  }
}

// In an open loop the offered rate sets the throughput of every layout that
// keeps up with it: ranking by a throughput then ranks what the Poisson
// arrivals and the last request's end leave (the repeat-spread rule judges
// TTFT p50 there, analysis/repeat_spread.h).
void WarnOpenLoopThroughput(const spec::Spec& spec, std::vector<Diagnostic>& out) {
  const double rate = spec.workload.request_rate;
  const decide::Objective& objective = spec.decision.objective;
  if (!(rate > 0) || !objective.token_throughput()) return;
  out.push_back(At(spec.workload.origin, "workload.request_rate",
                   "request_rate = " + ShortDouble(rate) +
                       " is an open loop: every layout that keeps up serves the offered rate, "
                       "so objective " +
                       objective.name() +
                       " ranks arrival noise; rank by "
                       "ttft_p50, or by goodput with SLA limits, to compare how each layout "
                       "serves that traffic"));
}

}  // namespace

std::vector<Diagnostic> SpecWarnings(const spec::Spec& spec, const EngineConfig& engine) {
  std::vector<Diagnostic> out;
  WarnMicroBatchSize(engine, out);
  WarnPartialWaves(spec, out);
  WarnVariableLengths(spec.workload, out);
  WarnPrefixCache(spec, engine, out);
  WarnOpenLoopThroughput(spec, out);
  return out;
}

std::vector<Diagnostic> LayoutWarnings(const spec::LayoutSpec& layout, const spec::Spec& spec,
                                       const model::ModelDesc& model,
                                       const hardware::HardwareProfile& hw,
                                       const LayoutPlan& planned) {
  std::vector<Diagnostic> out;
  const std::string label = layout.Label();
  const int version = planned.engine.version_code;
  if (layout.pp > 1 && version >= 508 && version <= 510) {
    out.push_back(At(layout.origin, "",
                     label + " runs pipeline parallelism on SGLang " + spec.engine.version +
                         ", whose inverted admission check can hang PP with chunked prefill "
                         "(fixed in 0.5.11 by PR #23006); use 0.5.11 or later"));
  }
  if (layout.pp > 1 && version >= 0 && version < 517 && model.kda.num_heads > 0) {
    out.push_back(At(layout.origin, "",
                     label + " runs pipeline parallelism on SGLang " + spec.engine.version +
                         ", which sizes the linear-attention state pool for the whole model on "
                         "every stage (fixed in 0.5.17 by PR #33666); max_running_requests and "
                         "pp_max_micro_batch_size come out far too small"));
  }
  // The state pool's size under PP changed in 0.5.17; without a version the
  // plan follows 0.5.18, and says so where the answer depends on it.
  const bool keeps_state =
      std::any_of(planned.stages.begin(), planned.stages.end(),
                  [](const StagePlan& st) { return st.state_bytes_per_request_per_rank > 0; });
  if (layout.pp > 1 && version < 0 && keeps_state) {
    out.push_back(At(layout.origin, "",
                     label + " sizes its linear-attention state pool as SGLang 0.5.17 and later "
                             "do (every rank pays for the largest stage's state layers); before, "
                             "every stage paid for the whole model's (PR #33666), leaving most "
                             "of that memory unused and running far fewer requests. Set "
                             "engine.version to the image's SGLang version"));
  }
  if (layout.dp > 1 && layout.pp > 1) {
    out.push_back(At(layout.origin, "",
                     label + " combines pipeline parallelism with DP attention: SGLang accepts "
                             "the flags, but a server launched with --pp-size 2 "
                             "--enable-dp-attention --dp-size 4 crashes on its warm-up request "
                             "(sgl-project/sglang issue #9805, open)"));
  }
  // A decode server of a disaggregated deployment prefills nothing: the
  // KV cache comes from the prefill servers.
  if (layout.dp > 1 && layout.tp % layout.dp == 0 &&
      ResolvePdSettings(spec.engine).mode != "decode") {
    const int64_t chunk = planned.engine.chunked_prefill_size;
    if (chunk > 0)
      out.push_back(At(layout.origin, "",
                       label + fmt::format(" runs DP attention: SGLang divides "
                                           "chunked-prefill-size by dp, so each of the {} DP "
                                           "ranks prefills chunks of {} tokens, not {}",
                                           layout.dp, chunk / layout.dp, chunk)));
  }
  const int kv = model.gqa.num_kv_heads;
  if (kv > 0 && kv < layout.tp && layout.tp % kv == 0) {
    out.push_back(At(layout.origin, "",
                     label + " replicates each of the " + std::to_string(kv) + " GQA KV heads on " +
                         std::to_string(layout.tp / kv) +
                         " TP ranks; the KV cache per token does not shrink beyond TP " +
                         std::to_string(kv)));
  }
  // SGLang sizes the pools from mem_fraction_static, not from this model's
  // activations: a pool that fits can still leave a chunk too little.
  const memory::MemoryPlan& m = planned.memory;
  if (m.fits && !m.stages.empty() && m.stages[m.tightest_stage].headroom_mib < 0) {
    const memory::StageMemory& t = m.stages[m.tightest_stage];
    out.push_back(At(
        layout.origin, "",
        label + fmt::format(" is predicted to peak at {} MiB on stage {}, above the GPU's {} MiB: "
                            "the pools that mem_fraction_static {:g} sizes leave too little room "
                            "for its activations ({} MiB, {}) and CUDA graphs ({} MiB); SGLang "
                            "may run out of memory on a full chunk. Lower mem-fraction-static or "
                            "chunked-prefill-size",
                            FormatMib(t.peak_mib), m.tightest_stage, FormatMib(hw.memory_mib),
                            m.mem_fraction_static, FormatMib(t.activation_mib), t.activation_peak,
                            FormatMib(t.graph_mib))));
  }
  return out;
}

}  // namespace ppsearch::plan
