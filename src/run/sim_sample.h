#pragma once
// The simulated engine behind `ppsearch run --engine sim`: each sample is a
// prediction (predict::PredictSearchPoint, as the search predicts its points) turned into the
// evidence a real sample leaves: per-request records stretched by a seeded per-repeat noise factor,
// server logs in SGLang's format per node, and nvidia-smi snapshots per node from the memory model.
// Failures listed in the spec's [sim] inject table are injected into the matching sample.

#include "cost/calibration.h"
#include "hardware/hardware.h"
#include "inputs/search_inputs.h"
#include "model/model.h"
#include "run/sample_engine.h"
#include "spec/spec.h"

namespace ppsearch::run {

class SimSampleEngine : public SampleEngine {
 public:
  // `inputs` outlives the engine; a sample's plan is one of its layouts.
  SimSampleEngine(const inputs::SearchInputs& inputs, const cost::Calibration& calibration)
      : inputs_(inputs),
        spec_(inputs.spec),
        model_(inputs.model),
        hw_(inputs.hardware),
        calibration_(calibration) {}

  const char* kind() const override { return "sim"; }
  bool simulated() const override { return true; }
  Result<SampleOutput> Run(const SampleContext& context) override;

  // The repeat's throughput factor: lognormal with mean 1 and the spec's
  // coefficient of variation, seeded by (sim.seed, sample id).
  static double NoiseFactor(const spec::SimSpec& sim, const evidence::SampleId& id);

 private:
  const inputs::SearchInputs& inputs_;
  const spec::Spec& spec_;
  const model::ModelDesc& model_;
  const hardware::HardwareProfile& hw_;
  cost::Calibration calibration_;
};

}  // namespace ppsearch::run
