#pragma once
// probe_script.py's text, compiled into the binary (CMake writes
// probe_script.cc from the .py file), so a moved install carries it.

#include <string_view>

namespace ppsearch::probe {

std::string_view ProbeScriptText();

}  // namespace ppsearch::probe
