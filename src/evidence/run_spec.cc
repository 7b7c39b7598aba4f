#include "evidence/run_spec.h"

#include "spec/spec_parser.h"
#include "util/files.h"

namespace ppsearch::evidence {

Result<spec::Spec> ReadRunSpec(const RunPaths& paths, const RunMetadata& m) {
  const std::string spec_file = paths.spec_toml();
  Result<std::string> text = ReadEvidenceFile(spec_file);
  if (!text.ok())
    return MakeError(paths.root +
                     ": not a complete run directory: metadata/spec.toml is missing (" +
                     text.error().message + ")");
  // Its messages name the copy (their lines are the copy's, and the
  // original may have changed or moved); its relative paths resolve as
  // they did in the run, against the original's directory.
  const std::string spec_path = m.spec_path.empty() ? spec_file : m.spec_path;
  Result<spec::Spec> spec = spec::ParseSpecAs(*text, spec_file, spec_path, m.overrides);
  if (!spec.ok())
    return MakeError(spec_file + " (the run's copy of " + spec_path + "): " + spec.error().message);
  return spec;
}

}  // namespace ppsearch::evidence
