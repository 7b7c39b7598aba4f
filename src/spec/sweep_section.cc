// [sweep]: the layouts to compare and the load points, in one of two shapes:
//   pp = [1, 2, 4, 8]  tp = "auto"  ep = [4]  dp = [1]  instances = [1]
//       (cartesian product, instances-major then pp; dp: attention
//        data-parallel size; instances: independent copies on disjoint nodes)
//   layouts = [{pp = 8, tp = 4, ep = 4}, ...]    (explicit tuples)

#include <map>
#include <string>
#include <vector>

#include "spec/sections.h"
#include "util/excerpt.h"

namespace ppsearch::spec {
namespace {

constexpr const char* kTupleExample = "{pp = 2, tp = 16, ep = 4}";

SourceLoc ElementLoc(const TableReader& section, std::string_view key, size_t index,
                     const toml::node& element) {
  return section.source().Locate(
      element.source(), JoinKey(section.key_path(), key) + "[" + std::to_string(index) + "]");
}

// tp omitted or "auto" fills the cluster: tp = world_size / (instances x pp).
Result<std::vector<LocatedInt>> ReadTpList(const TableReader& section, bool* auto_tp) {
  const toml::node* node = section.Find("tp");
  *auto_tp = node == nullptr;
  if (node == nullptr) return std::vector<LocatedInt>{};
  if (const auto* text = node->as_string()) {
    if (text->get() == "auto") {
      *auto_tp = true;
      return std::vector<LocatedInt>{};
    }
    return KeyError(
        section.KeyLoc("tp"),
        "expected \"auto\" or an array of positive integers, got '" + Excerpt(text->get()) + "'");
  }
  return ReadPositiveList(section, "tp", kMaxParallelSize);
}

Status ExpandLists(const TableReader& section, const ClusterSpec& cluster,
                   std::vector<LayoutSpec>* layouts) {
  PPS_ASSIGN_OR_RETURN(std::vector<LocatedInt> pps,
                       ReadPositiveList(section, "pp", kMaxParallelSize));
  bool auto_tp = false;
  PPS_ASSIGN_OR_RETURN(std::vector<LocatedInt> tps, ReadTpList(section, &auto_tp));
  std::vector<LocatedInt> eps = {{1, section.origin()}};
  if (section.Find("ep") != nullptr) {
    PPS_ASSIGN_OR_RETURN(eps, ReadPositiveList(section, "ep", kMaxParallelSize));
  }
  std::vector<LocatedInt> dps = {{1, section.origin()}};
  if (section.Find("dp") != nullptr) {
    PPS_ASSIGN_OR_RETURN(dps, ReadPositiveList(section, "dp", kMaxParallelSize));
  }
  std::vector<LocatedInt> instance_counts = {{1, section.origin()}};
  if (section.Find("instances") != nullptr) {
    PPS_ASSIGN_OR_RETURN(instance_counts, ReadPositiveList(section, "instances", kMaxParallelSize));
  }
  // Counted before expanding: long lists multiply into more layouts than memory holds.
  const int64_t count = static_cast<int64_t>(pps.size()) *
                        static_cast<int64_t>(auto_tp ? 1 : tps.size()) *
                        static_cast<int64_t>(eps.size()) * static_cast<int64_t>(dps.size()) *
                        static_cast<int64_t>(instance_counts.size());
  if (count > kMaxLayouts)
    return KeyError(section.KeyLoc("pp"), "the instances x pp x tp x ep x dp lists expand to " +
                                              std::to_string(count) + " layouts, more than the " +
                                              std::to_string(kMaxLayouts) + " a sweep may hold");
  const int world = cluster.world_size();
  for (const auto& instances : instance_counts) {
    for (const auto& pp : pps) {
      std::vector<int> tp_values;
      if (auto_tp) {
        // Unlike the planner's checks, this one is needed to know the layout at all.
        const int64_t share = int64_t{instances.value} * pp.value;
        if (world % share != 0) {
          const std::string what = instances.value > 1
                                       ? "instances x pp (" + std::to_string(instances.value) +
                                             " x " + std::to_string(pp.value) + ")"
                                       : "pp";
          return KeyError(pp.loc, "tp = \"auto\" needs " + what + " to divide the cluster's " +
                                      std::to_string(world) + " GPUs, got pp = " +
                                      std::to_string(pp.value) + "; list tp explicitly");
        }
        tp_values.push_back(static_cast<int>(world / share));
      } else {
        for (const auto& tp : tps) tp_values.push_back(tp.value);
      }
      for (int tp : tp_values) {
        for (const auto& ep : eps) {
          for (const auto& dp : dps) {
            // The pp entry is what a user edits to drop or change this layout.
            layouts->push_back(
                LayoutSpec{pp.value, tp, ep.value, pp.loc, dp.value, instances.value});
          }
        }
      }
    }
  }
  return Status::Ok();
}

Status ReadLayoutList(const TableReader& section, std::vector<LayoutSpec>* layouts) {
  PPS_ASSIGN_OR_RETURN(const toml::array* array,
                       ToArray(*section.Find("layouts"), section.KeyLoc("layouts"),
                               std::string("tables like ") + kTupleExample));
  if (array->size() > static_cast<size_t>(kMaxLayouts))
    return KeyError(section.KeyLoc("layouts"), "expected at most " + std::to_string(kMaxLayouts) +
                                                   " layouts, got " +
                                                   std::to_string(array->size()));
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    PPS_ASSIGN_OR_RETURN(
        LayoutSpec layout,
        ReadLayoutTuple(section.source(), element, ElementLoc(section, "layouts", i, element)));
    layouts->push_back(std::move(layout));
  }
  return Status::Ok();
}

Status CheckNoDuplicateLayouts(const std::vector<LayoutSpec>& layouts) {
  for (size_t i = 0; i < layouts.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (layouts[i] == layouts[j]) {
        return KeyError(layouts[i].origin, "layout " + layouts[i].Label() +
                                               " is listed twice (first at " +
                                               layouts[j].origin.Position() + ")");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<LocatedInt>> ReadPositiveList(const TableReader& section, std::string_view key,
                                                 int max) {
  PPS_ASSIGN_OR_RETURN(const toml::array* array,
                       ToArray(*section.Find(key), section.KeyLoc(key), "positive integers"));
  std::vector<LocatedInt> out;
  std::map<int64_t, size_t> seen;  // value -> index: a long list stays linear
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node& element = *array->get(i);
    SourceLoc loc = ElementLoc(section, key, i, element);
    PPS_ASSIGN_OR_RETURN(int64_t value, ToInt(element, loc, 1, max));
    if (!seen.emplace(value, i).second) {
      return KeyError(loc, std::to_string(value) + " is listed twice");
    }
    out.push_back({static_cast<int>(value), loc});
  }
  return out;
}

Status ReadLayoutSizes(const TableReader& table, Need pp, LayoutSpec* layout) {
  PPS_RETURN_IF_ERROR(table.Int("pp", &layout->pp, pp, 1, kMaxParallelSize));
  PPS_RETURN_IF_ERROR(table.Int("tp", &layout->tp, Need::kRequired, 1, kMaxParallelSize));
  PPS_RETURN_IF_ERROR(table.Int("ep", &layout->ep, Need::kOptional, 1, kMaxParallelSize));
  PPS_RETURN_IF_ERROR(table.Int("dp", &layout->dp, Need::kOptional, 1, kMaxParallelSize));
  return table.Int("instances", &layout->instances, Need::kOptional, 1, kMaxParallelSize);
}

Result<LayoutSpec> ReadLayoutTuple(const SpecSource& source, const toml::node& node,
                                   const SourceLoc& loc) {
  PPS_ASSIGN_OR_RETURN(const toml::table* table, ToTable(node, loc, kTupleExample));
  TableReader tuple(source, *table, loc.key);
  PPS_RETURN_IF_ERROR(tuple.CheckKeys(kLayoutKeys));
  LayoutSpec layout;
  PPS_RETURN_IF_ERROR(ReadLayoutSizes(tuple, Need::kRequired, &layout));
  layout.origin = loc;
  return layout;
}

Status ReadSweep(const TableReader& section, const ClusterSpec& cluster, SweepSpec* out) {
  PPS_RETURN_IF_ERROR(section.CheckKeys(kSweepKeys));
  out->origin = section.origin();
  if (section.Find("prefill") != nullptr || section.Find("decode") != nullptr) {
    // The pools are the layout: a list beside them would say two things.
    for (const char* list : {"layouts", "pp", "tp", "ep", "dp", "instances"}) {
      if (section.Find(list) != nullptr) {
        return KeyError(section.KeyLoc(list),
                        "a disaggregated sweep's layouts are [sweep.prefill] and "
                        "[sweep.decode]; remove '" +
                            JoinKey(section.key_path(), list) + "'");
      }
    }
    // The pools themselves are read with [engine.disaggregation] (ReadDisaggregation).
  } else if (section.Find("layouts") != nullptr) {
    for (const char* list : {"pp", "tp", "ep", "dp", "instances"}) {
      if (section.Find(list) != nullptr) {
        return KeyError(section.KeyLoc(list),
                        "set either 'layouts' or the pp/tp/ep/dp/instances lists, not both");
      }
    }
    PPS_RETURN_IF_ERROR(ReadLayoutList(section, &out->layouts));
  } else {
    if (section.Find("pp") == nullptr) return section.Missing("pp", " (or 'sweep.layouts')");
    PPS_RETURN_IF_ERROR(ExpandLists(section, cluster, &out->layouts));
  }
  PPS_RETURN_IF_ERROR(CheckNoDuplicateLayouts(out->layouts));

  if (section.Find("concurrency") == nullptr) return section.Missing("concurrency");
  PPS_ASSIGN_OR_RETURN(std::vector<LocatedInt> concurrency,
                       ReadPositiveList(section, "concurrency", kMaxConcurrency));
  for (const auto& c : concurrency) out->concurrency.push_back(c.value);
  PPS_RETURN_IF_ERROR(section.Int("repeats", &out->repeats, Need::kOptional, 1, kMaxRepeats));
  // 64-bit: the product of the bounds above still overflows an int.
  const int64_t samples = static_cast<int64_t>(out->layouts.size()) *
                          static_cast<int64_t>(out->concurrency.size()) * out->repeats;
  if (samples > kMaxSamples) {
    const char* key = section.Find("repeats") != nullptr ? "repeats" : "concurrency";
    return KeyError(section.KeyLoc(key),
                    std::to_string(out->layouts.size()) + " layouts x " +
                        std::to_string(out->concurrency.size()) + " concurrency levels x " +
                        std::to_string(out->repeats) + " repeats = " + std::to_string(samples) +
                        " samples, more than the " + std::to_string(kMaxSamples) +
                        " a search may hold; sweep fewer layouts, concurrency levels or repeats");
  }
  return Status::Ok();
}

}  // namespace ppsearch::spec
