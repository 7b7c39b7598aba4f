#include "nsys/nvtx_pattern.h"

#include <re2/re2.h>

namespace ppsearch::nsys {

Result<NvtxPattern> NvtxPattern::Compile(const std::string& pattern, const std::string& origin) {
  RE2::Options options;
  options.set_log_errors(false);  // the error is returned, library code does not print
  auto re = std::make_shared<const re2::RE2>(pattern, options);
  if (!re->ok())
    return MakeError(origin + ": not a valid regular expression (RE2 syntax): " + re->error());
  NvtxPattern p;
  p.pattern_ = pattern;
  p.re_ = std::move(re);
  return p;
}

bool NvtxPattern::Search(std::string_view text) const {
  return re_ != nullptr && RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

}  // namespace ppsearch::nsys
