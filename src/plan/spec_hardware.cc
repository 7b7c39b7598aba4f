#include "plan/spec_hardware.h"

#include <string>

namespace ppsearch::plan {

Result<hardware::HardwareProfile> LoadSpecHardware(const spec::Spec& spec) {
  PPS_ASSIGN_OR_RETURN(hardware::HardwareProfile hw,
                       hardware::LoadHardwareProfile(spec.cluster.hardware));
  // SGLang's prefill runs the prefill backend when one is named.
  const std::string backend =
      spec.engine.ArgString("prefill-attention-backend")
          .value_or(spec.engine.ArgString("attention-backend").value_or(""));
  if (Status s = hardware::SelectAttentionBackend(hw, backend); !s.ok())
    return MakeError("engine.args: " + s.error().message);
  return hw;
}

}  // namespace ppsearch::plan
