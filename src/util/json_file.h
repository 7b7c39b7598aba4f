#pragma once
// A JSON file read whole and parsed, with the error naming the file.

#include <nlohmann/json.hpp>
#include <string>

#include "util/files.h"
#include "util/result.h"

namespace ppsearch {

inline Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  PPS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return MakeError(path + ": not valid JSON: " + e.what());
  }
}

}  // namespace ppsearch
