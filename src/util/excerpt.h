#pragma once
// How an error message quotes a user's input: in part when it is long.

#include <cstddef>
#include <string>
#include <string_view>

namespace ppsearch {

// The most of a user's input an error message quotes.
inline constexpr size_t kExcerptBytes = 80;

// `text` as an error message quotes it: whole when it has at most `max_bytes`,
// else its first `max_bytes` (cut back to a UTF-8 character boundary) and
// "... (N bytes)". A value pasted by mistake (a whole file in a spec key, a
// megabyte CSV cell) then gives a message a person can read.
std::string Excerpt(std::string_view text, size_t max_bytes = kExcerptBytes);

}  // namespace ppsearch
