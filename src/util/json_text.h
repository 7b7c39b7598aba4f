#pragma once
// JSON text of values that may hold bytes read from evidence (server logs,
// error strings, request records): invalid UTF-8 becomes U+FFFD instead of
// nlohmann::json throwing type_error 316 halfway through a report.

#include <nlohmann/json.hpp>
#include <string>

namespace ppsearch {

inline std::string JsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

inline std::string JsonText(const nlohmann::ordered_json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false,
                nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace ppsearch
