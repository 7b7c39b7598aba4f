#pragma once
// A layout in the JSON the commands print (simulate --json, compare --json):
// every size that tells two layouts apart, and the label the text tables
// show, so that a reader never sees two different layouts as one.

#include <nlohmann/json.hpp>

#include "spec/spec.h"

namespace ppsearch::report {

// {"pp", "tp", "ep", "dp", "instances", "label"}; a disaggregated
// deployment's as {"prefill", "decode", "label"}, each pool a layout.
nlohmann::json LayoutJson(const spec::LayoutSpec& l);

}  // namespace ppsearch::report
