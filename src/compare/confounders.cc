#include "compare/confounders.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace ppsearch::compare {
namespace {

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Keys whose absence on a side with metadata means "not set", not "not recorded".
bool AbsentMeansUnset(const std::string& key) {
  return StartsWith(key, kArgPrefix) || StartsWith(key, kEnvPrefix) ||
         StartsWith(key, kPatchPrefix);
}

std::string Name(const RunDescription& d, const char* side) {
  return std::string(side) + " (" + d.source + ")";
}

// What a side without metadata cannot tell, as one sentence.
std::string NoMetadata(const RunDescription& d, const char* side) {
  std::string known;
  for (const auto& [key, value] : d.settings) known += (known.empty() ? "" : ", ") + key;
  return Name(d, side) + " is a " + d.what +
         " without run metadata: engine image and version, MoE and A2A backends, chunked "
         "prefill, every other server flag, environment, patches, model and quantization, "
         "input and output lengths, arrival process (open or closed loop), hosts, GPU kind and "
         "count, driver, hardware profile" +
         (d.simulated ? "" : " and engine kind") + " could not be checked" +
         (known.empty() ? "" : " (it records only " + known + ")");
}

}  // namespace

std::vector<const Difference*> ConfounderReport::harmful() const {
  std::vector<const Difference*> out;
  for (const Difference& d : differences)
    if (d.what.severity == Severity::kHarmful) out.push_back(&d);
  return out;
}

namespace {

// Harmful first, then relevant, then cosmetic; the verdict from the harmful ones.
void Conclude(ConfounderReport& r) {
  std::stable_sort(r.differences.begin(), r.differences.end(),
                   [](const Difference& x, const Difference& y) {
                     return static_cast<int>(x.what.severity) < static_cast<int>(y.what.severity);
                   });
  const std::vector<const Difference*> harmful = r.harmful();
  r.comparable = harmful.empty();
  if (r.comparable) {
    r.verdict = "comparable";
    if (!r.unchecked.empty()) r.verdict += " in what could be checked";
  } else {
    r.verdict = "not comparable because of ";
    for (size_t i = 0; i < harmful.size(); ++i)
      r.verdict += (i ? ", " : "") + harmful[i]->what.label + " (" + harmful[i]->a + " vs " +
                   harmful[i]->b + ")";
  }
}

}  // namespace

ConfounderReport FindConfounders(const RunDescription& a, const RunDescription& b) {
  ConfounderReport r;
  std::set<std::string> keys;
  for (const auto& [key, value] : a.settings) keys.insert(key);
  for (const auto& [key, value] : b.settings) keys.insert(key);
  if (!a.has_metadata) r.unchecked.push_back(NoMetadata(a, "A"));
  if (!b.has_metadata) r.unchecked.push_back(NoMetadata(b, "B"));
  const bool both_simulated = a.simulated.value_or(false) && b.simulated.value_or(false);
  for (const std::string& key : keys) {
    // The simulator's own knobs mean nothing for a measured side.
    if (StartsWith(key, "sim.") && !both_simulated) continue;
    // One pipeline size's setting matters where both sides ran that size.
    if (const std::optional<int> pp = PipelineSizeOf(key);
        pp && !a.pp_sizes.empty() && !b.pp_sizes.empty() &&
        (!a.pp_sizes.count(*pp) || !b.pp_sizes.count(*pp)))
      continue;
    auto value = [&](const RunDescription& d) -> std::optional<std::string> {
      auto it = d.settings.find(key);
      if (it != d.settings.end()) return it->second;
      if (d.has_metadata && AbsentMeansUnset(key)) return std::string(kUnset);
      return std::nullopt;
    };
    const std::optional<std::string> va = value(a), vb = value(b);
    if (!va || !vb) {
      // A side without metadata is summed up once above.
      const RunDescription& missing = !va ? a : b;
      if (!missing.has_metadata) continue;
      const char* side = !va ? "A" : "B";
      const bool sim = missing.simulated.value_or(false);
      r.unchecked.push_back(fmt::format("{}: recorded by {} only ('{}'); {} {}", key,
                                        !va ? "B" : "A", va ? *va : *vb, Name(missing, side),
                                        sim ? "is simulated and has none" : "did not record it"));
      continue;
    }
    if (*va == *vb) continue;
    r.differences.push_back({key, ClassifySetting(key), *va, *vb});
  }
  Conclude(r);
  return r;
}

void AddDifference(ConfounderReport& r, const std::string& key, const std::string& a,
                   const std::string& b) {
  r.differences.push_back({key, ClassifySetting(key), a, b});
  Conclude(r);
}

}  // namespace ppsearch::compare
