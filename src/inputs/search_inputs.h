#pragma once
// The one way in: a search's inputs (the spec with its --set overrides, the
// model config it names, the hardware profile with the spec's attention
// backend applied, and the plan of every layout), loaded the same way by
// every command, the run analysis, the backtest, the benchmarks and the
// tests. No command-line parsing and no exit codes here: errors are returned.

#include <optional>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "model/model.h"
#include "plan/disaggregation.h"
#include "plan/plan.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::inputs {

struct SearchInputs {
  spec::Spec spec;
  model::ModelDesc model;
  hardware::HardwareProfile hardware;
  plan::Plan plan;  // planned after the selection below was applied; no deployment's
  // A disaggregated spec's deployment (its sweep's one layout), both pools
  // planned; loaded only where asked for (Deployments::kPlan).
  std::optional<plan::DisaggregatedPlan> deployment{};

  // The planned layout with this PP/TP/EP, or nullptr.
  const plan::LayoutPlan* Find(const spec::LayoutSpec& layout) const;
};

// What loading does with a disaggregated spec: refuse it (plan::
// DisaggregatedRefusal: the command does not understand one), or plan its
// deployment into SearchInputs::deployment.
enum class Deployments { kRefuse, kPlan };

struct InputsOptions {
  std::string spec_path;
  std::vector<std::string> overrides;  // "key.path=value", in command-line order
  // Narrow the search: only these layouts (the spec's own entry when one of
  // its layouts matches, so messages point into the file), these levels.
  std::vector<spec::LayoutSpec> layouts;
  std::vector<int> concurrency;
  Deployments deployments = Deployments::kRefuse;
};

// Reads the spec, then LoadSearchInputs(spec, ...).
Result<SearchInputs> LoadSearchInputs(const InputsOptions& options);
// The spec file as it is, every layout and level.
Result<SearchInputs> LoadSpecFileInputs(const std::string& spec_path);
// For a spec already in hand (a run's recorded spec, a backtest case).
Result<SearchInputs> LoadSearchInputs(spec::Spec spec,
                                      const std::vector<spec::LayoutSpec>& layouts = {},
                                      const std::vector<int>& concurrency = {},
                                      Deployments deployments = Deployments::kRefuse);

// What `plan` and `validate` load for a disaggregated spec: the spec, its
// model and hardware (as LoadSearchInputs loads them) and both pools' plan.
struct DisaggregatedInputs {
  spec::Spec spec;
  model::ModelDesc model;
  hardware::HardwareProfile hardware;
  plan::DisaggregatedPlan plan;
};
// nullopt when the spec at `path` is not disaggregated.
Result<std::optional<DisaggregatedInputs>> LoadDisaggregatedInputs(
    const std::string& path, const std::vector<std::string>& overrides);

// The model config a spec names, alone (what a run's description records of
// it when the hardware profile no longer matters).
Result<model::ModelDesc> LoadSpecModel(const spec::Spec& spec);

// The model config and hardware profile a spec names, and the export its
// [profile] file names, each error kept: what `validate` lists all at once.
// Empty when all load.
std::vector<Error> InputErrors(const spec::Spec& spec);

// The export a spec's [profile] file names, checked before a run starts
// rather than after its first sample: a regular file that begins as an
// SQLite database does. Ok when the spec names none.
Status CheckProfileExport(const spec::ProfileSpec& profile);

}  // namespace ppsearch::inputs
