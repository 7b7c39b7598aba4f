#pragma once
// `ppsearch run SPEC --slurm-submit`: a job script that runs the whole search
// inside one Slurm allocation of the spec's hosts (the slurm launcher then
// starts one srun step per node), submitted with sbatch.

#include <string>

#include "run/runner.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::cli {

// The job script's text for the run `run_id`. Every value is shell-quoted.
std::string SlurmJobScript(const spec::Spec& spec, const run::RunOptions& options,
                           const std::string& engine, const std::string& run_id,
                           const std::string& ppsearch_bin);

// Writes <results_dir>/<run_id>.sbatch and submits it; returns what to tell
// the user (sbatch's answer and where the run directory will be).
Result<std::string> SubmitSlurmJob(const spec::Spec& spec, const run::RunOptions& options,
                                   const std::string& engine);

}  // namespace ppsearch::cli
