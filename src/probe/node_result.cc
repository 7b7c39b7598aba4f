#include "probe/node_result.h"

#include <nlohmann/json.hpp>

#include "evidence/json_fields.h"

namespace ppsearch::probe {
namespace {

using evidence::JsonFields;

Status ReadRun(const JsonFields& f, TimedRun* run) {
  PPS_RETURN_IF_ERROR(f.Require("iterations", "a count"));
  PPS_RETURN_IF_ERROR(f.Require("seconds", "a time in seconds"));
  PPS_RETURN_IF_ERROR(f.Int64("iterations", &run->iterations));
  PPS_RETURN_IF_ERROR(f.Number("seconds", &run->seconds));
  if (run->iterations < 1) return f.Wrong("iterations", "at least 1");
  if (!(run->seconds > 0)) return f.Wrong("seconds", "a positive time");
  return Status::Ok();
}

Status ReadShape(const JsonFields& f, GemmShape* g) {
  for (const char* key : {"m", "n", "k", "dtype"}) PPS_RETURN_IF_ERROR(f.Require(key, "present"));
  PPS_RETURN_IF_ERROR(f.Int64("m", &g->m));
  PPS_RETURN_IF_ERROR(f.Int64("n", &g->n));
  PPS_RETURN_IF_ERROR(f.Int64("k", &g->k));
  PPS_RETURN_IF_ERROR(f.String("dtype", &g->dtype));
  if (g->m < 1 || g->n < 1 || g->k < 1) return f.Wrong("m", "positive sizes m, n and k");
  return Status::Ok();
}

// A GEMM timed call by call: at least one positive time.
Status ReadCalls(const JsonFields& f, std::vector<double>* out) {
  const nlohmann::json* calls = f.Find("call_seconds");
  if (calls == nullptr || !calls->is_array() || calls->empty())
    return f.Wrong("call_seconds", "a non-empty array of seconds", calls);
  for (const nlohmann::json& c : *calls) {
    if (!c.is_number() || !(c.get<double>() > 0))
      return f.Wrong("call_seconds", "positive times", &c);
    out->push_back(c.get<double>());
  }
  return Status::Ok();
}

Result<std::vector<CollectiveTiming>> ReadCollectives(const JsonFields& root, const char* key) {
  std::vector<CollectiveTiming> out;
  PPS_ASSIGN_OR_RETURN(std::vector<JsonFields> rows, root.FieldsOfEach(key));
  for (const JsonFields& r : rows) {
    CollectiveTiming c;
    PPS_RETURN_IF_ERROR(r.Require("op", "the operation"));
    PPS_RETURN_IF_ERROR(r.String("op", &c.op));
    PPS_RETURN_IF_ERROR(r.Int("ranks", &c.ranks));
    PPS_RETURN_IF_ERROR(r.Int64("bytes", &c.bytes));
    if (c.ranks < 2) return r.Wrong("ranks", "at least 2");
    if (c.bytes < 1) return r.Wrong("bytes", "a positive size");
    PPS_RETURN_IF_ERROR(ReadRun(r, &c.run));
    out.push_back(c);
  }
  return out;
}

}  // namespace

Result<NodeResult> ParseNodeOutput(const std::string& node, const std::string& output) {
  const std::string where = "probe output of " + node;
  size_t end = output.find_last_not_of(" \t\r\n");
  if (end == std::string::npos)
    return MakeError(where + ": the probe printed nothing (is PyTorch installed there?)");
  size_t begin = output.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  const std::string line = output.substr(begin, end + 1 - begin);
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return MakeError(where +
                     ": expected a JSON object on its last line, got: " + line.substr(0, 200));
  JsonFields f(j, where);
  int version = 0;
  PPS_RETURN_IF_ERROR(f.Require("probe_version", "1"));
  PPS_RETURN_IF_ERROR(f.Int("probe_version", &version));
  if (version != 1)
    return f.Wrong("probe_version", "1 (this ppsearch's probe)", f.Find("probe_version"));
  NodeResult r;
  r.node = node;
  PPS_RETURN_IF_ERROR(f.Require("device", "cuda or cpu"));
  PPS_RETURN_IF_ERROR(f.String("device", &r.device));
  if (r.device != "cuda" && r.device != "cpu")
    return f.Wrong("device", "cuda or cpu", f.Find("device"));
  PPS_RETURN_IF_ERROR(f.String("host", &r.hostname));
  PPS_RETURN_IF_ERROR(f.String("torch", &r.torch));
  PPS_RETURN_IF_ERROR(f.String("device_name", &r.device_name));
  PPS_RETURN_IF_ERROR(f.String("cuda", &r.cuda));
  PPS_RETURN_IF_ERROR(f.Int("device_count", &r.device_count));
  PPS_RETURN_IF_ERROR(f.Int("sm_count", &r.sm_count));
  PPS_RETURN_IF_ERROR(f.Number("memory_mib", &r.memory_mib));

  PPS_ASSIGN_OR_RETURN(std::vector<JsonFields> gemms, f.FieldsOfEach("gemm"));
  for (const JsonFields& g : gemms) {
    GemmTiming t;
    PPS_RETURN_IF_ERROR(ReadShape(g, &t.shape));
    PPS_RETURN_IF_ERROR(ReadRun(g, &t.run));
    r.gemm.push_back(t);
  }
  if (f.Has("burst")) {
    PPS_ASSIGN_OR_RETURN(JsonFields b, f.Fields("burst"));
    BurstTiming t;
    PPS_RETURN_IF_ERROR(ReadShape(b, &t.shape));
    PPS_RETURN_IF_ERROR(b.Number("idle_s", &t.idle_s));
    PPS_RETURN_IF_ERROR(ReadCalls(b, &t.call_seconds));
    // Absent in an older script's output: no refill measured.
    if (b.Has("refills")) {
      PPS_ASSIGN_OR_RETURN(std::vector<JsonFields> refills, b.FieldsOfEach("refills"));
      for (const JsonFields& f : refills) {
        RefillTiming refill;
        PPS_RETURN_IF_ERROR(f.Require("idle_s", "the gap in seconds"));
        PPS_RETURN_IF_ERROR(f.Number("idle_s", &refill.idle_s));
        if (!(refill.idle_s > 0)) return f.Wrong("idle_s", "a positive gap");
        PPS_RETURN_IF_ERROR(ReadCalls(f, &refill.call_seconds));
        t.refills.push_back(std::move(refill));
      }
    }
    r.burst = t;
  }
  if (f.Has("memory")) {
    PPS_ASSIGN_OR_RETURN(JsonFields m, f.Fields("memory"));
    CopyTiming c;
    PPS_RETURN_IF_ERROR(m.Int64("bytes", &c.bytes));
    if (c.bytes < 1) return m.Wrong("bytes", "a positive size");
    PPS_RETURN_IF_ERROR(ReadRun(m, &c.run));
    r.copy = c;
  }
  if (f.Has("launch")) {
    PPS_ASSIGN_OR_RETURN(JsonFields l, f.Fields("launch"));
    LaunchTiming t;
    PPS_RETURN_IF_ERROR(l.Int("kernels", &t.kernels));
    if (t.kernels < 1) return l.Wrong("kernels", "at least 1");
    PPS_RETURN_IF_ERROR(ReadRun(l, &t.run));
    r.launch = t;
  }
  PPS_ASSIGN_OR_RETURN(r.collectives, ReadCollectives(f, "collectives"));
  PPS_ASSIGN_OR_RETURN(r.cross, ReadCollectives(f, "cross"));
  PPS_ASSIGN_OR_RETURN(std::vector<JsonFields> skipped, f.FieldsOfEach("skipped"));
  for (const JsonFields& s : skipped) {
    Skipped k;
    PPS_RETURN_IF_ERROR(s.String("what", &k.what));
    PPS_RETURN_IF_ERROR(s.String("why", &k.why));
    r.skipped.push_back(k);
  }
  return r;
}

}  // namespace ppsearch::probe
