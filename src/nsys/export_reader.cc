#include "nsys/export_reader.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace ppsearch::nsys {
namespace {

constexpr int64_t kTidBits = 0x1000000;  // global ids: thread id in the low 24 bits
constexpr const char* kExpected =
    "expected an Nsight Systems SQLite export, from `nsys export --type sqlite`";

// The file itself, before SQLite sees it: SQLite would open a directory or a
// FIFO and fail or block on it with a message that names neither.
Status CheckExportFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found)
    return MakeError(path + ": no such file (" + kExpected + ")");
  if (ec) return MakeError(path + ": cannot read: " + ec.message());
  if (st.type() == fs::file_type::directory)
    return MakeError(path + ": is a directory (" + kExpected + ")");
  if (st.type() != fs::file_type::regular)
    return MakeError(path + ": not a regular file (a FIFO, socket or device; " + kExpected + ")");
  const uintmax_t bytes = fs::file_size(path, ec);
  if (ec) return MakeError(path + ": cannot read its size: " + ec.message());
  if (bytes == 0) return MakeError(path + ": empty file (" + kExpected + ")");
  if (bytes > static_cast<uintmax_t>(kMaxExportBytes))
    return MakeError(fmt::format(
        "{}: {:.1f} GiB, over the {} GiB an export may have (shorten the profile with `nsys "
        "profile --duration` or a capture range, or export one node at a time)",
        path, static_cast<double>(bytes) / (1 << 30), kMaxExportBytes >> 30));
  return Status::Ok();
}

// A span from two checked timestamps, or the reason it spans no time in order.
std::optional<std::string> Reversed(int64_t start, int64_t end) {
  if (end >= start) return std::nullopt;
  return fmt::format("start {}, end {}", start, end);
}

}  // namespace

Result<std::unique_ptr<ExportReader>> ExportReader::Open(const std::string& path) {
  PPS_RETURN_IF_ERROR(CheckExportFile(path));
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<ExportReader> reader(new ExportReader(path, db));
  if (rc != SQLITE_OK) return reader->SqlError("cannot open");
  // The file is not ours: its views and triggers may not call functions with
  // side effects (SQLite's advice for files from elsewhere).
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  // SQLite reads the header lazily: the first query tells a non-database apart.
  Result<bool> has_kernels = reader->HasTable(kKernelTable);
  if (!has_kernels.ok()) return has_kernels.error();
  if (!*has_kernels)
    return MakeError(path + ": no table " + kKernelTable +
                     ": the profile holds no CUDA kernel trace (profile with `nsys profile "
                     "--trace=cuda,nvtx`, then `nsys export --type sqlite`)");
  PPS_RETURN_IF_ERROR(reader->RequireColumns(
      kKernelTable,
      {"start", "end", "deviceId", "streamId", "globalPid", "shortName", "demangledName"}));
  // Every kernel's name is a StringIds reference: read for every kernel.
  PPS_ASSIGN_OR_RETURN(bool has_strings, reader->HasTable(kStringTable));
  if (!has_strings)
    return MakeError(path + ": no table " + kStringTable + " (the kernel and NVTX names; " +
                     kExpected + ")");
  PPS_ASSIGN_OR_RETURN(bool has_meta, reader->HasTable("META_DATA_EXPORT"));
  if (has_meta) {
    Statement q(db,
                "SELECT name, value FROM META_DATA_EXPORT WHERE name IN "
                "('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')");
    if (!q.ok()) return reader->SqlError("reading META_DATA_EXPORT");
    while (q.Step() == SQLITE_ROW) {
      const std::string name = q.Text(0);
      if (name == "EXPORT_SCHEMA_VERSION") reader->schema_version_ = q.Text(1);
      if (name == "EXPORT_PRODUCT_VERSION") reader->product_version_ = q.Text(1);
    }
  }
  return reader;
}

ExportReader::~ExportReader() { sqlite3_close(db_); }

Error ExportReader::SqlError(const std::string& what) const {
  const int code = db_ != nullptr ? sqlite3_errcode(db_) : SQLITE_CANTOPEN;
  if (code == SQLITE_NOTADB)
    return MakeError(path_ +
                     ": not an SQLite database (expected an Nsight Systems export: "
                     "`nsys export --type sqlite PROFILE.nsys-rep`)");
  const char* msg = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
  return MakeError(path_ + ": " + what + ": " + msg);
}

