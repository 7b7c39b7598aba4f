#pragma once
// A JSON file read whole and parsed, with the error naming the file.

#include <nlohmann/json.hpp>
#include <string>

#include "util/excerpt.h"
#include "util/files.h"
#include "util/result.h"

namespace ppsearch {

inline Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // The parser's message quotes the token it stopped in, which can be most of the file.
    return MakeError(path + ": not valid JSON: " + Excerpt(e.what(), 3 * kExcerptBytes));
  }
}

}  // namespace ppsearch
