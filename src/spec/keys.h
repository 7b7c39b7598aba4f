#pragma once
// The keys each table of the spec accepts, in one place. The section readers
// check every table against its list here (TableReader::CheckKeys), and
// AcceptedKeys() spells the same lists out as dotted paths, so the reference
// in docs/spec.md can be compared with what the parser takes
// (spec/keys_test.cc). Lists keep the order the readers had: CheckKeys
// suggests the closest key, and a tie goes to the earlier one.

#include <string>
#include <vector>

namespace ppsearch::spec {

using KeyList = std::vector<std::string>;

// The top-level tables: [experiment], [cluster], ...
extern const KeyList kSpecSections;

extern const KeyList kExperimentKeys;
extern const KeyList kClusterKeys;
// An inline host table in cluster.hosts: {name = "n0", address = "10.0.0.1"}.
extern const KeyList kHostTableKeys;
// [cluster.ssh] defaults; the names in cluster.hosts are keys there too.
extern const KeyList kSshKeys;
// [cluster.ssh.<host>]: one host's settings.
extern const KeyList kSshHostKeys;
extern const KeyList kSlurmKeys;
extern const KeyList kSudoKeys;
// The step names [cluster.sudo] steps takes.
extern const KeyList kSudoSteps;
// [engine]; its `args` and `env` tables take any flag or variable name.
extern const KeyList kEngineKeys;
// [engine.disaggregation].
extern const KeyList kEngineDisaggregationKeys;
extern const KeyList kSweepKeys;
// [sweep.prefill] and [sweep.decode]: a pool's layout, hosts and args.
extern const KeyList kPoolKeys;
// A layout tuple {pp = 2, tp = 16, ep = 4}: sweep.layouts entries, baseline.layout.
extern const KeyList kLayoutKeys;
extern const KeyList kWorkloadKeys;
extern const KeyList kBaselineKeys;
extern const KeyList kDecisionKeys;
extern const KeyList kAdaptiveKeys;
extern const KeyList kSearchKeys;
extern const KeyList kLifecycleKeys;
extern const KeyList kSimKeys;
// One entry of sim.inject.
extern const KeyList kSimFaultKeys;
extern const KeyList kProfileKeys;

// Every key the parser accepts below the top-level tables, as a dotted path
// ("cluster.ssh.user"). A table nested in a section is a key of its own and
// its keys follow it: the entries of an array of tables take the array's
// path ("sim.inject.sample"), and per-host ssh tables read
// "cluster.ssh.<host>". `engine.args` and `engine.env` are free-form: any
// name is a key there, so they appear as themselves.
std::vector<std::string> AcceptedKeys();

}  // namespace ppsearch::spec