// Only a plain table is read. A view (or a virtual table) under a table's
// name runs its own query each time it is read, and that query may never end
// (a recursive CTE), with SQLite's sorter filling the temporary directory as
// it orders the rows; a plain table's rows are bounded by the file, which
// CheckExportFile bounds. So no limit on temporary space is needed: a real
// export of millions of kernels needs that space to sort them.
Result<bool> ExportReader::HasTable(const std::string& table) const {
  // Names are case-insensitive in SQLite: a view `stringids` answers for StringIds.
  Statement q(db_, "SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE");
  if (!q.ok()) return SqlError("reading the table list");
  q.BindText(1, table);
  const int rc = q.Step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqlError("reading the table list");
  if (rc == SQLITE_DONE) return false;
  const std::string type = q.Text(0);
  const bool is_virtual = q.Text(1).rfind("CREATE VIRTUAL TABLE", 0) == 0;
  if (type == "table" && !is_virtual) return true;
  return MakeError(fmt::format(
      "{}: {} is {}, not a table: an Nsight Systems export holds its rows in plain tables, and "
      "a view or virtual table runs a query of its own each time it is read (one that may never "
      "end); refusing to read it ({})",
      path_, table, is_virtual ? "a virtual table" : "a " + type, kExpected));
}

Status ExportReader::RequireColumns(const std::string& table,
                                    const std::vector<std::string>& columns) const {
  Statement q(db_, "SELECT name FROM pragma_table_info(?)");
  if (!q.ok()) return SqlError("reading the columns of " + table);
  q.BindText(1, table);
  std::set<std::string> have;
  while (q.Step() == SQLITE_ROW) have.insert(q.Text(0));
  for (const std::string& c : columns)
    if (have.count(c) == 0)
      return MakeError(path_ + ": table " + table + " has no column '" + c +
                       "' (expected the Nsight Systems 2024.6 export schema)");
  return Status::Ok();
}

Result<std::map<int, std::string>> ExportReader::GpuNames() const {
  std::map<int, std::string> names;
  PPS_ASSIGN_OR_RETURN(bool has, HasTable("TARGET_INFO_GPU"));
  if (!has) return names;
  const std::string table = "TARGET_INFO_GPU";
  Statement q(db_, "SELECT rowid, id, name FROM " + table);
  if (!q.ok()) return SqlError("reading " + table);
  const RowCells cells(path_, table, q, 0);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    PPS_ASSIGN_OR_RETURN(int id, cells.DeviceId(1, "id"));
    names[id] = q.Text(2);
  }
  if (rc != SQLITE_DONE) return SqlError("reading " + table);
  return names;
}

Result<RowScan> ExportReader::ForEachNvtxRange(
    const std::function<void(NvtxRange&&)>& on_range) const {
  RowScan scan;
  const std::string table = kNvtxTable;
  PPS_ASSIGN_OR_RETURN(bool has, HasTable(table));
  if (!has) return scan;
  PPS_RETURN_IF_ERROR(
      RequireColumns(table, {"start", "end", "eventType", "text", "textId", "globalTid"}));
  // Rows of another event type are not ranges; one whose type is no integer
  // is read so that the check below names it.
  Statement q(db_,
              "SELECT n.rowid, n.start, n.end, n.eventType, n.text, n.textId, s.value, "
              "n.globalTid FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId "
              "WHERE n.eventType IN (59, 60) OR typeof(n.eventType) != 'integer' "
              "ORDER BY n.start");
  if (!q.ok()) return SqlError("reading " + table);
  const RowCells cells(path_, table, q, 0);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    ++scan.rows;
    PPS_ASSIGN_OR_RETURN(int64_t start, cells.Timestamp(1, "start"));
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> end, cells.OptionalTimestamp(2, "end"));
    PPS_RETURN_IF_ERROR(cells.Integer(3, "eventType", false));
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> text_id, cells.Integer(5, "textId", true));
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> tid, cells.Integer(7, "globalTid", true));
    NvtxRange r;
    if (!q.Null(4)) {
      r.text = q.Text(4);
    } else if (text_id) {
      if (q.Null(6))
        return cells.Problem("textId",
                             fmt::format("is {}, which names no StringIds row", *text_id));
      r.text = q.Text(6);
    }
    if (!end) {
      CountSkipped(scan.skipped, table, "no end: the range never ended", cells.row_id(),
                   fmt::format("start {}", start));
      continue;
    }
    if (auto reversed = Reversed(start, *end)) {
      CountSkipped(scan.skipped, table, "end before start", cells.row_id(), *reversed);
      continue;
    }
    if (*end == start) continue;  // an empty range: no window to measure
    r.span = {start, *end};
    if (tid) r.global_pid = *tid - *tid % kTidBits;
    on_range(std::move(r));
  }
  if (rc != SQLITE_DONE) return SqlError("reading " + table);
  return scan;
}

Result<bool> ExportReader::HasKernelRows() const {
  Statement q(db_, std::string("SELECT 1 FROM ") + kKernelTable + " LIMIT 1");
  if (!q.ok()) return SqlError(std::string("reading ") + kKernelTable);
  const int rc = q.Step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return SqlError(std::string("reading ") + kKernelTable);
  return rc == SQLITE_ROW;
}

