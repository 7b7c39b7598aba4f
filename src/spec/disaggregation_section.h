#pragma once
// A disaggregated deployment (SGLang's prefill-decode disaggregation):
// [engine.disaggregation], how the pools talk, and [sweep.prefill] /
// [sweep.decode], each pool's layout, hosts and engine arguments
// (spec::Disaggregation, in spec.h). ParseSpec reads these tables into
// Spec::disaggregation. Names and defaults are
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

// Whether the spec holds [sweep.prefill] or [sweep.decode]: a disaggregated
// deployment, whose sweep holds that deployment alone.
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
