// libFuzzer target: `ppsearch nsys`'s reader and analysis on exports whose
// rows come from the input. Every cell of the kernel, NVTX and GPU tables is
// a plausible value, an extreme integer, NULL, text, a real or a blob; the
// NVTX texts and the window pattern are the input's too. A damaged export
// must come back as an error that names the file, or as an analysis whose
// parts add up; never a crash, a hang, or an analysis of a cell that held no
// valid value (export_rows.h's rule, checked here against what was written).

#include <fuzzer/FuzzedDataProvider.h>
#include <sqlite3.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "nsys/analysis_json.h"
#include "nsys/analyze.h"
#include "nsys/export_rows.h"
#include "util/json_text.h"

namespace {

using ppsearch::nsys::kMaxAbsTimestampNs;

void Check(bool ok) {
  if (!ok) std::abort();
}

// The columns the reader uses, with the export's types and no NOT NULL, so
// any cell can be anything.
constexpr const char* kSchema = R"sql(
PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n'),
  (2, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL'), (3, 'ncclDevKernel_SendRecv'),
  (4, 'cross_device_reduce_1stage'), (5, 'deep_ep::dispatch'), (6, 'prefill'), (7, 'decode');
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
  globalTid INTEGER, textId INTEGER);
)sql";

constexpr int64_t kPid = 0x1000000;

// One cell as bound, and whether it is an integer (its value then in `value`).
struct Cell {
  enum Kind { kInteger, kNull, kText, kReal, kBlob } kind = kNull;
  int64_t value = 0;
  bool IntegerIn(int64_t lo, int64_t hi) const {
    return kind == kInteger && value >= lo && value <= hi;
  }
  bool Timestamp() const { return IntegerIn(-kMaxAbsTimestampNs, kMaxAbsTimestampNs); }
};

// Mostly `plausible`, sometimes an extreme integer or a value of another type.
// Text never reads as a number and reals are never whole, so the column's
// INTEGER affinity keeps them as written.
Cell Draw(FuzzedDataProvider& in, sqlite3_stmt* stmt, int index, int64_t plausible) {
  static constexpr int64_t kEdges[] = {
      INT64_MIN, INT64_MAX, -kMaxAbsTimestampNs - 1, kMaxAbsTimestampNs + 1, kMaxAbsTimestampNs,
      -1,        0,         INT_MAX + int64_t{1}};
  Cell c;
  switch (in.ConsumeIntegralInRange<int>(0, 15)) {
    case 0:
      c = {Cell::kInteger, in.PickValueInArray(kEdges)};
      break;
    case 1:
      c = {Cell::kInteger, in.ConsumeIntegral<int64_t>()};
      break;
    case 2:
      c.kind = Cell::kNull;
      sqlite3_bind_null(stmt, index);
      return c;
    case 3: {
      c.kind = Cell::kText;
      const std::string t = "t" + std::to_string(in.ConsumeIntegral<uint16_t>());
      sqlite3_bind_text(stmt, index, t.c_str(), -1, SQLITE_TRANSIENT);
      return c;
    }
    case 4:
      c.kind = Cell::kReal;
      sqlite3_bind_double(stmt, index, in.ConsumeIntegral<int16_t>() + 0.5);
      return c;
    case 5:
      c.kind = Cell::kBlob;
      sqlite3_bind_blob(stmt, index, "\0\xff", 2, SQLITE_STATIC);
      return c;
    default:
      c = {Cell::kInteger, plausible};
  }
  sqlite3_bind_int64(stmt, index, c.value);
  return c;
}

// What was written, in the reader's terms.
struct Written {
  int kernels = 0;
  int reversed_kernels = 0;  // valid cells, end before start: skipped
  bool bad_kernel = false;   // a cell the reader must refuse
  bool bad_gpu = false;
  bool bad_nvtx = false;  // in a row the NVTX reader reads
};

