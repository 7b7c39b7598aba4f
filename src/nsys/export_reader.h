#pragma once
// Reading an Nsight Systems SQLite export (`nsys export --type sqlite`) at
// the edge: prepared statements that stream rows, never a table in memory.
//
// Schema followed: Nsight Systems 2024.6.2 (META_DATA_EXPORT
// EXPORT_SCHEMA_VERSION 3.16.1), from its `.schema` dump and the SQLite
// Schema Reference of the Nsight Systems Analysis Guide. Columns read:
//   CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamId, globalPid,
//     shortName, demangledName)   names are StringIds(id) references
//   StringIds(id, value)
//   NVTX_EVENTS(start, end, eventType, text, textId, globalTid)   eventType
//     59 NvtxPushPopRange, 60 NvtxStartEndRange (ENUM_NSYS_EVENT_TYPE); text
//     holds an unregistered string, textId a registered one
//   TARGET_INFO_GPU(id, name), META_DATA_EXPORT(name, value)   optional
// Timestamps are nanoseconds on the session's one timeline, so NVTX ranges
// (CPU) and kernels (GPU) compare directly. Serialized global ids keep the
// process id in bits 24..47 (the exporter's own recipes compute
// globalTid / 0x1000000 % 0x1000000), so a thread's process is its id with
// the low 24 bits cleared.
//
// Every cell used is checked against this schema as it streams past
// (export_rows.h): a broken cell fails the read, naming table, row and
// column; a row that spans no time in order is skipped and counted.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "nsys/export_rows.h"
#include "nsys/window_analysis.h"
#include "util/result.h"

struct sqlite3;

namespace ppsearch::nsys {

inline constexpr const char* kKernelTable = "CUPTI_ACTIVITY_KIND_KERNEL";
inline constexpr const char* kNvtxTable = "NVTX_EVENTS";
inline constexpr const char* kStringTable = "StringIds";
// The largest export opened: a sanity bound, not a memory one (rows stream).
// Minutes of tracing a busy server export to a few GiB; a file past this is
// most likely not an export, or a profile to shorten before analysing.
inline constexpr int64_t kMaxExportBytes = int64_t{64} << 30;

struct NvtxRange {
  Interval span;
  std::string text;
  int64_t global_pid = -1;  // the range's process, -1 when the export does not say
};

// What a scan read: every row, and those it skipped, by reason.
struct RowScan {
  int64_t rows = 0;  // rows read, skipped ones included
  std::vector<SkippedRows> skipped;
};

struct KernelRow {
  int device_id = 0;
  int64_t global_pid = -1;
  Kernel kernel;
};

class ExportReader {
 public:
  // Opens `path` read-only and checks it is a regular file of at most
  // kMaxExportBytes, and an export with a kernel table and StringIds. Every
  // table read, here or later, must be a plain table (not a view).
  static Result<std::unique_ptr<ExportReader>> Open(const std::string& path);
  ~ExportReader();
  ExportReader(const ExportReader&) = delete;
  ExportReader& operator=(const ExportReader&) = delete;

  const std::string& path() const { return path_; }
  // META_DATA_EXPORT's EXPORT_PRODUCT_VERSION / EXPORT_SCHEMA_VERSION, "" when absent.
  const std::string& product_version() const { return product_version_; }
  const std::string& schema_version() const { return schema_version_; }
  // TARGET_INFO_GPU: device id -> name (empty when the table is absent).
  Result<std::map<int, std::string>> GpuNames() const;
  // NVTX ranges (push/pop and start/end) with a positive duration, by start,
  // streamed; none when the export has no NVTX_EVENTS table. Ranges that end
  // before they start or never end are skipped and counted.
  Result<RowScan> ForEachNvtxRange(const std::function<void(NvtxRange&&)>& on_range) const;
  // Whether the kernel table holds a row (one row read, whatever its size).
  Result<bool> HasKernelRows() const;
  // Each process's GPUs, from the kernels it launched.
  Result<std::map<int64_t, std::vector<int>>> ProcessDevices() const;
  // Every kernel, ordered by device then start; `on_row` returning false
  // stops. Kernels that end before they start are skipped and counted.
  Result<RowScan> ForEachKernel(const std::function<bool(const KernelRow&)>& on_row) const;

 private:
  ExportReader(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  // Whether `table` exists; an error when the name is a view, a virtual
  // table or anything else but a plain table.
  Result<bool> HasTable(const std::string& table) const;
  Status RequireColumns(const std::string& table, const std::vector<std::string>& columns) const;
  // StringIds ids whose text names a communication kernel, with its kind.
  Result<std::unordered_map<int64_t, Collective>> CommunicationNames() const;
  Error SqlError(const std::string& what) const;

  std::string path_;
  sqlite3* db_;
  std::string product_version_, schema_version_;
};

}  // namespace ppsearch::nsys
