#pragma once
// The confounder check: every difference between two sides' recorded
// settings, classed by the one table (known_settings.h), what could not be
// checked because a side did not record it, and the verdict. Layout and
// concurrency are the compared axes: they are matched, not diffed; points
// matched across another EP size add the EP size as a difference
// (AddDifference). Pure.

#include <string>
#include <vector>

#include "compare/description.h"
#include "compare/known_settings.h"

namespace ppsearch::compare {

struct Difference {
  std::string key;  // description.h's key, e.g. "engine.args.chunked-prefill-size"
  SettingClass what;
  std::string a;  // the value on side A ("unset" for an absent flag)
  std::string b;
};

struct ConfounderReport {
  std::vector<Difference> differences;  // harmful first, then relevant, then cosmetic
  std::vector<std::string> unchecked;   // sentences: what one side did not record
  bool comparable = true;               // no harmful difference
  std::string verdict;                  // "comparable" or "not comparable because ..."

  std::vector<const Difference*> harmful() const;
};

ConfounderReport FindConfounders(const RunDescription& a, const RunDescription& b);

// Adds a difference found outside the recorded settings (the EP size of
// matched points, key "layout.ep") and renews the order and the verdict.
void AddDifference(ConfounderReport& r, const std::string& key, const std::string& a,
                   const std::string& b);

}  // namespace ppsearch::compare