void Step(sqlite3_stmt* stmt) {
  Check(sqlite3_step(stmt) == SQLITE_DONE);
  sqlite3_reset(stmt);
}

void AddKernel(FuzzedDataProvider& in, sqlite3_stmt* q, Written& w) {
  const int64_t t = in.ConsumeIntegralInRange<int64_t>(0, 100'000);
  const Cell start = Draw(in, q, 1, t);
  const Cell end = Draw(in, q, 2, t + in.ConsumeIntegralInRange<int64_t>(-50, 5'000));
  const Cell device = Draw(in, q, 3, in.ConsumeIntegralInRange<int64_t>(0, 3));
  sqlite3_bind_int(q, 4, 7);  // streamId: not read
  const Cell pid = Draw(in, q, 5, kPid * in.ConsumeIntegralInRange<int64_t>(1, 3));
  const Cell name = Draw(in, q, 6, in.ConsumeIntegralInRange<int64_t>(1, 7));
  const Cell short_name = Draw(in, q, 7, name.value);
  Step(q);
  ++w.kernels;
  const bool valid = start.Timestamp() && end.Timestamp() && device.IntegerIn(0, INT_MAX) &&
                     (pid.kind == Cell::kInteger || pid.kind == Cell::kNull) &&
                     name.kind == Cell::kInteger && short_name.kind == Cell::kInteger;
  if (!valid) w.bad_kernel = true;
  if (valid && end.value < start.value) ++w.reversed_kernels;
}

void AddNvtx(FuzzedDataProvider& in, sqlite3_stmt* q, Written& w) {
  const int64_t t = in.ConsumeIntegralInRange<int64_t>(0, 100'000);
  const Cell start = Draw(in, q, 1, t);
  const Cell end = Draw(in, q, 2, t + in.ConsumeIntegralInRange<int64_t>(-50, 20'000));
  static constexpr int64_t kTypes[] = {59, 60, 34};
  const Cell type = Draw(in, q, 3, in.PickValueInArray(kTypes));
  const bool registered = in.ConsumeBool();
  const std::string text = in.ConsumeRandomLengthString(256);
  if (registered) {
    sqlite3_bind_null(q, 4);
  } else {
    sqlite3_bind_text(q, 4, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  const Cell tid = Draw(in, q, 5, kPid * in.ConsumeIntegralInRange<int64_t>(1, 4) + 7);
  const Cell text_id = registered ? Draw(in, q, 6, in.ConsumeIntegralInRange<int64_t>(6, 8))
                                  : (sqlite3_bind_null(q, 6), Cell{});
  Step(q);
  const bool read = type.kind != Cell::kInteger || type.value == 59 || type.value == 60;
  const bool valid = start.Timestamp() && (end.kind == Cell::kNull || end.Timestamp()) &&
                     (tid.kind == Cell::kInteger || tid.kind == Cell::kNull) &&
                     (text_id.kind == Cell::kNull || text_id.IntegerIn(1, 7)) &&
                     type.kind == Cell::kInteger;
  if (read && !valid) w.bad_nvtx = true;
}

void AddGpu(FuzzedDataProvider& in, sqlite3_stmt* q, Written& w) {
  const Cell id = Draw(in, q, 1, in.ConsumeIntegralInRange<int64_t>(0, 3));
  sqlite3_bind_text(q, 2, "NVIDIA H200", -1, SQLITE_STATIC);
  Step(q);
  if (!id.IntegerIn(0, INT_MAX)) w.bad_gpu = true;
}

Written WriteExport(FuzzedDataProvider& in, const std::string& path) {
  std::filesystem::remove(path);
  sqlite3* db = nullptr;
  Check(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  Check(sqlite3_exec(db, kSchema, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  sqlite3_stmt *kernel = nullptr, *nvtx = nullptr, *gpu = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, "
                     "globalPid, demangledName, shortName) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     -1, &kernel, nullptr);
  sqlite3_prepare_v2(db,
                     "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     -1, &nvtx, nullptr);
  sqlite3_prepare_v2(db, "INSERT INTO TARGET_INFO_GPU (id, name) VALUES (?, ?)", -1, &gpu, nullptr);
  Written w;
  for (int row = 0; row < 300 && in.remaining_bytes() > 0; ++row) {
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
      case 0:
        AddGpu(in, gpu, w);
        break;
      case 1:
      case 2:
      case 3:
        AddNvtx(in, nvtx, w);
        break;
      default:
        AddKernel(in, kernel, w);
    }
  }
  sqlite3_finalize(kernel);
  sqlite3_finalize(nvtx);
  sqlite3_finalize(gpu);
  Check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  return w;
}

// An analysis that succeeded: each window's four parts add up to it.
void CheckAnalysis(const ppsearch::nsys::ProfileAnalysis& a) {
  for (const auto& e : a.exports)
    for (const auto& g : e.gpus)
      for (const auto& b : g.windows) {
        Check(b.exposed_ns >= 0 && b.overlapped_ns >= 0 && b.compute_only_ns >= 0 &&
              b.idle_ns >= 0);
        Check(b.exposed_ns + b.overlapped_ns + b.compute_only_ns + b.idle_ns == b.duration_ns());
      }
  // As `ppsearch nsys` writes it: names that are not UTF-8 become U+FFFD.
  (void)ppsearch::JsonText(ppsearch::nsys::AnalysisJson(a, {}));
  (void)ppsearch::nsys::AnalysisTable(a);
}

// The refusal of an export that gives no figure: no kernel, or no window.
bool NoFigure(const std::string& message) {
  return message.find(" is empty: ") != std::string::npos ||
         message.find(": no window (") != std::string::npos;
}

const std::string& ScratchPath() {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("nsys_fuzz_" + std::to_string(::getpid())))
          .string() +
      ".sqlite";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ppsearch::nsys;
  FuzzedDataProvider in(data, size);
  const std::string pattern = in.ConsumeRandomLengthString(64);
  const int64_t gap_us = in.ConsumeIntegralInRange<int64_t>(-1, 2'000);
  const std::string& path = ScratchPath();
  const Written w = WriteExport(in, path);

  ppsearch::Result<WindowChoice> forward = ParseWindowChoice("forward", gap_us);
  Check(forward.ok() == (gap_us >= 1));
  if (forward.ok()) {
    ppsearch::Result<ProfileAnalysis> a = AnalyzeProfiles({path}, *forward);
    // In forward windows only kernel and GPU cells are read: the answer is
    // known, but for an export in which no kernel formed a window, which is
    // refused for having no figure to give.
    if (w.bad_kernel || w.bad_gpu || w.kernels == 0) Check(!a.ok());
    if (!a.ok() && !(w.bad_kernel || w.bad_gpu)) Check(NoFigure(a.error().message));
    if (a.ok()) {
      CheckAnalysis(*a);
      const ExportAnalysis& e = a->exports.at(0);
      Check(e.kernel_rows == w.kernels);
      int64_t skipped = 0;
      for (const SkippedRows& s : e.skipped) skipped += s.rows;
      Check(skipped == w.reversed_kernels);
    } else {
      Check(a.error().message.rfind(path + ": ", 0) == 0);
    }
  }

  ppsearch::Result<WindowChoice> nvtx = ParseWindowChoice("nvtx:" + pattern, 1000);
  if (!nvtx.ok()) {
    Check(pattern.empty() || nvtx.error().message.rfind("--window 'nvtx:", 0) == 0);
    return 0;
  }
  ppsearch::Result<ProfileAnalysis> a = AnalyzeProfiles({path}, *nvtx);
  if (w.bad_kernel || w.bad_gpu || w.bad_nvtx || w.kernels == 0) Check(!a.ok());
  if (a.ok()) CheckAnalysis(*a);
  if (!a.ok()) Check(a.error().message.rfind(path + ": ", 0) == 0);
  return 0;
}
