#pragma once
// What `ppsearch run` settles before it starts anything: which spec (the
// given one, or a resumed run's recorded copy with its recorded --set
// values), which engine, whether the run is adaptive, which calibration,
// and whether the spec's layouts can run at all. Nothing is started and
// nothing is written; cli/cmd_run.cc then builds the launcher and the
// engine and hands the result to RunSamples.

#include <optional>
#include <string>
#include <vector>

#include "evidence/run_metadata.h"
#include "inputs/search_inputs.h"
#include "util/result.h"

namespace ppsearch::run {

// The command line's request.
struct RunRequest {
  std::string spec_path;               // "" with resume_dir
  std::vector<std::string> overrides;  // --set
  std::string engine;                  // --engine; "" = from the spec (or the resumed run)
  std::string resume_dir;              // --resume; "" for a new run
  std::string run_id;                  // --run-id
  std::string run_id_env;              // $RUN_ID, used when --run-id is not given
  std::string calibration;             // --calibration
  bool adaptive = false;               // --adaptive
};

struct PreparedRun {
  inputs::SearchInputs inputs;
  // For RunOptions: the spec as recorded (a resumed run's own), the run's
  // name ("" for a generated one, and always for a resume).
  std::string spec_path;
  std::vector<std::string> overrides;
  std::string run_id;
  std::string resume_dir;
  // "sim", "sglang" or "replay:PATH" (a resumed replay's path absolute, as recorded).
  std::string engine_kind;
  bool adaptive = false;
  std::string calibration;  // the file to load ("" for none): a resume's own copy wins
  // A new run's model config and hardware profile files, hashed now (for
  // run.json's `inputs`); empty for a resume, whose recorded ones were
  // checked unchanged.
  std::vector<evidence::RunInput> input_records;
  // Why the run cannot start, one line each (invalid or unmodelled layouts,
  // an adaptive run's preconditions); empty when it can.
  std::vector<std::string> refusals;
};

// Errors are about the request itself: a resume asked to change what it
// runs (another engine, spec, --set or --run-id; --adaptive on a full run),
// a run id that cannot name a directory, a spec that does not load.
Result<PreparedRun> PrepareRun(const RunRequest& request);

// The engine the user asked for, else the one the spec implies: a spec that
// names a launcher for an SGLang engine means a real run.
std::string ChooseEngine(const std::string& asked, const spec::Spec& spec);

}  // namespace ppsearch::run
