#pragma once
// One JSON object's fields read into typed values, each checked for its
// type. An absent or null key leaves its value as it was (older files lack
// keys later versions add); a key of another type is an error naming where
// (the file, its line), the key and what it must be. The readers of
// evidence/'s JSON files share it, so their errors read alike:
//   "bench/pp4-tp8-ep4_c8_r1.json: key 'ttft_s.p50' must be a number, got "fast""

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::evidence {

class JsonFields {
 public:
  // `where`: what errors begin with ("file:line"; "" for none). `prefix`:
  // the keys leading to `j` in its file ("ttft_s.", "instances[1].").
  // `j` must outlive the reader.
  JsonFields(const nlohmann::json& j, std::string where, std::string prefix = "");

  // `key`'s value when present and not null.
  const nlohmann::json* Find(const char* key) const;
  bool Has(const char* key) const { return Find(key) != nullptr; }
  // Ok when `key` is present; else Wrong(key, expected): for the keys a
  // format cannot do without (the readers above leave an absent key as is).
  Status Require(const char* key, const char* expected) const;

  Status Number(const char* key, double* out) const;
  Status Int(const char* key, int* out) const;
  Status Int64(const char* key, int64_t* out) const;
  Status Uint64(const char* key, uint64_t* out) const;
  Status Bool(const char* key, bool* out) const;
  Status String(const char* key, std::string* out) const;
  Status Strings(const char* key, std::vector<std::string>* out) const;
  // `key`'s object whole; `expected` says what it holds ("an object
  // (parameter name -> value)").
  Status Object(const char* key, const char* expected, nlohmann::json* out) const;

  // `key`'s object, to read its fields; errors then name "key.field". An
  // absent key reads as an empty object.
  Result<JsonFields> Fields(const char* key) const;
  // `key`'s array of objects, one reader each ("key[i].field").
  Result<std::vector<JsonFields>> FieldsOfEach(const char* key) const;

  // "<where>: key '<prefix><key>' must be <expected>", with ", got <value>"
  // when `got` is given.
  Error Wrong(const std::string& key, const std::string& expected,
              const nlohmann::json* got = nullptr) const;

 private:
  const nlohmann::json& j_;
  std::string where_, prefix_;
};

}  // namespace ppsearch::evidence
