// [sim]: the simulated engine's per-repeat noise and injected failures.
//   noise_cv = 0.003
//   seed = 7
//   inject = [{sample = "pp2-tp16-ep4_c8_r2", fault = "lose_requests", count = 3},
//             {sample = "pp4-tp8-ep4_c8_r1", fault = "oom"}]

#include <cstdio>

#include "spec/sections.h"

namespace ppsearch::spec {
namespace {

bool LooksLikeSampleId(const std::string& s) {
  int a, b, c, d, e;
  char rest = 0;
  return std::sscanf(s.c_str(), "pp%d-tp%d-ep%d_c%d_r%d%c", &a, &b, &c, &d, &e, &rest) == 5;
}

Result<SimFault> ReadFault(const TableReader& section, const toml::node& node, size_t index) {
  SourceLoc loc = section.source().Locate(
      node.source(), JoinKey(section.key_path(), "inject") + "[" + std::to_string(index) + "]");
  PPS_ASSIGN_OR_RETURN(const toml::table* table,
                       ToTable(node, loc, "{sample = \"pp2-tp16-ep4_c8_r2\", fault = \"oom\"}"));
  TableReader t(section.source(), *table, loc.key);
  PPS_RETURN_IF_ERROR(t.CheckKeys({"sample", "fault", "count"}));
  SimFault f;
  f.origin = loc;
  PPS_RETURN_IF_ERROR(t.String("sample", &f.sample, Need::kRequired));
  if (!LooksLikeSampleId(f.sample))
    return KeyError(t.KeyLoc("sample"),
                    "expected a sample id like \"pp2-tp16-ep4_c8_r2\", got \"" + f.sample + "\"");
  PPS_RETURN_IF_ERROR(
      t.Enum("fault", &f.fault, {"lose_requests", "oom", "nccl", "traceback", "engine_exit"}));
  if (t.Find("fault") == nullptr) return t.Missing("fault");
  PPS_RETURN_IF_ERROR(t.Int("count", &f.count, Need::kOptional, 1));
  return f;
}

}  // namespace

Status ReadSim(const TableReader& section, SimSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys({"noise_cv", "seed", "inject"}));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(section.Number("noise_cv", &out->noise_cv, 0, 1));
  int64_t seed = static_cast<int64_t>(out->seed);
  PPS_RETURN_IF_ERROR(section.Int("seed", &seed, Need::kOptional, 0));
  out->seed = static_cast<uint64_t>(seed);
  if (const toml::node* inject = section.Find("inject")) {
    PPS_ASSIGN_OR_RETURN(const toml::array* array,
                         ToArray(*inject, section.KeyLoc("inject"), "fault tables"));
    for (size_t i = 0; i < array->size(); ++i) {
      PPS_ASSIGN_OR_RETURN(SimFault f, ReadFault(section, *array->get(i), i));
      out->inject.push_back(std::move(f));
    }
  }
  return Status::Ok();
}

}  // namespace ppsearch::spec
