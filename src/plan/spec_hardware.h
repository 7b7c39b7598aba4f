#pragma once
// The hardware profile a spec runs on: its [cluster] hardware, with the
// attention rate of the backend its [engine.args] select. Every command that
// plans or predicts a spec loads the profile through this, so a spec's
// attention backend means the same in plan, simulate, run, report and
// backtest.

#include "hardware/hardware.h"
#include "spec/spec.h"
#include "util/result.h"

namespace ppsearch::plan {

Result<hardware::HardwareProfile> LoadSpecHardware(const spec::Spec& spec);

}  // namespace ppsearch::plan
