#include "serve_sim/server_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "spec/secrets.h"

namespace ppsearch::serve_sim {
namespace {

constexpr double kMaxTimeScale = 1e6;

template <typename T>
std::string PyOptional(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string("None");
}

std::string PyString(const std::string& s) { return s.empty() ? "None" : "'" + s + "'"; }

template <typename T>
nlohmann::json JsonOptional(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json JsonString(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

}  // namespace

Status ValidateServerArgs(const ServerArgs& a) {
  if (a.ModelSource().empty()) return MakeError("--model-path (or --model-config) is required");
  if (a.tp_size < 1 || a.pp_size < 1 || a.ep_size < 1)
    return MakeError("--tp-size, --pp-size and --ep-size must be at least 1");
  if (a.nnodes < 1) return MakeError("--nnodes must be at least 1");
  if (a.node_rank < 0 || a.node_rank >= a.nnodes)
    return MakeError(fmt::format("--node-rank {} is outside 0..{} (--nnodes {})", a.node_rank,
                                 a.nnodes - 1, a.nnodes));
  // server_args.py check_server_args.
  if ((a.tp_size * a.pp_size) % a.nnodes != 0)
    return MakeError(
        fmt::format("tp_size must be divisible by number of nodes: --tp-size {} x --pp-size {} "
                    "is not a multiple of --nnodes {}",
                    a.tp_size, a.pp_size, a.nnodes));
  if (a.nnodes > 1 && a.dist_init_addr.empty())
    return MakeError("--dist-init-addr host:port is required when --nnodes > 1");
  if (!a.dist_init_addr.empty()) PPS_RETURN_IF_ERROR(SplitHostPort(a.dist_init_addr));
  if (a.port < 0 || a.port > 65535)
    return MakeError(fmt::format("--port {} is not a TCP port", a.port));
  // Past a million simulated seconds per wall second a step's wait rounds
  // to nothing and infinity never answers: no rehearsal asks for that.
  if (!(a.time_scale > 0 && a.time_scale <= kMaxTimeScale))
    return MakeError(fmt::format(
        "--time-scale must be a positive number of simulated seconds per wall second, at most "
        "{:g} (got {})",
        kMaxTimeScale, a.time_scale));
  // Served as plain TP, DP attention would be timed as another layout.
  for (const ExtraFlag& f : a.extra_flags)
    if (f.name == "enable-dp-attention")
      return MakeError(
          "--enable-dp-attention: serve-sim does not serve DP attention (its per-rank "
          "schedulers, logs and routes); predict the layout with `ppsearch simulate`, or "
          "rehearse it without the flag");
  if (a.disaggregation_mode != "null" && a.disaggregation_mode != "prefill" &&
      a.disaggregation_mode != "decode")
    return MakeError("--disaggregation-mode must be one of null, prefill, decode (got '" +
                     a.disaggregation_mode + "')");
  if (a.disaggregation_transfer_backend != "mooncake" &&
      a.disaggregation_transfer_backend != "nixl")
    return MakeError("--disaggregation-transfer-backend: serve-sim plays mooncake and nixl (got '" +
                     a.disaggregation_transfer_backend + "')");
  if (a.disaggregation_bootstrap_port < 1 || a.disaggregation_bootstrap_port > 65535)
    return MakeError(fmt::format("--disaggregation-bootstrap-port {} is not a TCP port",
                                 a.disaggregation_bootstrap_port));
  if (a.disaggregation_mode == "prefill" && a.disaggregation_bootstrap_port == a.port)
    return MakeError(fmt::format(
        "--disaggregation-bootstrap-port {} is also --port: the bootstrap server needs its own",
        a.port));
  if (a.disaggregation_mode != "null" && a.nnodes > 1)
    return MakeError(
        "--disaggregation-mode with --nnodes > 1: serve-sim plays a PD server on one node");
  if (!(a.bootstrap_timeout_s > 0) || !(a.waiting_timeout_s > 0))
    return MakeError(
        "SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT and SGLANG_DISAGGREGATION_WAITING_TIMEOUT must "
        "be positive seconds");
  if (a.mem_fraction_static && !(*a.mem_fraction_static > 0 && *a.mem_fraction_static < 1))
    return MakeError(
        fmt::format("--mem-fraction-static must be in (0, 1) (got {})", *a.mem_fraction_static));
  if (a.max_running_requests && *a.max_running_requests < 1)
    return MakeError(
        fmt::format("--max-running-requests must be at least 1 (got {})", *a.max_running_requests));
  if (a.pp_max_micro_batch_size && *a.pp_max_micro_batch_size < 1)
    return MakeError(fmt::format("--pp-max-micro-batch-size must be at least 1 (got {})",
                                 *a.pp_max_micro_batch_size));
  if (a.chunked_prefill_size && *a.chunked_prefill_size == 0)
    return MakeError(
        "--chunked-prefill-size must be a number of tokens, or -1 to disable chunking (got 0)");
  if (a.fault.exit_after_requests < 0)
    return MakeError(
        fmt::format("--fault-exit-after must be 0 (never) or a number of requests "
                    "(got {})",
                    a.fault.exit_after_requests));
  if (!(a.fault.http500_fraction >= 0 && a.fault.http500_fraction <= 1))  // NaN fails too
    return MakeError(fmt::format("--fault-http500 must be a fraction in [0, 1] (got {})",
                                 a.fault.http500_fraction));
  if (!a.fault.log.empty() && a.fault.log != "oom" && a.fault.log != "nccl" &&
      a.fault.log != "traceback")
    return MakeError("--fault-log must be one of oom, nccl, traceback (got '" + a.fault.log + "')");
  if (!(a.fault.slow_start_s >= 0))
    return MakeError("--fault-slow-start-s must be a non-negative number of seconds");
  if (!(a.fault.die_after_s >= 0))
    return MakeError("--fault-die-after-s must be a non-negative number of seconds");
  if (a.fault.die_after_requests < 0)
    return MakeError("--fault-die-after-requests must be a non-negative number of requests");
  if (a.fault.kv_fail_after < 0)
    return MakeError("--fault-kv-fail-after must be a non-negative number of transfers");
  if (a.fault.kv_fail_after > 0 && a.disaggregation_mode != "prefill")
    return MakeError(
        "--fault-kv-fail-after needs --disaggregation-mode prefill (it fails a KV "
        "transfer, which prefill servers send)");
  if (!(a.fault.leak_gpu_s >= 0))
    return MakeError("--fault-leak-gpu-s must be a non-negative number of seconds");
  return Status::Ok();
}

Result<std::pair<std::string, int>> SplitHostPort(const std::string& addr) {
  const size_t colon = addr.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == addr.size())
    return MakeError("--dist-init-addr '" + addr + "' is not host:port");
  const std::string port_text = addr.substr(colon + 1);
  if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5)
    return MakeError("--dist-init-addr '" + addr + "' has no numeric port");
  const int port = std::stoi(port_text);
  if (port <= 0 || port > 65535)
    return MakeError("--dist-init-addr '" + addr + "': port out of range");
  return std::make_pair(addr.substr(0, colon), port);
}

namespace {

// The fields of ServerArgs(...) in SGLang's order, each as a Python repr and a JSON value.
struct Field {
  std::string key;
  std::string repr;
  nlohmann::json json;
};

bool LooksNumeric(const std::string& v) {
  if (v.empty()) return false;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  return end == v.c_str() + v.size() && v.find_first_of("0123456789") != std::string::npos;
}

// A secret flag's value (spec::IsSecretFlag: api-key) is shown as
// '<redacted>' in both forms: the log line that prints them lands in files
// (--log-file, a run's live logs), and /server_info needs no key to be told.
Field ExtraField(const ExtraFlag& f) {
  std::string key = f.name;
  std::replace(key.begin(), key.end(), '-', '_');
  if (!f.value) return {key, "True", true};
  if (spec::IsSecretFlag(f.name))
    return {key, std::string("'") + spec::kRedacted + "'", spec::kRedacted};
  if (LooksNumeric(*f.value))
    return {key, *f.value, nlohmann::json::parse(*f.value, nullptr, false)};
  return {key, "'" + *f.value + "'", *f.value};
}

template <typename T>
Field Opt(const std::string& key, const std::optional<T>& v) {
  return {key, PyOptional(v), JsonOptional(v)};
}

Field Str(const std::string& key, const std::string& v) {
  return {key, PyString(v), JsonString(v)};
}

template <typename T>
Field Num(const std::string& key, T v) {
  return {key, fmt::format("{}", v), v};
}

std::vector<Field> Fields(const ServerArgs& a) {
  std::vector<Field> f = {
      Str("model_path", a.model_path),
      Str("tokenizer_path", a.model_path),
      {"host", "'" + a.host + "'", a.host},
      Num("port", a.port),
      Opt("mem_fraction_static", a.mem_fraction_static),
      Opt("max_running_requests", a.max_running_requests),
      Opt("chunked_prefill_size", a.chunked_prefill_size),
      Num("max_prefill_tokens", 16384),
      Num("tp_size", a.tp_size),
      Num("pp_size", a.pp_size),
      Opt("pp_max_micro_batch_size", a.pp_max_micro_batch_size),
      Num("ep_size", a.ep_size),
      {"moe_a2a_backend", "'none'", "none"},
      Num("nnodes", a.nnodes),
      Num("node_rank", a.node_rank),
      Str("dist_init_addr", a.dist_init_addr),
      Num("decode_log_interval", a.decode_log_interval),
      {"disable_overlap_schedule", a.pp_size > 1 ? "True" : "False", a.pp_size > 1},
      {"load_format", "'dummy'", "dummy"},
      {"disaggregation_mode", "'" + a.disaggregation_mode + "'", a.disaggregation_mode},
      {"disaggregation_transfer_backend", "'" + a.disaggregation_transfer_backend + "'",
       a.disaggregation_transfer_backend},
      Num("disaggregation_bootstrap_port", a.disaggregation_bootstrap_port),
      Str("disaggregation_ib_device", a.disaggregation_ib_device),
      {"ppsearch_hardware", "'" + a.hardware + "'", a.hardware},
      Num("ppsearch_time_scale", a.time_scale),
  };
  // Flags serve-sim does not model: shown as given, replacing a default of the same name.
  for (const ExtraFlag& e : a.extra_flags) {
    Field x = ExtraField(e);
    auto same = std::find_if(f.begin(), f.end(), [&](const Field& y) { return y.key == x.key; });
    if (same != f.end()) {
      *same = x;
    } else {
      f.push_back(x);
    }
  }
  return f;
}

}  // namespace

Result<std::vector<ExtraFlag>> ParseExtraFlags(const std::vector<std::string>& words) {
  std::vector<ExtraFlag> flags;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.rfind("--", 0) != 0 || w.size() == 2)
      return MakeError("unexpected argument '" + w + "': SGLang flags start with --");
    ExtraFlag f;
    const size_t eq = w.find('=');
    if (eq != std::string::npos) {
      f.name = w.substr(2, eq - 2);
      f.value = w.substr(eq + 1);
    } else {
      f.name = w.substr(2);
      if (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) f.value = words[++i];
    }
    flags.push_back(std::move(f));
  }
  return flags;
}

std::string ServerArgsRepr(const ServerArgs& a) {
  std::string out = "ServerArgs(";
  bool first = true;
  for (const Field& f : Fields(a)) {
    if (!first) out += ", ";
    first = false;
    out += f.key + "=" + f.repr;
  }
  return out + ")";
}

nlohmann::json ServerArgsJson(const ServerArgs& a) {
  nlohmann::json j = nlohmann::json::object();
  for (const Field& f : Fields(a)) j[f.key] = f.json;
  return j;
}

}  // namespace ppsearch::serve_sim
