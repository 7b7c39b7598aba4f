#pragma once
// The exact commands a sample runs on a real cluster: one SGLang launch per
// node (inside the container image when the spec names one) and the
// benchmark client. Dry runs print them; every run records them.

#include <string>
#include <vector>

#include "evidence/evidence.h"
#include "spec/spec.h"

namespace ppsearch::run {

constexpr int kServerPort = 30000;
constexpr int kDistInitPort = 5000;

// `python3 -m sglang.launch_server ...` for node `node` of the layout.
std::string LaunchCommand(const spec::Spec& spec, const spec::LayoutSpec& layout, int node);

// `ppsearch bench ...` against node 0 for the sample.
std::string BenchCommand(const spec::Spec& spec, const evidence::SampleId& sample, uint64_t seed);

// Every command of a sample, one per line, prefixed with the host.
std::vector<std::string> SampleCommands(const spec::Spec& spec, const evidence::SampleId& sample,
                                        uint64_t seed);

// The seed of a sample's workload: the spec's seed, varied per repeat so
// repeats never share prompts.
uint64_t SampleSeed(const spec::Spec& spec, const evidence::SampleId& sample);

}  // namespace ppsearch::run
