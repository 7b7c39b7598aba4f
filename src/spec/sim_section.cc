// [sim]: the simulated engine's per-repeat noise and injected failures.
//   noise_cv = 0.003
//   seed = 7
//   inject = [{sample = "pp2-tp16-ep4_c8_r2", fault = "lose_requests", count = 3},
//             {sample = "pp4-tp8-ep4_c8_r1", fault = "oom"}]

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "spec/layout_text.h"
#include "spec/sections.h"
#include "util/did_you_mean.h"
#include "util/excerpt.h"

namespace ppsearch::spec {
namespace {

bool LooksLikeSampleId(const std::string& s) {
  const auto layout = ParseSlugPrefix(s);
  if (!layout) return false;
  int c, r;
  char rest = 0;
  return std::sscanf(s.c_str() + layout->second, "_c%d_r%d%c", &c, &r, &rest) == 2;
}

// The sweep's sample ids, in run order (layout, then concurrency, then repeat).
std::vector<std::string> SweepSampleIds(const SweepSpec& sweep) {
  std::vector<std::string> out;
  for (const LayoutSpec& l : sweep.layouts)
    for (int c : sweep.concurrency)
      for (int r = 1; r <= sweep.repeats; ++r)
        out.push_back(l.Slug() + "_c" + std::to_string(c) + "_r" + std::to_string(r));
  return out;
}

// "did you mean" the closest sample id, else the first and last ids of the sweep.
std::string SampleHint(const std::string& sample, const std::vector<std::string>& ids) {
  const std::string closest = ClosestName(sample, ids);
  if (!closest.empty()) return " (did you mean \"" + closest + "\"?)";
  if (ids.empty()) return " (the sweep holds no sample)";
  std::string list;
  for (size_t i = 0; i < ids.size() && i < 6; ++i) list += (i ? ", " : "") + ids[i];
  if (ids.size() > 6) list += ", ..., " + ids.back();
  return " (the sweep's " + std::to_string(ids.size()) + " samples: " + list + ")";
}

Result<SimFault> ReadFault(const TableReader& section, const toml::node& node, size_t index,
                           const std::vector<std::string>& sample_ids) {
  SourceLoc loc = section.source().Locate(
      node.source(), JoinKey(section.key_path(), "inject") + "[" + std::to_string(index) + "]");
  PPS_ASSIGN_OR_RETURN(const toml::table* table,
                       ToTable(node, loc, "{sample = \"pp2-tp16-ep4_c8_r2\", fault = \"oom\"}"));
  TableReader t(section.source(), *table, loc.key);
  PPS_RETURN_IF_ERROR(t.CheckKeys(kSimFaultKeys));
  SimFault f;
  f.origin = loc;
  PPS_RETURN_IF_ERROR(t.String("sample", &f.sample, Need::kRequired));
  if (!LooksLikeSampleId(f.sample))
    return KeyError(t.KeyLoc("sample"), "expected a sample id like \"pp2-tp16-ep4_c8_r2\", got \"" +
                                            Excerpt(f.sample) + "\"");
  if (std::find(sample_ids.begin(), sample_ids.end(), f.sample) == sample_ids.end())
    return KeyError(t.KeyLoc("sample"), "no sample \"" + Excerpt(f.sample) + "\" in the sweep" +
                                            SampleHint(f.sample, sample_ids));
  PPS_RETURN_IF_ERROR(
      t.Enum("fault", &f.fault,
             {"lose_requests", "oom", "nccl", "traceback", "engine_exit", "kv_transfer"}));
  if (t.Find("fault") == nullptr) return t.Missing("fault");
  // Only a disaggregated deployment moves KV between servers.
  if (f.fault == "kv_transfer") {
    const auto layout = ParseSlugPrefix(f.sample);
    if (!layout || !layout->first.disaggregated())
      return KeyError(t.KeyLoc("fault"),
                      "\"kv_transfer\" fails a disaggregated deployment's KV transfer; sample \"" +
                          Excerpt(f.sample) + "\" is an aggregated layout's");
  }
  PPS_RETURN_IF_ERROR(t.Int("count", &f.count, Need::kOptional, 1, kMaxRequests));
  return f;
}

}  // namespace

Status ReadSim(const TableReader& section, const SweepSpec& sweep, SimSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kSimKeys));
  out->origin = section.origin();
  PPS_RETURN_IF_ERROR(section.Number("noise_cv", &out->noise_cv, 0, 1));
  int64_t seed = static_cast<int64_t>(out->seed);
  PPS_RETURN_IF_ERROR(section.Int("seed", &seed, Need::kOptional, 0));
  out->seed = static_cast<uint64_t>(seed);
  if (const toml::node* inject = section.Find("inject")) {
    PPS_ASSIGN_OR_RETURN(const toml::array* array,
                         ToArray(*inject, section.KeyLoc("inject"), "fault tables"));
    const std::vector<std::string> sample_ids = SweepSampleIds(sweep);
    for (size_t i = 0; i < array->size(); ++i) {
      PPS_ASSIGN_OR_RETURN(SimFault f, ReadFault(section, *array->get(i), i, sample_ids));
      out->inject.push_back(std::move(f));
    }
  }
  return Status::Ok();
}

}  // namespace ppsearch::spec
