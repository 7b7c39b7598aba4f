// [lifecycle]: how long each step of a real sample may take, and the
// thresholds its checks use. Every key is optional; the defaults suit a large
// MoE model (see docs/cluster.md, "Lifecycle of a sample").

#include "spec/limits.h"
#include "spec/sections.h"

namespace ppsearch::spec {

Status ReadLifecycle(const TableReader& section, LifecycleSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kLifecycleKeys));
  out->origin = section.origin();
  constexpr double kDay = 86400;
  PPS_RETURN_IF_ERROR(section.Number("host_timeout_s", &out->host_timeout_s, 0.1, kDay));
  PPS_RETURN_IF_ERROR(section.Number("check_timeout_s", &out->check_timeout_s, 0.1, 3600));
  PPS_RETURN_IF_ERROR(section.Number("start_timeout_s", &out->start_timeout_s, 0.1, kDay));
  PPS_RETURN_IF_ERROR(section.Number("poll_interval_s", &out->poll_interval_s, 0.01, 600));
  PPS_RETURN_IF_ERROR(section.Number("request_timeout_s", &out->request_timeout_s, 0.1, kDay));
  PPS_RETURN_IF_ERROR(section.Number("bench_timeout_s", &out->bench_timeout_s, 0, kDay));
  PPS_RETURN_IF_ERROR(section.Number("stop_grace_s", &out->stop_grace_s, 0, 3600));
  PPS_RETURN_IF_ERROR(
      section.Number("memory_release_timeout_s", &out->memory_release_timeout_s, 0, kDay));
  PPS_RETURN_IF_ERROR(section.Number("memory_release_mib", &out->memory_release_mib, 0, kMaxMib));
  PPS_RETURN_IF_ERROR(section.Number("preflight_gpu_mib", &out->preflight_gpu_mib, 0, kMaxMib));
  PPS_RETURN_IF_ERROR(section.Number("min_window_s", &out->min_window_s, 0, kDay));
  PPS_RETURN_IF_ERROR(section.Bool("reuse_server", &out->reuse_server));
  PPS_RETURN_IF_ERROR(section.Bool("flush_cache", &out->flush_cache));
  return Status::Ok();
}

}  // namespace ppsearch::spec
