#pragma once
// --fault-plan FILE --fault-key KEY: one file of faults for a whole sweep, so
// a test can inject a fault into one node of one sample. Each line is
//
//   KEY --fault-flag [value] ...     # comment
//
// (blank lines and `#` comments skipped). The line whose first word equals
// KEY gives its fault flags as if they were on the command line; no such
// line: no fault. Pure: the caller reads the file.

#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::serve_sim {

struct FaultPlanLine {
  int line = 0;                    // 1-based, for messages
  std::vector<std::string> words;  // the flags and values after the key
};

// The matching line, or an empty one (line 0) when no line matches. Errors
// read "FILE:LINE: what", e.g. a word after the key that is neither a
// --fault-* flag nor the value of one, or the same key on two lines.
Result<FaultPlanLine> FindFaultPlanLine(const std::string& text, const std::string& file,
                                        const std::string& key);

}  // namespace ppsearch::serve_sim
