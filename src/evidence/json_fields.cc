#include "evidence/json_fields.h"

#include <limits>

#include "util/excerpt.h"
#include "util/json_text.h"

namespace ppsearch::evidence {

JsonFields::JsonFields(const nlohmann::json& j, std::string where, std::string prefix)
    : j_(j), where_(std::move(where)), prefix_(std::move(prefix)) {}

const nlohmann::json* JsonFields::Find(const char* key) const {
  if (!j_.is_object()) return nullptr;
  const auto it = j_.find(key);
  return it == j_.end() || it->is_null() ? nullptr : &*it;
}

Error JsonFields::Wrong(const std::string& key, const std::string& expected,
                        const nlohmann::json* got) const {
  std::string message =
      (where_.empty() ? "" : where_ + ": ") + "key '" + prefix_ + key + "' must be " + expected;
  if (got != nullptr) message += ", got " + Excerpt(JsonText(*got));
  return MakeError(message);
}

namespace {

// `key`'s value into *out when `fits` takes it; absent or null leaves *out.
template <typename T, typename Fits>
Status ReadAs(const JsonFields& r, const char* key, const char* expected, Fits fits, T* out) {
  const nlohmann::json* v = r.Find(key);
  if (v == nullptr) return Status::Ok();
  if (!fits(*v)) return r.Wrong(key, expected, v);
  *out = v->get<T>();
  return Status::Ok();
}

// An integer that `T` holds.
template <typename T>
bool FitsInteger(const nlohmann::json& v) {
  if (v.is_number_unsigned())
    return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  return v.is_number_integer() && v.get<int64_t>() >= std::numeric_limits<T>::min() &&
         v.get<int64_t>() <= std::numeric_limits<T>::max();
}

}  // namespace

Status JsonFields::Number(const char* key, double* out) const {
  return ReadAs(
      *this, key, "a number", [](const nlohmann::json& v) { return v.is_number(); }, out);
}

Status JsonFields::Int(const char* key, int* out) const {
  return ReadAs(*this, key, "an integer", FitsInteger<int>, out);
}

Status JsonFields::Require(const char* key, const char* expected) const {
  if (Has(key)) return Status::Ok();
  return Wrong(key, expected);
}

Status JsonFields::Int64(const char* key, int64_t* out) const {
  return ReadAs(*this, key, "an integer", FitsInteger<int64_t>, out);
}

Status JsonFields::Uint64(const char* key, uint64_t* out) const {
  return ReadAs(
      *this, key, "an integer of at least 0",
      [](const nlohmann::json& v) { return v.is_number_unsigned(); }, out);
}

Status JsonFields::Bool(const char* key, bool* out) const {
  return ReadAs(
      *this, key, "true or false", [](const nlohmann::json& v) { return v.is_boolean(); }, out);
}

Status JsonFields::String(const char* key, std::string* out) const {
  return ReadAs(
      *this, key, "a string", [](const nlohmann::json& v) { return v.is_string(); }, out);
}

Status JsonFields::Strings(const char* key, std::vector<std::string>* out) const {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  bool ok = v->is_array();
  for (size_t i = 0; ok && i < v->size(); ++i) ok = (*v)[i].is_string();
  if (!ok) return Wrong(key, "an array of strings", v);
  for (const auto& s : *v) out->push_back(s.get<std::string>());
  return Status::Ok();
}

Status JsonFields::Object(const char* key, const char* expected, nlohmann::json* out) const {
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_object()) return Wrong(key, expected, v);
  *out = *v;
  return Status::Ok();
}

Result<JsonFields> JsonFields::Fields(const char* key) const {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return JsonFields(kEmpty, where_, prefix_ + key + ".");
  if (!v->is_object()) return Wrong(key, "an object", v);
  return JsonFields(*v, where_, prefix_ + key + ".");
}

Result<std::vector<JsonFields>> JsonFields::FieldsOfEach(const char* key) const {
  std::vector<JsonFields> out;
  const nlohmann::json* v = Find(key);
  if (v == nullptr) return out;
  bool ok = v->is_array();
  for (size_t i = 0; ok && i < v->size(); ++i) ok = (*v)[i].is_object();
  if (!ok) return Wrong(key, "an array of objects", v);
  for (size_t i = 0; i < v->size(); ++i)
    out.emplace_back((*v)[i], where_, prefix_ + key + "[" + std::to_string(i) + "].");
  return out;
}

}  // namespace ppsearch::evidence
