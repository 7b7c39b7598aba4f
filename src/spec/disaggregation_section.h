#pragma once
// A disaggregated deployment (SGLang's prefill-decode disaggregation):
// [engine.disaggregation], how the pools talk, and [sweep.prefill] /
// [sweep.decode], each pool's layout, hosts and engine arguments. ParseSpec
// checks these tables; LoadDisaggregation reads them. Names and defaults are
// SGLang v0.5.18's (github.com/sgl-project/sglang at
// 71de97b264b04dcd514cf904003028aefe9775c8): server_args.py's PD flags, and
// the router's sgl-model-gateway/bindings/python/src/sglang_router/router_args.py.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::spec {

struct DisaggregationEngineSpec {
  std::string transfer_backend = "mooncake";  // --disaggregation-transfer-backend
  std::string ib_device;                      // --disaggregation-ib-device; empty: SGLang detects
  int bootstrap_port = 8998;                  // --disaggregation-bootstrap-port (prefill servers)
  std::string router_policy = "cache_aware";  // the router's --policy (RouterArgs.policy)
  int router_port = 8000;                     // the router's --port
  SourceLoc origin;
};

// One pool: its layout (instances of PP/TP/EP/DP), the hosts it runs on and
// the engine arguments it adds to [engine.args] (its own win).
struct PoolSpec {
  std::string role;  // "prefill" | "decode": SGLang's --disaggregation-mode
  LayoutSpec layout;
  std::vector<int> hosts;  // indices into cluster.hosts, in the order listed
  std::vector<std::pair<std::string, ArgValue>> args;
  SourceLoc origin;
};

struct Disaggregation {
  DisaggregationEngineSpec transfer;
  PoolSpec prefill;
  PoolSpec decode;
};

// Whether the spec holds [sweep.prefill] or [sweep.decode]: a disaggregated
// deployment, whose sweep has no layouts of its own.
bool IsDisaggregated(const Spec& spec);

// The spec file's disaggregated deployment, read with the same --set
// overrides ParseSpec takes (and checked as ParseSpec checks it); nullopt
// for an aggregated spec.
Result<std::optional<Disaggregation>> LoadDisaggregation(const std::string& path,
                                                         const std::vector<std::string>& overrides);
// The same from the spec's text (`path` names it in messages).
Result<std::optional<Disaggregation>> ParseDisaggregation(
    const std::string& toml_text, const std::string& path,
    const std::vector<std::string>& overrides);

// The engine one pool runs with: [engine] with the pool's args over
// [engine.args], and SGLang's PD flags as args (--disaggregation-mode ROLE,
// -transfer-backend, -bootstrap-port, -ib-device when set).
EngineSpec PoolEngineSpec(const Spec& spec, const Disaggregation& deployment, const PoolSpec& pool);

}  // namespace ppsearch::spec
