#include "report/layout_json.h"

namespace ppsearch::report {

nlohmann::json LayoutJson(const spec::LayoutSpec& l) {
  if (l.disaggregated())
    return {{"prefill", LayoutJson(l.prefill())},
            {"decode", LayoutJson(l.decode())},
            {"label", l.Label()}};
  return {{"pp", l.pp},        {"tp", l.tp}, {"ep", l.ep}, {"dp", l.dp}, {"instances", l.instances},
          {"label", l.Label()}};
}

}  // namespace ppsearch::report
