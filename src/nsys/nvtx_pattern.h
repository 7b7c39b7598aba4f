#pragma once
// The user's NVTX pattern (`--window nvtx:REGEX`, the spec's profile.window),
// compiled with RE2: matching takes time linear in the text and uses no
// recursion, so neither a pattern such as (a+)+$ nor an NVTX text of any
// length can stall or overflow the stack, as std::regex's backtracking could.
// RE2 syntax is Perl's without backreferences and lookaround.

#include <memory>
#include <string>
#include <string_view>

#include "util/result.h"

namespace re2 {
class RE2;
}

namespace ppsearch::nsys {

class NvtxPattern {
 public:
  // `pattern` as RE2 compiles it; the error names `origin` (how the user gave
  // it, e.g. "--window 'nvtx:(a'") and RE2's message.
  static Result<NvtxPattern> Compile(const std::string& pattern, const std::string& origin);
  NvtxPattern() = default;

  // Whether the pattern occurs anywhere in `text` (a search, not a full match).
  // An empty pattern (default-constructed) matches nothing.
  bool Search(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_;  // shared: WindowChoice is copied by value
};

}  // namespace ppsearch::nsys
