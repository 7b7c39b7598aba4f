#pragma once
// Where a value came from in a user's file, so errors can point at it.

#include <string>

namespace ppsearch {

struct SourceLoc {
  std::string file;  // path as the user gave it
  int line = 0;      // 1-based; 0 when unknown
  int col = 0;       // 1-based; 0 when unknown
  std::string key;   // dotted key path, e.g. "sweep.layouts[2].tp"

  // "file:line:col" (or less when parts are unknown); the compiler convention
  // that editors and terminals turn into links. Built by appending: g++ 12 at
  // -O3 reports a false -Werror=restrict on `":" + std::to_string(n)`.
  std::string Position() const {
    std::string out = file;
    if (line > 0) {
      out += ':';
      out += std::to_string(line);
      if (col > 0) {
        out += ':';
        out += std::to_string(col);
      }
    }
    return out;
  }
  // "file:line:col: key 'x'" prefix for messages.
  std::string Where() const {
    std::string out = Position();
    if (!key.empty()) {
      out += out.empty() ? "key '" : ": key '";
      out += key;
      out += '\'';
    }
    return out;
  }
};

}  // namespace ppsearch
