#pragma once
// The small, named set of physical parameters ppsearch fits to a measured
// run. Everything else comes from the hardware profile and the model.

#include <string>

#include "util/result.h"

namespace ppsearch::cost {

struct Calibration {
  // Multiplies every compute rate (GEMMs, attention): the profile's sustained
  // rates are large-GEMM figures; real kernels in a serving engine reach less.
  double compute_scale = 1.0;
  // Effective NIC bandwidth per GPU for traffic between nodes, GB/s; 0 keeps
  // the profile's value.
  double inter_gbps_per_gpu = 0;
  // Multiplies the profile's intra-node collective bandwidths.
  double intra_bw_scale = 1.0;
  // Host time per scheduler loop iteration that launches a batch, microseconds.
  double host_overhead_us = 2000;
  std::string source = "defaults";  // where these values came from

  static Calibration Defaults() { return Calibration(); }
};

Result<Calibration> LoadCalibration(const std::string& path);
Status SaveCalibration(const Calibration& calibration, const std::string& path,
                       const std::string& extra_json_fields = "");

}  // namespace ppsearch::cost
