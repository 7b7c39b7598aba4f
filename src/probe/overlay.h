#pragma once
// The probe's figures as a hardware profile overlay: a profile file whose
// `base` is the spec's profile and whose keys are the measured ones, each
// with a comment saying how it was measured. Every command that takes a
// profile takes it (cluster.hardware = "file.toml"). Pure text.

#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "probe/figures.h"

namespace ppsearch::probe {

struct Provenance {
  std::string command;     // the probe's command line as given, quoted for a shell
  std::string date_utc;    // "2026-12-05T19:40:00Z"
  std::string version;     // ppsearch's version and git sha
  std::string model_name;  // whose GEMM shapes were timed
  int64_t tokens = 0;      // rows of those GEMMs
};

// The overlay named `name` (its file's stem) on `base` (written as `base_ref`:
// the shipped profile's name, or a path). Keys the probe did not measure are
// left to the base; a figure measured on the CPU is written with a comment
// saying it is not a GPU's.
std::string OverlayToml(const std::string& name, const std::string& base_ref,
                        const hardware::HardwareProfile& base, const ProbeFigures& figures,
                        const std::vector<NodeResult>& nodes, const Provenance& provenance);

}  // namespace ppsearch::probe
