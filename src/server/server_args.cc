#include "server/server_args.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace ppsearch::server {
namespace {

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
  if (!(a.time_scale > 0)) return MakeError("--time-scale must be positive");
  if (a.mem_fraction_static && !(*a.mem_fraction_static > 0 && *a.mem_fraction_static < 1))
    return MakeError("--mem-fraction-static must be in (0, 1)");
  if (a.fault.http500_fraction < 0 || a.fault.http500_fraction > 1)
    return MakeError("--fault-http500 must be a fraction in [0, 1]");
  if (!a.fault.log.empty() && a.fault.log != "oom" && a.fault.log != "nccl" &&
      a.fault.log != "traceback")
    return MakeError("--fault-log must be one of oom, nccl, traceback (got '" + a.fault.log + "')");
  if (a.fault.slow_start_s < 0) return MakeError("--fault-slow-start-s must not be negative");
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

std::string ServerArgsRepr(const ServerArgs& a) {
  return fmt::format(
      "ServerArgs(model_path={}, tokenizer_path={}, host='{}', port={}, mem_fraction_static={}, "
      "max_running_requests={}, chunked_prefill_size={}, max_prefill_tokens=16384, tp_size={}, "
      "pp_size={}, pp_max_micro_batch_size={}, ep_size={}, moe_a2a_backend='none', nnodes={}, "
      "node_rank={}, dist_init_addr={}, decode_log_interval={}, disable_overlap_schedule={}, "
      "load_format='dummy', ppsearch_hardware='{}', ppsearch_time_scale={})",
      PyString(a.model_path), PyString(a.model_path), a.host, a.port,
      PyOptional(a.mem_fraction_static), PyOptional(a.max_running_requests),
      PyOptional(a.chunked_prefill_size), a.tp_size, a.pp_size,
      PyOptional(a.pp_max_micro_batch_size), a.ep_size, a.nnodes, a.node_rank,
      PyString(a.dist_init_addr), a.decode_log_interval, a.pp_size > 1 ? "True" : "False",
      a.hardware, a.time_scale);
}

nlohmann::json ServerArgsJson(const ServerArgs& a) {
  return {{"model_path", JsonString(a.model_path)},
          {"tokenizer_path", JsonString(a.model_path)},
          {"host", a.host},
          {"port", a.port},
          {"mem_fraction_static", JsonOptional(a.mem_fraction_static)},
          {"max_running_requests", JsonOptional(a.max_running_requests)},
          {"chunked_prefill_size", JsonOptional(a.chunked_prefill_size)},
          {"max_prefill_tokens", 16384},
          {"tp_size", a.tp_size},
          {"pp_size", a.pp_size},
          {"pp_max_micro_batch_size", JsonOptional(a.pp_max_micro_batch_size)},
          {"ep_size", a.ep_size},
          {"moe_a2a_backend", "none"},
          {"nnodes", a.nnodes},
          {"node_rank", a.node_rank},
          {"dist_init_addr", JsonString(a.dist_init_addr)},
          {"decode_log_interval", a.decode_log_interval},
          {"load_format", "dummy"},
          {"ppsearch_hardware", a.hardware},
          {"ppsearch_time_scale", a.time_scale}};
}

}  // namespace ppsearch::server
