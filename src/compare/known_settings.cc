#include "compare/known_settings.h"

#include "compare/description.h"

namespace ppsearch::compare {
namespace {

struct Entry {
  const char* name;
  Severity severity;
  const char* kind;
  const char* reason;
};

constexpr Severity kH = Severity::kHarmful;
constexpr Severity kR = Severity::kRelevant;
constexpr Severity kC = Severity::kCosmetic;

// SGLang server flags (engine.args), without dashes; the reasons follow
// what SGLang's server arguments and scheduler do with them.
constexpr Entry kServerFlags[] = {
    {"pp-max-micro-batch-size", kH, "server flag",
     "caps the requests a pipeline micro-batch admits (unset, SGLang uses "
     "max(max_running_requests // pp_size, 1)); 1 serializes admission at C=8/16 and exposes "
     "pipeline bubbles"},
    {"moe-runner-backend", kH, "MoE backend",
     "selects the MoE expert GEMM kernels (e.g. Marlin instead of FlashInfer MXFP4): every "
     "forward's MoE time changes"},
    {"moe-a2a-backend", kH, "MoE backend",
     "selects how tokens reach their experts (all-to-all dispatch or none): MoE communication "
     "and its buffers change"},
    {"chunked-prefill-size", kH, "chunked prefill",
     "sets the prefill chunk: the forwards per prompt, the micro-batches a pipeline can fill and "
     "the GEMM sizes all change"},
    {"max-running-requests", kH, "server flag",
     "caps the requests in flight (and the default pp-max-micro-batch-size); below the "
     "concurrency, requests queue"},
    {"max-prefill-tokens", kH, "server flag",
     "caps the tokens of one prefill batch: how many prompts share a forward"},
    {"max-total-tokens", kH, "server flag",
     "sizes the KV pool directly: a smaller pool caps admission"},
    {"mem-fraction-static", kR, "server flag",
     "sizes the KV pool; it changes results only where the pool limits admission (compare "
     "max_total_num_tokens in the logs)"},
    {"quantization", kH, "model", "another weight format: other GEMM kernels and weight bytes"},
    {"kv-cache-dtype", kH, "server flag",
     "changes KV bytes per token, the attention kernels and the pool size"},
    {"attention-backend", kH, "server flag", "selects the attention kernels"},
    {"prefill-attention-backend", kH, "server flag", "selects the prefill attention kernels"},
    {"decode-attention-backend", kH, "server flag", "selects the decode attention kernels"},
    {"disable-cuda-graph", kH, "server flag",
     "small batches run without CUDA graphs: kernel launch overhead returns"},
    {"disable-radix-cache", kH, "server flag",
     "prefix caching: with it, repeated prompt prefixes skip prefill"},
    {"enable-dp-attention", kH, "server flag",
     "data-parallel attention: another attention layout and communication"},
    {"dp-size", kH, "server flag", "data-parallel replicas split the load"},
    {"enable-dp-lm-head", kR, "server flag",
     "with DP attention, the LM head is split over the attention group instead of TP: more "
     "weights per rank, no logits gather across the DP groups"},
    {"enable-two-batch-overlap", kH, "server flag",
     "overlaps one micro-batch's communication with another's compute"},
    {"enable-mixed-chunk", kH, "server flag", "mixes decode tokens into prefill chunks"},
    {"disable-overlap-schedule", kH, "server flag",
     "the CPU scheduler no longer overlaps the GPU's work"},
    {"enable-torch-compile", kH, "server flag", "compiled kernels instead of eager ones"},
    {"speculative-algorithm", kH, "server flag", "speculative decoding changes decode work"},
    {"deepep-mode", kH, "MoE backend", "DeepEP's normal or low-latency all-to-all kernels"},
    {"enable-eplb", kH, "MoE backend", "expert load balancing moves experts between ranks"},
    {"ep-num-redundant-experts", kH, "MoE backend", "redundant experts change per-rank MoE work"},
    {"init-expert-location", kH, "MoE backend", "another expert placement across ranks"},
    {"moe-dense-tp-size", kH, "MoE backend", "another TP size for the dense MLP layers"},
    {"schedule-policy", kR, "server flag", "which waiting requests are admitted first"},
    {"cuda-graph-max-bs", kR, "server flag", "batch sizes above it run without CUDA graphs"},
    {"random-seed", kR, "server flag", "sampling seed; lengths are fixed by the workload"},
    {"stream-interval", kR, "server flag", "how often streamed tokens are flushed"},
    {"log-level", kC, "server flag", "logging only"},
    {"log-requests", kC, "server flag", "logging only"},
    {"log-requests-level", kC, "server flag", "logging only"},
    {"decode-log-interval", kC, "server flag", "logging only"},
    {"enable-metrics", kC, "server flag", "a metrics endpoint"},
    {"enable-cache-report", kC, "server flag", "reporting only"},
    {"show-time-cost", kC, "server flag", "reporting only"},
    {"served-model-name", kC, "server flag", "the name the API answers with"},
    {"api-key", kC, "server flag", "access control"},
    {"watchdog-timeout", kC, "server flag", "when a stuck server is killed"},
    {"trust-remote-code", kC, "server flag", "whether model code may be loaded"},
    {"download-dir", kC, "server flag", "where weights are cached"},
    {"skip-server-warmup", kR, "server flag", "the first requests may meet a cold server"},
};

constexpr Entry kEnvVars[] = {
    {"NCCL_ALGO", kH, "environment", "forces NCCL's collective algorithm"},
    {"NCCL_PROTO", kH, "environment", "forces NCCL's protocol (LL, LL128, Simple)"},
    {"NCCL_P2P_DISABLE", kH, "environment", "GPU peer-to-peer transfers off: slower NCCL paths"},
    {"NCCL_P2P_LEVEL", kH, "environment", "which GPU pairs use peer-to-peer transfers"},
    {"NCCL_SHM_DISABLE", kH, "environment", "shared-memory transport off"},
    {"NCCL_IB_DISABLE", kH, "environment", "InfiniBand/RoCE off: cross-node traffic over sockets"},
    {"NCCL_NET_GDR_LEVEL", kH, "environment", "when the NIC reads GPU memory directly"},
    {"NCCL_MIN_NCHANNELS", kH, "environment", "NCCL channel count: collective bandwidth"},
    {"NCCL_MAX_NCHANNELS", kH, "environment", "NCCL channel count: collective bandwidth"},
    {"NCCL_BUFFSIZE", kH, "environment", "NCCL buffer size: pipelining of transfers"},
    {"SGLANG_PP_LAYER_PARTITION", kH, "environment",
     "another split of the layers over the pipeline stages: each stage's time and memory"},
    {"CUDA_LAUNCH_BLOCKING", kH, "environment", "serializes every kernel launch"},
    {"CUDA_DEVICE_MAX_CONNECTIONS", kH, "environment",
     "limits concurrent streams: compute/communication overlap changes"},
    {"NCCL_DEBUG", kC, "environment", "logging only"},
    {"NCCL_DEBUG_SUBSYS", kC, "environment", "logging only"},
    {"NCCL_DEBUG_FILE", kC, "environment", "logging only"},
    {"PYTHONUNBUFFERED", kC, "environment", "log buffering only"},
    {"HF_TOKEN", kC, "environment", "access to the model hub"},
    {"HF_HOME", kC, "environment", "where the model hub caches files"},
    {"TZ", kC, "environment", "time stamps only"},
};

// Every other recorded setting (description.cc writes these keys).
constexpr Entry kSettings[] = {
    {"engine.kind", kR, "engine kind",
     "one side is simulated: its differences are prediction errors, not a change of setup"},
    {"engine.image", kH, "engine image and version",
     "another image can hold another SGLang, kernels, CUDA and NCCL"},
    {"engine.container", kC, "engine image and version", "the container runtime only"},
    {"engine.version", kH, "engine image and version",
     "another SGLang release: scheduler and kernels change between releases"},
    {"server.version", kH, "engine image and version",
     "the servers reported another SGLang version"},
    {"engine.command", kR, "engine image and version", "another server program or wrapper"},
    {"engine.model_path", kR, "model",
     "the same weights may sit at another path; model.config and quantization tell"},
    {"model.config", kH, "model", "another config.json: another model or another shape"},
    {"model.quantization", kH, "model", "another weight format: other kernels and weight bytes"},
    {"workload.input_tokens", kH, "workload", "another prefill length per request"},
    {"workload.output_tokens", kH, "workload", "another decode length per request"},
    {"workload.input_distribution", kH, "workload", "another mix of prompt lengths"},
    {"workload.range_ratio", kH, "workload", "another range of prompt lengths"},
    {"workload.requests", kH, "workload",
     "closed-loop TTFT grows with the waves a sample runs (requests / concurrency)"},
    {"workload.request_rate", kH, "workload", "another arrival process (open or closed loop)"},
    {"workload.warmup_requests", kR, "workload", "caches and graphs start warm or cold"},
    {"workload.unique_prompts", kH, "workload", "shared prompts let the prefix cache skip prefill"},
    {"workload.seed", kC, "workload", "which random token ids the prompts hold"},
    {"sweep.repeats", kR, "repeats", "medians over another number of repeats: other noise"},
    {"cluster.hosts", kR, "hosts", "other machines: check their GPUs, driver and links"},
    {"cluster.gpus", kH, "GPUs", "another number of GPUs"},
    {"cluster.gpus_per_node", kH, "GPUs", "which TP and EP groups cross node boundaries"},
    {"cluster.hardware", kR, "hardware profile", "the profile planning (and a simulation) assumes"},
    {"cluster.launcher", kC, "hosts", "how the servers were started (local, ssh, slurm)"},
    {"gpu.name", kH, "GPUs", "another GPU kind"},
    {"gpu.driver", kR, "driver", "another driver and CUDA runtime: NCCL and kernels may differ"},
    {"lifecycle.reuse_server", kR, "lifecycle",
     "a reused server keeps warm caches and graphs between samples"},
    {"lifecycle.flush_cache", kR, "lifecycle", "prefix caches flushed or kept between samples"},
    {"layout.ep", kH, "EP size",
     "another expert-parallel size: which GPUs hold which experts, the MoE communication of "
     "every layer and the per-GPU expert memory (so the KV pool) all change"},
    {"experiment.name", kC, "other", "a name only"},
    {"sim.noise_cv", kR, "simulation", "the simulated repeat noise"},
    {"sim.seed", kC, "simulation", "which noise draws the repeats get"},
    {"sim.calibration", kR, "simulation", "another calibration of the cost model"},
};

template <size_t N>
const Entry* Find(const Entry (&table)[N], const std::string& name) {
  for (const Entry& e : table)
    if (name == e.name) return &e;
  return nullptr;
}

bool HasPrefix(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

SettingClass FromEntry(const Entry& e, const std::string& label) {
  return {e.severity, e.kind, label, e.reason};
}

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kHarmful:
      return "harmful";
    case Severity::kRelevant:
      return "relevant";
    case Severity::kCosmetic:
      return "cosmetic";
  }
  return "relevant";
}

SettingClass ClassifySetting(const std::string& key) {
  if (HasPrefix(key, kArgPrefix)) {
    const std::string flag = key.substr(std::string(kArgPrefix).size());
    if (const Entry* e = Find(kServerFlags, flag)) return FromEntry(*e, flag);
    return {Severity::kRelevant, "server flag", flag,
            "a server flag without a known effect here; check whether it changes the result"};
  }
  if (HasPrefix(key, kEnvPrefix)) {
    const std::string name = key.substr(std::string(kEnvPrefix).size());
    // "SGLANG_PP_LAYER_PARTITION (PP8)": one pipeline size's value of it.
    if (const Entry* e = Find(kEnvVars, name.substr(0, name.find(" (PP"))))
      return FromEntry(*e, name);
    return {Severity::kRelevant, "environment", name,
            "an environment variable without a known effect here; check it"};
  }
  if (HasPrefix(key, kPatchPrefix))
    return {Severity::kHarmful, "patches", key.substr(std::string(kPatchPrefix).size()),
            "a patched or extra file is another engine (e.g. a runtime PP patch)"};
  if (const Entry* e = Find(kSettings, key)) return FromEntry(*e, key);
  return {Severity::kRelevant, "other", key, "a recorded setting without a known effect here"};
}

}  // namespace ppsearch::compare
