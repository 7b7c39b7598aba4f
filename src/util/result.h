#pragma once
// Returned errors. Expected failures (bad spec, unreachable host, malformed
// input) travel as values so callers decide; exceptions are for bugs.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ppsearch {

// What kind of failure an Error is; cli/ alone maps kinds to exit codes
// (README.md, "Exit codes"), so a failure exits the same from every command.
enum class ErrorKind {
  kConfig,       // the user's input: spec, config, profile, arguments, a run directory in use
  kIo,           // the machine: a file or directory that cannot be written
  kIncomplete,   // a sweep with samples missing
  kNoQualifier,  // no layout meets the decision policy
  kInternal,     // a bug
};

// A user-facing failure. `message` is a complete sentence that names what was
// wrong and where (file:line:col, key, host) and, where possible, what to do.
struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kConfig;
};

inline Error MakeError(std::string message, ErrorKind kind = ErrorKind::kConfig) {
  return Error{std::move(message), kind};
}
inline Error IoError(std::string message) { return MakeError(std::move(message), ErrorKind::kIo); }

// Either a value or an Error; a small stand-in for std::expected (not in g++ 12).
template <typename T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : data_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<T>(data_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(data_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(data_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(data_);
  }

 private:
  std::variant<T, Error> data_;
};

// Result for operations with no value.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design
  static Status Ok() { return Status(); }

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(!ok());
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace ppsearch

// Propagates an error from an expression returning Status or Result<T>.
#define PPS_RETURN_IF_ERROR(expr)                      \
  do {                                                 \
    auto pps_status_ = (expr);                         \
    if (!pps_status_.ok()) return pps_status_.error(); \
  } while (0)

#define PPS_CONCAT_INNER(a, b) a##b
#define PPS_CONCAT(a, b) PPS_CONCAT_INNER(a, b)
// Declares `lhs` from a Result<T> expression or returns its error.
#define PPS_ASSIGN_OR_RETURN(lhs, expr) \
  PPS_ASSIGN_OR_RETURN_IMPL(PPS_CONCAT(pps_result_, __LINE__), lhs, expr)
#define PPS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.error();              \
  lhs = std::move(tmp).value()
