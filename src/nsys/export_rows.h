#pragma once
// Reading the cells of an export's rows as the schema declares them. SQLite
// stores any value in any column, so a damaged or hand-made file can hold
// text or NULL where nsys writes an integer, or timestamps whose difference
// overflows. Every cell the analysis uses goes through a check here; nothing
// is coerced into a number.
//
// The rule (docs/tools.md, "Checks of the export"):
// - a cell that breaks the schema (NULL in a column nsys always fills, a
//   non-integer in an integer column, a timestamp beyond +-2^53 ns, a device
//   id beyond int) fails the analysis with an error naming the file, table,
//   row id, column and what was expected;
// - a row whose cells are all valid but that spans no time in order (end
//   before start; an NVTX range that never ended) is skipped and counted, and
//   the count is reported with the first such row's id.

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace ppsearch::nsys {

// Timestamps are nanoseconds from the session's start. +-2^53 ns (about 104
// days) is far beyond any profile, keeps every duration and sums of hundreds
// of them inside int64, and every value exact as a double in JSON.
inline constexpr int64_t kMaxAbsTimestampNs = int64_t{1} << 53;

// One prepared statement, finalized on every path.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql);
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return prepared_; }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  void BindText(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), -1, SQLITE_TRANSIENT);
  }
  void BindInt64(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  // Ready to step again from the first row, with new bindings.
  void Reset() { sqlite3_reset(stmt_); }
  int Type(int col) const { return sqlite3_column_type(stmt_, col); }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool Null(int col) const { return Type(col) == SQLITE_NULL; }
  // The cell's bytes, embedded NULs included; "" for NULL.
  std::string Text(int col) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  bool prepared_ = false;
};

// The checked cells of the current row of `q`, whose column `rowid_col` is
// the table's rowid. Errors read "PATH: TABLE row ROWID: column 'C' ...".
class RowCells {
 public:
  RowCells(std::string path, std::string table, const Statement& q, int rowid_col)
      : path_(std::move(path)), table_(std::move(table)), q_(q), rowid_col_(rowid_col) {}

  int64_t row_id() const { return q_.Int(rowid_col_); }
  // An integer; NULL only when `nullable`, then nullopt.
  Result<std::optional<int64_t>> Integer(int col, const char* name, bool nullable) const;
  Result<int64_t> Timestamp(int col, const char* name) const;
  // A timestamp that may be NULL (NVTX_EVENTS.end of a range that never ended).
  Result<std::optional<int64_t>> OptionalTimestamp(int col, const char* name) const;
  Result<int> DeviceId(int col, const char* name) const;
  Error Problem(const char* name, const std::string& what) const;

 private:
  std::string Shown(int col) const;  // the cell as the message shows it

  std::string path_, table_;
  const Statement& q_;
  int rowid_col_;
};

// Rows skipped for one reason in one table.
struct SkippedRows {
  std::string table;
  std::string reason;  // "end before start", ...
  int64_t rows = 0;
  int64_t first_row_id = 0;
  std::string first_row;  // the first one's cells, e.g. "start 500, end 400"

  std::string Describe() const;  // "CUPTI_ACTIVITY_KIND_KERNEL: 2 rows skipped (end before ...)"
};

// Counts a skipped row under its (table, reason).
void CountSkipped(std::vector<SkippedRows>& skipped, const std::string& table,
                  const std::string& reason, int64_t row_id, const std::string& cells);

}  // namespace ppsearch::nsys
