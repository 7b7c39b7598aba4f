#include "launch/launcher.h"

namespace ppsearch::launch {

std::string ServerRecord::Describe() const {
  if (launcher == "slurm") return "Slurm step '" + tag + "' on " + host;
  return "pid " + std::to_string(pid) + " on " + host;
}

}  // namespace ppsearch::launch
