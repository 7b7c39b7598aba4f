#include "nsys/export_testing.h"

#include <sqlite3.h>

#include <filesystem>
#include <memory>

namespace ppsearch::nsys {
namespace {

// The 2024.6.2 export's definitions of the tables `ppsearch nsys` reads.
constexpr const char* kSchema = R"sql(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
  busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER,
  memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT,
  luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT,
  revision INTEGER, nodeMask INTEGER, constantMemory INTEGER, maxIPC INTEGER,
  maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER,
  maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER,
  asyncEngines INTEGER, maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER,
  maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, maxBlockDimY INTEGER, maxBlockDimZ INTEGER,
  maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER, computeMajor INTEGER,
  computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
  staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
  sharedMemoryLimitConfig INTEGER);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(34,'NvtxMark','NvtxMark');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(59,'NvtxPushPopRange','NvtxPushPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(60,'NvtxStartEndRange','NvtxStartEndRange');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','2024.6.2.225');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION','3.16.1');
)sql";

constexpr const char* kNvtxSchema = R"sql(
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
  rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
  endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
  int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
  floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
)sql";

constexpr int64_t kPidShift = 0x1000000;

std::string WithoutNotNull(std::string sql) {
  const std::string not_null = " NOT NULL";
  for (size_t at; (at = sql.find(not_null)) != std::string::npos;) sql.erase(at, not_null.size());
  return sql;
}

}  // namespace

Result<std::unique_ptr<TestExportWriter>> TestExportWriter::Create(const std::string& path,
                                                                   bool with_nvtx_table,
                                                                   Constraints constraints) {
  auto schema = [constraints](const char* sql) {
    return constraints == Constraints::kAsNsys ? std::string(sql) : WithoutNotNull(sql);
  };
  std::error_code ec;
  std::filesystem::remove(path, ec);
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return MakeError(path + ": cannot create");
  }
  std::unique_ptr<TestExportWriter> w(new TestExportWriter(db));
  PPS_RETURN_IF_ERROR(w->Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"));
  PPS_RETURN_IF_ERROR(w->Exec(schema(kSchema)));
  if (with_nvtx_table) PPS_RETURN_IF_ERROR(w->Exec(schema(kNvtxSchema)));
  PPS_RETURN_IF_ERROR(w->Exec("BEGIN"));
  sqlite3_prepare_v2(db,
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
                     "streamId, correlationId, globalPid, demangledName, shortName, "
                     "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                     "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                     "localMemoryTotal, gridId) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, 32, 1, 1, 1, "
                     "128, 1, 1, 0, 0, 0, 0, ?)",
                     -1, &w->kernel_, nullptr);
  if (with_nvtx_table)
    sqlite3_prepare_v2(db,
                       "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) "
                       "VALUES (?, ?, ?, ?, ?, ?)",
                       -1, &w->nvtx_, nullptr);
  sqlite3_prepare_v2(db, "INSERT INTO StringIds (id, value) VALUES (?, ?)", -1, &w->string_,
                     nullptr);
  return w;
}

TestExportWriter::~TestExportWriter() {
  sqlite3_finalize(kernel_);
  sqlite3_finalize(nvtx_);
  sqlite3_finalize(string_);
  sqlite3_close(db_);
}

Status TestExportWriter::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK) return Status::Ok();
  std::string message = err != nullptr ? err : "unknown";
  sqlite3_free(err);
  return MakeError("test export: " + message);
}

int64_t TestExportWriter::StringId(const std::string& value) {
  auto [it, added] = string_ids_.emplace(value, static_cast<int64_t>(string_ids_.size()) + 1);
  if (added) {
    sqlite3_bind_int64(string_, 1, it->second);
    sqlite3_bind_text(string_, 2, value.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(string_) != SQLITE_DONE) error_ = sqlite3_errmsg(db_);
    sqlite3_reset(string_);
  }
  return it->second;
}

void TestExportWriter::AddGpu(int device_id, const std::string& name) {
  Status s = Exec("INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, " +
                  std::to_string(device_id) + ", '" + name + "')");
  if (!s.ok()) error_ = s.error().message;
}

void TestExportWriter::AddKernel(int device_id, int stream_id, int64_t start_ns, int64_t end_ns,
                                 const std::string& short_name, int64_t pid,
                                 const std::string& demangled_name) {
  const int64_t name = StringId(short_name);
  const int64_t demangled = demangled_name.empty() ? name : StringId(demangled_name);
  const int64_t correlation = next_correlation_++;
  sqlite3_bind_int64(kernel_, 1, start_ns);
  sqlite3_bind_int64(kernel_, 2, end_ns);
  sqlite3_bind_int(kernel_, 3, device_id);
  sqlite3_bind_int(kernel_, 4, stream_id);
  sqlite3_bind_int64(kernel_, 5, correlation);
  sqlite3_bind_int64(kernel_, 6, pid * kPidShift);
  sqlite3_bind_int64(kernel_, 7, demangled);  // demangledName
  sqlite3_bind_int64(kernel_, 8, name);       // shortName
  sqlite3_bind_int64(kernel_, 9, correlation);
  if (sqlite3_step(kernel_) != SQLITE_DONE) error_ = sqlite3_errmsg(db_);
  sqlite3_reset(kernel_);
}

void TestExportWriter::AddNvtxRange(int64_t start_ns, int64_t end_ns, const std::string& text,
                                    int64_t pid, bool registered, int event_type, int64_t tid) {
  sqlite3_bind_int64(nvtx_, 1, start_ns);
  sqlite3_bind_int64(nvtx_, 2, end_ns);
  sqlite3_bind_int(nvtx_, 3, event_type);
  if (registered) {
    sqlite3_bind_null(nvtx_, 4);
    sqlite3_bind_int64(nvtx_, 6, StringId(text));
  } else {
    sqlite3_bind_text(nvtx_, 4, text.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_null(nvtx_, 6);
  }
  sqlite3_bind_int64(nvtx_, 5, pid * kPidShift + tid);
  if (sqlite3_step(nvtx_) != SQLITE_DONE) error_ = sqlite3_errmsg(db_);
  sqlite3_reset(nvtx_);
}

void TestExportWriter::AddSql(const std::string& sql) {
  Status s = Exec(sql);
  if (!s.ok()) error_ = s.error().message;
}

Status TestExportWriter::Close() {
  if (!error_.empty()) return MakeError("test export: " + error_);
  return Exec("COMMIT");
}

}  // namespace ppsearch::nsys
