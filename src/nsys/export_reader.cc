#include "nsys/export_reader.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace ppsearch::nsys {
namespace {

constexpr int64_t kTidBits = 0x1000000;  // global ids: thread id in the low 24 bits

// One prepared statement, finalized on every path.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) {
    prepared_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) == SQLITE_OK;
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return prepared_; }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  void BindText(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), -1, SQLITE_TRANSIENT);
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool Null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(t));
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  bool prepared_ = false;
};

}  // namespace

Result<std::unique_ptr<ExportReader>> ExportReader::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return MakeError(path +
                     ": no such file (expected an Nsight Systems SQLite export, from "
                     "`nsys export --type sqlite`)");
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<ExportReader> reader(new ExportReader(path, db));
  if (rc != SQLITE_OK) return reader->SqlError("cannot open");
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

Result<bool> ExportReader::HasTable(const std::string& table) const {
  Statement q(db_, "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?");
  if (!q.ok()) return SqlError("reading the table list");
  q.BindText(1, table);
  const int rc = q.Step();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqlError("reading the table list");
  return rc == SQLITE_ROW;
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
  Statement q(db_, "SELECT id, name FROM TARGET_INFO_GPU");
  if (!q.ok()) return SqlError("reading TARGET_INFO_GPU");
  while (q.Step() == SQLITE_ROW) names[static_cast<int>(q.Int(0))] = q.Text(1);
  return names;
}

Result<std::vector<NvtxRange>> ExportReader::NvtxRanges() const {
  std::vector<NvtxRange> ranges;
  PPS_ASSIGN_OR_RETURN(bool has, HasTable("NVTX_EVENTS"));
  if (!has) return ranges;
  PPS_RETURN_IF_ERROR(
      RequireColumns("NVTX_EVENTS", {"start", "end", "eventType", "text", "textId", "globalTid"}));
  Statement q(db_,
              "SELECT n.start, n.end, COALESCE(n.text, s.value, ''), n.globalTid "
              "FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON s.id = n.textId "
              "WHERE n.eventType IN (59, 60) AND n.end IS NOT NULL AND n.end > n.start "
              "ORDER BY n.start");
  if (!q.ok()) return SqlError("reading NVTX_EVENTS");
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    NvtxRange r;
    r.span = {q.Int(0), q.Int(1)};
    r.text = q.Text(2);
    if (!q.Null(3)) r.global_pid = q.Int(3) - q.Int(3) % kTidBits;
    ranges.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return SqlError("reading NVTX_EVENTS");
  return ranges;
}

Result<std::map<int64_t, std::vector<int>>> ExportReader::ProcessDevices() const {
  std::map<int64_t, std::vector<int>> out;
  Statement q(db_, std::string("SELECT DISTINCT globalPid, deviceId FROM ") + kKernelTable +
                       " WHERE globalPid IS NOT NULL");
  if (!q.ok()) return SqlError(std::string("reading ") + kKernelTable);
  while (q.Step() == SQLITE_ROW) out[q.Int(0)].push_back(static_cast<int>(q.Int(1)));
  for (auto& [pid, devices] : out) std::sort(devices.begin(), devices.end());
  return out;
}

Result<std::unordered_map<int64_t, Collective>> ExportReader::CommunicationNames() const {
  std::string where;
  for (const char* part : kCommunicationNameParts)
    where += std::string(where.empty() ? "" : " OR ") + "value LIKE '%" + part + "%'";
  Statement q(db_, "SELECT id, value FROM StringIds WHERE " + where);
  if (!q.ok()) return SqlError("reading StringIds");
  std::unordered_map<int64_t, Collective> out;
  while (q.Step() == SQLITE_ROW)
    if (auto kind = ClassifyKernel(q.Text(1))) out.emplace(q.Int(0), *kind);
  return out;
}

Result<int64_t> ExportReader::ForEachKernel(
    const std::function<bool(const KernelRow&)>& on_row) const {
  PPS_ASSIGN_OR_RETURN(const auto comm, CommunicationNames());
  Statement q(db_, std::string("SELECT deviceId, start, end, shortName, demangledName, globalPid "
                               "FROM ") +
                       kKernelTable + " ORDER BY deviceId, start");
  if (!q.ok()) return SqlError(std::string("reading ") + kKernelTable);
  auto kind_of = [&comm](int64_t id) -> std::optional<Collective> {
    auto it = comm.find(id);
    return it == comm.end() ? std::nullopt : std::optional<Collective>(it->second);
  };
  int64_t rows = 0;
  int rc;
  KernelRow row;
  while ((rc = q.Step()) == SQLITE_ROW) {
    ++rows;
    row.device_id = static_cast<int>(q.Int(0));
    row.kernel.span = {q.Int(1), q.Int(2)};
    row.kernel.collective = kind_of(q.Int(3));
    if (!row.kernel.collective) row.kernel.collective = kind_of(q.Int(4));
    row.global_pid = q.Null(5) ? -1 : q.Int(5);
    if (!on_row(row)) return rows;
  }
  if (rc != SQLITE_DONE) return SqlError(std::string("reading ") + kKernelTable);
  return rows;
}

}  // namespace ppsearch::nsys
