#pragma once
// A spec derived from another: the same file with its sweep (and some
// engine flags) replaced, written so that it reads the same wherever it is
// saved. Parses the TOML, changes those fields, writes the tree: every
// other value stays what the source says (comments are not kept).

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::spec {

struct DerivedSweep {
  std::vector<LayoutSpec> layouts;  // becomes [sweep] layouts (the pp/tp/ep/dp lists go)
  std::vector<int> concurrency;     // empty: the source's
  // Set as workload.request_rate when given (an open loop; the concurrency
  // is then its cap).
  std::optional<double> request_rate;
  // [engine.args] flags to set (name without leading dashes): a number
  // (chunked-prefill-size) or a word (moe-a2a-backend).
  std::vector<std::pair<std::string, std::variant<int64_t, std::string>>> engine_args;
  // [engine.pp_layer_partition] entries to set beside the source's: a
  // pipeline size's layer split (SGLANG_PP_LAYER_PARTITION). The source sets
  // no [engine.env] split beside them: the parser takes one of the two only.
  std::map<int, std::vector<int>> pp_layer_partitions;
  // Both set: a disaggregated deployment in place of `layouts`
  // ([sweep.prefill] and [sweep.decode], spec/disaggregation_section.h; [sweep]'s
  // layouts go): each pool's hosts by name and its server's layout.
  struct Pool {
    std::vector<std::string> hosts;
    LayoutSpec layout;
  };
  std::optional<Pool> prefill, decode;
};

// `text` is the spec file at `path` (read by the caller). Relative paths in
// it (model_config, results_dir, hardware files, keys, patches, baseline and
// profile files) become absolute against the spec's directory, and
// {spec_dir} in engine.command becomes that directory, so the result can be
// saved anywhere. Errors: the text is not TOML, an override is malformed.
// `overrides` (--set key=value) are applied first, as when the source was
// read; `header` (comment lines) opens the result.
Result<std::string> DeriveSpecText(const std::string& text, const std::string& path,
                                   const std::vector<std::string>& overrides,
                                   const DerivedSweep& sweep, const std::string& header);

}  // namespace ppsearch::spec
