#pragma once
// Writes SQLite files with the tables and columns of an Nsight Systems
// 2024.6.2 export (schema 3.16.1, see export_reader.h), for tests and the
// benchmark: known kernels, NVTX ranges and GPUs in, a file `ppsearch nsys`
// reads as it reads a real export.

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "util/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ppsearch::nsys {

class TestExportWriter {
 public:
  // The export's NOT NULL constraints, or none, as in a hand-made or foreign
  // file where any cell may be NULL.
  enum class Constraints { kAsNsys, kNone };
  // Creates (replacing) `path` with the export's tables; rows go in one transaction.
  static Result<std::unique_ptr<TestExportWriter>> Create(
      const std::string& path, bool with_nvtx_table = true,
      Constraints constraints = Constraints::kAsNsys);
  ~TestExportWriter();
  TestExportWriter(const TestExportWriter&) = delete;
  TestExportWriter& operator=(const TestExportWriter&) = delete;

  void AddGpu(int device_id, const std::string& name);
  // A kernel on `device_id`; `pid` is the launching process (global pid = pid << 24).
  // `demangled_name` ("": the short name) goes in demangledName.
  void AddKernel(int device_id, int stream_id, int64_t start_ns, int64_t end_ns,
                 const std::string& short_name, int64_t pid = 1,
                 const std::string& demangled_name = "");
  // A push/pop range on process `pid`'s thread `tid`. Registered strings
  // go through StringIds (textId), others in `text`, as nsys writes them.
  void AddNvtxRange(int64_t start_ns, int64_t end_ns, const std::string& text, int64_t pid = 1,
                    bool registered = false, int event_type = 59, int64_t tid = 7);
  // Runs `sql` in the writer's transaction: rows no profiler writes (text in
  // an integer column, NULLs, overflowing or reversed spans) for the reader's
  // checks, e.g. "INSERT INTO NVTX_EVENTS (start, end, eventType) VALUES (5, 1, 59)".
  void AddSql(const std::string& sql);
  // Commits; the writer is done.
  Status Close();

 private:
  TestExportWriter(sqlite3* db) : db_(db) {}
  int64_t StringId(const std::string& value);
  Status Exec(const std::string& sql);

  sqlite3* db_;
  sqlite3_stmt* kernel_ = nullptr;
  sqlite3_stmt* nvtx_ = nullptr;
  sqlite3_stmt* string_ = nullptr;
  std::map<std::string, int64_t> string_ids_;
  int64_t next_correlation_ = 1;
  std::string error_;
};

}  // namespace ppsearch::nsys
