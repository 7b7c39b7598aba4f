#include "util/safe_name.h"

namespace ppsearch {

bool IsSafeName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameBytes) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  // A leading '-' reads as an option, a leading '.' as a hidden file or "..".
  if (!alnum(name.front())) return false;
  for (char c : name)
    if (!alnum(c) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

std::string SafeNameRule(size_t max_bytes) {
  return "letters, digits, '.', '_' or '-', starting with a letter or digit, at most " +
         std::to_string(max_bytes) + " characters";
}

}  // namespace ppsearch
