#include "sim/trace.h"

namespace ppsearch::sim {
namespace {

// Trace timestamps are microseconds (doubles keep the nanoseconds).
double Us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

nlohmann::json Slice(const std::string& name, int pid, int tid, int64_t start_ns, int64_t dur_ns) {
  return {{"name", name}, {"ph", "X"},          {"pid", pid},
          {"tid", tid},   {"ts", Us(start_ns)}, {"dur", Us(dur_ns)}};
}

}  // namespace

nlohmann::json TraceToJson(const std::vector<TracePoint>& points) {
  nlohmann::json events = nlohmann::json::array();
  for (size_t pid = 0; pid < points.size(); ++pid) {
    const TracePoint& point = points[pid];
    const int p = static_cast<int>(pid);
    events.push_back(
        {{"name", "process_name"}, {"ph", "M"}, {"pid", p}, {"args", {{"name", point.label}}}});
    for (size_t s = 0; s < point.stage_names.size(); ++s) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", p},
                        {"tid", static_cast<int>(s)},
                        {"args", {{"name", point.stage_names[s]}}}});
    }
    for (const TraceSlice& t : point.result->trace) {
      std::string name =
          (t.is_prefill ? "prefill mb " : "decode mb ") + std::to_string(t.micro_batch);
      nlohmann::json slice = Slice(name, p, t.stage, t.start_ns, t.dur_ns);
      slice["args"] = {{"slot", t.slot},
                       {"tokens", t.tokens},
                       {"requests", t.requests},
                       {"compute_ms", t.parts.compute_ns / 1e6},
                       {"tp_allreduce_ms", t.parts.comm_ns / 1e6},
                       {"allreduce_calls", t.parts.allreduce_calls},
                       {"pp_recv_allgather_ms", t.parts.transfer_ns / 1e6}};
      events.push_back(std::move(slice));
      // Finer detail: the parts laid end to end (they interleave per layer in
      // reality; totals are exact, order within the slice is schematic).
      int64_t at = t.start_ns;
      if (t.parts.transfer_ns > 0) {
        events.push_back(Slice("pp recv all-gather", p, t.stage, at, t.parts.transfer_ns));
        at += t.parts.transfer_ns;
      }
      events.push_back(Slice("compute", p, t.stage, at, t.parts.compute_ns));
      at += t.parts.compute_ns;
      if (t.parts.comm_ns > 0) {
        events.push_back(Slice("tp all-reduce x" + std::to_string(t.parts.allreduce_calls), p,
                               t.stage, at, t.parts.comm_ns));
        at += t.parts.comm_ns;
      }
      if (t.parts.overhead_ns > 0)
        events.push_back(Slice("kernel gaps", p, t.stage, at, t.parts.overhead_ns));
    }
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace ppsearch::sim
