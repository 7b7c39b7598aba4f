#pragma once
// summary.json: a run's points, baseline rows, memory per layout, decision
// and checks (evidence/run_summary.h), written by `ppsearch report` and at
// the end of `ppsearch run` (schema version 1; keys and units:
// docs/formats.md). Tools read it as JSON; ppsearch itself reads the
// run's evidence again rather than this file, so it has no reader here.

#include <nlohmann/json.hpp>

#include "evidence/run_summary.h"

namespace ppsearch::evidence {

inline constexpr int kSummarySchemaVersion = 1;

nlohmann::json SummaryJson(const RunSummary& summary);

// A layout as summary.json writes it, and as every JSON a command prints
// does (simulate, compare): pp, tp, ep, dp, instances and the label the
// tables show; a disaggregated deployment as its prefill and decode pools.
nlohmann::json SummaryLayoutJson(const spec::LayoutSpec& l);

// The confounder check as summary.json's checks.baseline_confounders and
// `ppsearch compare --json`'s "confounders" carry it.
nlohmann::json ConfounderCheckJson(const ConfounderCheck& check);

}  // namespace ppsearch::evidence
