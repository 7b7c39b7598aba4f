#pragma once
// Nsight Systems evidence of a sample ([profile] in the spec): the `nsys
// profile` words around a real server, the commands each node runs after the
// server stops (export to SQLite, then `ppsearch nsys` on the node, whose JSON
// comes back over the launcher). An export the spec names is analysed for any
// engine, run/profile_evidence.h.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "launch/launcher.h"
#include "plan/plan.h"
#include "run/sample_engine.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::sglang {

// The node's report path without extension: <output_dir>/<sample>-<host>.
std::string NsysReportBase(const spec::Spec& spec, const evidence::SampleId& sample, int node);

// `nsys profile` with the options SGLang's profiling guide gives for a server
// (--trace-fork-before-exec=true, --cuda-graph-trace=node), CUDA and NVTX
// traced, the report at `report_base`.nsys-rep, overwritten on a rerun.
std::vector<std::string> NsysProfileWords(const spec::ProfileSpec& profile,
                                          const std::string& report_base);

// What a node runs once its profiled server has exited: the SQLite export,
// then the analysis printed as JSON (and kept beside the export).
std::vector<std::string> NsysExportArgv(const spec::ProfileSpec& profile,
                                        const std::string& report_base);
std::vector<std::string> NsysAnalyseArgv(const spec::Spec& spec, const plan::LayoutPlan& plan,
                                         const std::string& report_base);

// Runs both on every node; a node whose export or analysis fails gets an
// evidence entry with "error" naming the command and its output.
std::vector<run::ProfileEvidence> CollectNsysProfiles(launch::Launcher& launcher,
                                                      const spec::Spec& spec,
                                                      const plan::LayoutPlan& plan,
                                                      const evidence::SampleId& server_sample);

}  // namespace ppsearch::sglang