Result<std::map<int64_t, std::vector<int>>> ExportReader::ProcessDevices() const {
  std::map<int64_t, std::vector<int>> out;
  Statement q(db_, std::string("SELECT min(rowid), globalPid, deviceId FROM ") + kKernelTable +
                       " WHERE globalPid IS NOT NULL GROUP BY globalPid, deviceId");
  if (!q.ok()) return SqlError(std::string("reading ") + kKernelTable);
  const RowCells cells(path_, kKernelTable, q, 0);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> pid, cells.Integer(1, "globalPid", false));
    PPS_ASSIGN_OR_RETURN(int device, cells.DeviceId(2, "deviceId"));
    out[*pid].push_back(device);
  }
  if (rc != SQLITE_DONE) return SqlError(std::string("reading ") + kKernelTable);
  for (auto& [pid, devices] : out) std::sort(devices.begin(), devices.end());
  return out;
}

Result<std::unordered_map<int64_t, Collective>> ExportReader::CommunicationNames() const {
  std::string where;
  for (const char* part : kCommunicationNameParts)
    where += std::string(where.empty() ? "" : " OR ") + "value LIKE '%" + part + "%'";
  Statement q(db_, "SELECT rowid, id, value FROM StringIds WHERE " + where);
  if (!q.ok()) return SqlError("reading StringIds");
  const RowCells cells(path_, "StringIds", q, 0);
  std::unordered_map<int64_t, Collective> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> id, cells.Integer(1, "id", false));
    if (auto kind = ClassifyKernel(q.Text(2))) out.emplace(*id, *kind);
  }
  if (rc != SQLITE_DONE) return SqlError("reading StringIds");
  return out;
}

Result<RowScan> ExportReader::ForEachKernel(
    const std::function<bool(const KernelRow&)>& on_row) const {
  PPS_ASSIGN_OR_RETURN(const auto comm, CommunicationNames());
  // Compute classes by name, looked up as each kernel name id first occurs:
  // a profile's kernels have a few hundred distinct names, its StringIds
  // (API calls, NVTX texts, backtraces) can hold millions of strings.
  Statement name_q(db_, "SELECT value FROM StringIds WHERE id = ?");
  if (!name_q.ok()) return SqlError("reading StringIds");
  std::unordered_map<int64_t, ComputeClass> classes;
  Statement q(db_, std::string("SELECT rowid, deviceId, start, end, shortName, demangledName, "
                               "globalPid FROM ") +
                       kKernelTable + " ORDER BY deviceId, start");
  if (!q.ok()) return SqlError(std::string("reading ") + kKernelTable);
  auto kind_of = [&comm](int64_t id) -> std::optional<Collective> {
    auto it = comm.find(id);
    return it == comm.end() ? std::nullopt : std::optional<Collective>(it->second);
  };
  auto class_of = [&classes, &name_q](int64_t id) {
    auto it = classes.find(id);
    if (it != classes.end()) return it->second;
    name_q.BindInt64(1, id);
    // A name id with no StringIds row names nothing: "other".
    const ComputeClass c =
        name_q.Step() == SQLITE_ROW ? ClassifyComputeKernel(name_q.Text(0)) : ComputeClass::kOther;
    name_q.Reset();
    classes.emplace(id, c);
    return c;
  };
  const RowCells cells(path_, kKernelTable, q, 0);
  RowScan scan;
  int rc;
  KernelRow row;
  while ((rc = q.Step()) == SQLITE_ROW) {
    ++scan.rows;
    PPS_ASSIGN_OR_RETURN(row.device_id, cells.DeviceId(1, "deviceId"));
    PPS_ASSIGN_OR_RETURN(int64_t start, cells.Timestamp(2, "start"));
    PPS_ASSIGN_OR_RETURN(int64_t end, cells.Timestamp(3, "end"));
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> short_name, cells.Integer(4, "shortName", false));
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> long_name,
                         cells.Integer(5, "demangledName", false));
    PPS_ASSIGN_OR_RETURN(std::optional<int64_t> pid, cells.Integer(6, "globalPid", true));
    if (auto reversed = Reversed(start, end)) {
      CountSkipped(scan.skipped, kKernelTable, "end before start", cells.row_id(), *reversed);
      continue;
    }
    row.kernel.span = {start, end};
    row.kernel.collective = kind_of(*short_name);
    if (!row.kernel.collective) row.kernel.collective = kind_of(*long_name);
    // The demangled name says more (namespaces, template arguments); the
    // short one where it names nothing the rules know.
    row.kernel.compute_class = class_of(*long_name);
    if (row.kernel.compute_class == ComputeClass::kOther)
      row.kernel.compute_class = class_of(*short_name);
    row.global_pid = pid.value_or(-1);
    if (!on_row(row)) return scan;
  }
  if (rc != SQLITE_DONE) return SqlError(std::string("reading ") + kKernelTable);
  return scan;
}

}  // namespace ppsearch::nsys
