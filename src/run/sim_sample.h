#pragma once
// The simulated engine behind `ppsearch run --engine sim`: each sample is a
// prediction (src/predict) turned into the evidence a real sample leaves:
// per-request records stretched by a seeded per-repeat noise factor, server
// logs in SGLang's format per node, and nvidia-smi snapshots per node from
// the memory model. Failures listed in the spec's [sim] inject table are
// injected into the matching sample.

#include "cost/calibration.h"
#include "hardware/hardware.h"
#include "model/model.h"
#include "run/sample_engine.h"
#include "spec/spec.h"

namespace ppsearch::run {

class SimSampleEngine : public SampleEngine {
 public:
  SimSampleEngine(const spec::Spec& spec, const model::ModelDesc& model,
                  const hardware::HardwareProfile& hw, const cost::Calibration& calibration)
      : spec_(spec), model_(model), hw_(hw), calibration_(calibration) {}

  const char* kind() const override { return "sim"; }
  bool simulated() const override { return true; }
  Result<SampleOutput> Run(const SampleContext& context) override;

  // The repeat's throughput factor: lognormal with mean 1 and the spec's
  // coefficient of variation, seeded by (sim.seed, sample id).
  static double NoiseFactor(const spec::SimSpec& sim, const evidence::SampleId& id);

 private:
  const spec::Spec& spec_;
  const model::ModelDesc& model_;
  const hardware::HardwareProfile& hw_;
  cost::Calibration calibration_;
};

}  // namespace ppsearch::run
