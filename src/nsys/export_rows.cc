#include "nsys/export_rows.h"

#include <fmt/format.h>

#include <limits>

namespace ppsearch::nsys {
namespace {

constexpr size_t kShownChars = 40;  // of a text cell in a message

const char* TypeName(int type) {
  switch (type) {
    case SQLITE_INTEGER:
      return "integer";
    case SQLITE_FLOAT:
      return "real";
    case SQLITE_TEXT:
      return "text";
    case SQLITE_BLOB:
      return "blob";
    default:
      return "NULL";
  }
}

}  // namespace

Statement::Statement(sqlite3* db, const std::string& sql) {
  prepared_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) == SQLITE_OK;
}

std::string Statement::Text(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_, col);
  if (t == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(t),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string RowCells::Shown(int col) const {
  const int type = q_.Type(col);
  if (type == SQLITE_NULL) return "is NULL";
  if (type == SQLITE_BLOB) return fmt::format("holds a blob of {} bytes", q_.Text(col).size());
  std::string value = q_.Text(col);
  if (value.size() > kShownChars) value = value.substr(0, kShownChars) + "...";
  if (type == SQLITE_INTEGER) return "is " + value;
  return fmt::format("holds {} '{}'", TypeName(type), value);
}

Error RowCells::Problem(const char* name, const std::string& what) const {
  return MakeError(
      fmt::format("{}: {} row {}: column '{}' {}", path_, table_, row_id(), name, what));
}

Result<std::optional<int64_t>> RowCells::Integer(int col, const char* name, bool nullable) const {
  const int type = q_.Type(col);
  if (type == SQLITE_INTEGER) return std::optional<int64_t>(q_.Int(col));
  if (type == SQLITE_NULL && nullable) return std::optional<int64_t>();
  return Problem(name, Shown(col) + ", expected an integer");
}

Result<std::optional<int64_t>> RowCells::OptionalTimestamp(int col, const char* name) const {
  const int type = q_.Type(col);
  if (type == SQLITE_NULL) return std::optional<int64_t>();
  if (type != SQLITE_INTEGER)
    return Problem(name, Shown(col) + ", expected an integer timestamp (ns)");
  const int64_t t = q_.Int(col);
  if (t < -kMaxAbsTimestampNs || t > kMaxAbsTimestampNs)
    return Problem(name, fmt::format("is {}, expected a timestamp within +-{} ns (+-104 days of "
                                     "the session's start)",
                                     t, kMaxAbsTimestampNs));
  return std::optional<int64_t>(t);
}

Result<int64_t> RowCells::Timestamp(int col, const char* name) const {
  PPS_ASSIGN_OR_RETURN(std::optional<int64_t> t, OptionalTimestamp(col, name));
  if (!t) return Problem(name, "is NULL, expected an integer timestamp (ns)");
  return *t;
}

Result<int> RowCells::DeviceId(int col, const char* name) const {
  PPS_ASSIGN_OR_RETURN(std::optional<int64_t> id, Integer(col, name, false));
  if (*id < 0 || *id > std::numeric_limits<int>::max())
    return Problem(name, fmt::format("is {}, expected a device id from 0 to {}", *id,
                                     std::numeric_limits<int>::max()));
  return static_cast<int>(*id);
}

std::string SkippedRows::Describe() const {
  return fmt::format("{}: {} row{} skipped ({}); the first is row {} ({})", table, rows,
                     rows == 1 ? "" : "s", reason, first_row_id, first_row);
}

void CountSkipped(std::vector<SkippedRows>& skipped, const std::string& table,
                  const std::string& reason, int64_t row_id, const std::string& cells) {
  for (SkippedRows& s : skipped) {
    if (s.table == table && s.reason == reason) {
      ++s.rows;
      return;
    }
  }
  skipped.push_back({table, reason, 1, row_id, cells});
}

}  // namespace ppsearch::nsys
