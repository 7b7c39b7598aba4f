#pragma once
// One reader per top-level table of the spec, used by ParseSpec. Each checks
// its keys (against the lists in spec/keys.h), types and ranges and records
// origins; `base_dir` resolves the relative paths a section holds.

#include <toml++/toml.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/disaggregation_section.h"
#include "spec/keys.h"
#include "spec/limits.h"
#include "spec/spec.h"
#include "spec/toml_access.h"
#include "util/result.h"

namespace ppsearch::spec {

Status ReadExperiment(const TableReader& section, const std::string& base_dir, ExperimentSpec* out);
Status ReadCluster(const TableReader& section, const std::string& base_dir, ClusterSpec* out);
Status ReadEngine(const TableReader& section, const std::string& base_dir, EngineSpec* out);
// `cluster` gives the world size that tp = "auto" divides.
Status ReadSweep(const TableReader& section, const ClusterSpec& cluster, SweepSpec* out);
// `base_dir` resolves lengths_file, which is read here.
Status ReadWorkload(const TableReader& section, const std::string& base_dir, WorkloadSpec* out);
Status ReadBaseline(const TableReader& section, const std::string& base_dir, BaselineSpec* out);
Status ReadDecision(const TableReader& section, const WorkloadSpec& workload, DecisionSpec* out);
Status ReadAdaptive(const TableReader& section, AdaptiveSpec* out);
// `sweep` holds the samples an inject entry may name.
Status ReadSim(const TableReader& section, const SweepSpec& sweep, SimSpec* out);
Status ReadLifecycle(const TableReader& section, LifecycleSpec* out);
// `sweep` holds the layouts `layout` may name.
Status ReadProfile(const TableReader& section, const std::string& base_dir, const SweepSpec& sweep,
                   ProfileSpec* out);

Status ReadSearch(const TableReader& section, SearchSpec* out);

// [engine.args] or a pool's args table: flag names (not the ones a layout,
// the launcher or the pools own) and their values.
Status ReadEngineArgs(const TableReader& args, EngineSpec* out);
// The placeholders a command word may hold ({host}, {node_rank}, {sample},
// {port}, {spec_dir}, {ppsearch}); anything else in braces is a typo.
Status CheckPlaceholders(const std::vector<std::string>& words, const SourceLoc& loc);
// [engine.disaggregation] and [sweep.prefill] / [sweep.decode] of the spec's
// root table, after the rest of `spec` was read: nullopt without pools; an
// error for transfer settings without pools, pools that share a host or
// name one not in [cluster], a backend or router policy SGLang lacks, or a
// bootstrap or router port that is every server's HTTP port.
Result<std::optional<Disaggregation>> ReadDisaggregation(const TableReader& root, const Spec& spec);

// One value of an integer list, with where it was written.
struct LocatedInt {
  int value = 0;
  SourceLoc loc;
};
// The array at `key` (which must be present): integers in [1, max] with no
// repeats (a repeated value would run the same samples twice under one
// name), each error at the element's position and dotted key ("sweep.pp[2]").
Result<std::vector<LocatedInt>> ReadPositiveList(const TableReader& section, std::string_view key,
                                                 int max);

// A layout's pp, tp, ep, dp and instances keys in `table` (tp required, pp
// as `pp` says, the rest optional), each in [1, kMaxParallelSize].
Status ReadLayoutSizes(const TableReader& table, Need pp, LayoutSpec* layout);

// {pp = 2, tp = 16, ep = 4}: pp and tp required, ep defaults to 1. `loc`
// (the tuple's position and dotted key) becomes the layout's origin.
Result<LayoutSpec> ReadLayoutTuple(const SpecSource& source, const toml::node& node,
                                   const SourceLoc& loc);

}  // namespace ppsearch::spec
