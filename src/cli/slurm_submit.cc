#include "cli/slurm_submit.h"

#include <filesystem>

#include "launch/process.h"
#include "run/redact.h"
#include "sglang/commands.h"
#include "util/files.h"

namespace ppsearch::cli {

std::string SlurmJobScript(const spec::Spec& spec, const run::RunOptions& o,
                           const std::string& engine, const std::string& run_id,
                           const std::string& ppsearch_bin) {
  using launch::ShellJoin;
  using launch::ShellQuote;
  const auto& slurm = spec.cluster.slurm;
  std::string hosts;
  for (const auto& h : spec.cluster.hosts) hosts += (hosts.empty() ? "" : ",") + h.name;
  const std::string out_file = spec.experiment.results_dir + "/" + run_id + ".sbatch.out";
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" + ShellQuote("ppsearch-" + spec.experiment.name) + "\n";
  s += "#SBATCH --nodes=" + std::to_string(spec.cluster.hosts.size()) + "\n";
  s += "#SBATCH --ntasks-per-node=1\n#SBATCH --exclusive\n";
  s += "#SBATCH --nodelist=" + hosts + "\n";
  s += "#SBATCH --output=" + ShellQuote(out_file) + "\n";
  if (!slurm.partition.empty()) s += "#SBATCH --partition=" + ShellQuote(slurm.partition) + "\n";
  if (!slurm.account.empty()) s += "#SBATCH --account=" + ShellQuote(slurm.account) + "\n";
  if (!slurm.time_limit.empty()) s += "#SBATCH --time=" + ShellQuote(slurm.time_limit) + "\n";
  for (const auto& a : slurm.sbatch_args) s += "#SBATCH " + a + "\n";
  s += "# Written by ppsearch run --slurm-submit: the whole search runs from the first node.\n";
  s += "set -euo pipefail\n";
  std::vector<std::string> argv = {
      ppsearch_bin, "run", std::filesystem::absolute(o.spec_path).lexically_normal().string()};
  for (const auto& v : o.overrides) argv.insert(argv.end(), {"--set", v});
  argv.insert(argv.end(), {"--engine", engine, "--run-id", run_id});
  s += "exec " + ShellJoin(argv) + "\n";
  return s;
}

Result<std::string> SubmitSlurmJob(const spec::Spec& spec, const run::RunOptions& o,
                                   const std::string& engine) {
  if (spec.cluster.launcher != "slurm")
    return MakeError("--slurm-submit needs cluster.launcher = \"slurm\" (the spec says \"" +
                     spec.cluster.launcher + "\")");
  const run::Redactor redact(spec);
  for (const auto& v : o.overrides)
    if (redact.Apply(v) != v)
      return MakeError(
          "--slurm-submit would write the secret given with --set into the job script; put it "
          "in the spec's [engine.env] (the job reads the spec) instead");
  std::string run_id = o.run_id;
  if (run_id.empty()) {
    run_id =
        std::filesystem::path(run::NewRunDir(spec.experiment.results_dir, spec.experiment.name))
            .filename()
            .string();
  }
  const std::string bin = sglang::SelfExecutable();
  const std::string path = spec.experiment.results_dir + "/" + run_id + ".sbatch";
  PPS_RETURN_IF_ERROR(WriteFileAtomic(path, SlurmJobScript(spec, o, engine, run_id, bin)));
  PPS_ASSIGN_OR_RETURN(launch::Captured c, launch::RunCaptured({"sbatch", path}, 60));
  if (!c.exit.ok())
    return IoError("sbatch " + path + " " + c.exit.Describe() + ": " +
                   c.err.substr(0, c.err.find('\n')));
  return c.out + "job script: " + path + "\nrun directory: " + spec.experiment.results_dir + "/" +
         run_id + "\n";
}

}  // namespace ppsearch::cli
