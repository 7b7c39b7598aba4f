// The reader's checks of an export (export_rows.h): the file itself, cells
// that break the schema (the analysis fails, naming table, row and column)
// and rows that span no time in order (skipped, counted, reported).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cctype>
#include <filesystem>

#include "nsys/analysis_json.h"
#include "nsys/export_fixture_testing.h"
#include "util/files.h"

namespace ppsearch::nsys {
namespace {

using ::testing::ElementsAre;

constexpr auto kLoose = TestExportWriter::Constraints::kNone;

// A kernel row from SQL values, so that a cell can be text, real or NULL.
std::string KernelSql(const std::string& start, const std::string& end,
                      const std::string& device = "0", const std::string& name = "1",
                      const std::string& pid = "16777216") {
  return "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, shortName, "
         "demangledName, globalPid) VALUES (" +
         start + ", " + end + ", " + device + ", 7, " + name + ", " + name + ", " + pid + ")";
}

std::string NvtxSql(const std::string& start, const std::string& end,
                    const std::string& text = "'prefill'", const std::string& text_id = "NULL",
                    const std::string& event_type = "59") {
  return "INSERT INTO NVTX_EVENTS (start, end, eventType, text, textId, globalTid) VALUES (" +
         start + ", " + end + ", " + event_type + ", " + text + ", " + text_id + ", 16777223)";
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class ExportChecksTest : public ExportTest {
 protected:
  // An export whose one valid kernel (row 1, StringIds id 1) is followed by `sql`.
  std::string ErrorWith(const std::string& sql, const std::string& window = "forward") {
    auto w = Writer("bad.sqlite", true, kLoose);
    w->AddNvtxRange(0, 100, "prefill");
    w->AddKernel(0, 7, 0, 100, kGemm);
    w->AddSql(sql);
    EXPECT_TRUE(w->Close().ok());
    return ErrorOf(Path("bad.sqlite"), window);
  }
  std::string KernelRow2(const std::string& problem) {
    return Path("bad.sqlite") + ": CUPTI_ACTIVITY_KIND_KERNEL row 2: " + problem;
  }
};

TEST_F(ExportChecksTest, OverflowingTimestampsFail) {
  EXPECT_EQ(ErrorWith(KernelSql("-9223372036854775808", "9223372036854775807")),
            KernelRow2("column 'start' is -9223372036854775808, expected a timestamp within "
                       "+-9007199254740992 ns (+-104 days of the session's start)"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "9223372036854775807")),
            KernelRow2("column 'end' is 9223372036854775807, expected a timestamp within "
                       "+-9007199254740992 ns (+-104 days of the session's start)"));
  // The bound itself is a timestamp.
  EXPECT_EQ(ErrorWith(KernelSql("9007199254740000", "9007199254740992")), "");
}

TEST_F(ExportChecksTest, TextRealAndNullInIntegerColumnsFail) {
  EXPECT_EQ(ErrorWith(KernelSql("'12abc'", "500")),
            KernelRow2("column 'start' holds text '12abc', expected an integer timestamp (ns)"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "1.5")),
            KernelRow2("column 'end' holds real '1.5', expected an integer timestamp (ns)"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "NULL")),
            KernelRow2("column 'end' is NULL, expected an integer timestamp (ns)"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "5", "'gpu0'")),
            KernelRow2("column 'deviceId' holds text 'gpu0', expected an integer"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "5", "1099511627776")),
            KernelRow2("column 'deviceId' is 1099511627776, expected a device id from 0 to "
                       "2147483647"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "5", "0", "NULL")),
            KernelRow2("column 'shortName' is NULL, expected an integer"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "5", "0", "x'00ff'")),
            KernelRow2("column 'shortName' holds a blob of 2 bytes, expected an integer"));
  EXPECT_EQ(ErrorWith(KernelSql("0", "5", "0", "1", "'p1'")),
            KernelRow2("column 'globalPid' holds text 'p1', expected an integer"));
  // NVTX windows read each process's devices first: the same cell, the same words.
  EXPECT_EQ(ErrorWith(KernelSql("0", "5", "0", "1", "'p1'"), "nvtx:prefill"),
            KernelRow2("column 'globalPid' holds text 'p1', expected an integer"));
  EXPECT_EQ(ErrorWith("INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, 'zero', 'H200')"),
            Path("bad.sqlite") +
                ": TARGET_INFO_GPU row 1: column 'id' holds text 'zero', expected an integer");
}

TEST_F(ExportChecksTest, NvtxCellsAreCheckedToo) {
  const std::string row2 = Path("bad.sqlite") + ": NVTX_EVENTS row 2: ";
  EXPECT_EQ(ErrorWith(NvtxSql("'soon'", "50"), "nvtx:prefill"),
            row2 + "column 'start' holds text 'soon', expected an integer timestamp (ns)");
  EXPECT_EQ(ErrorWith(NvtxSql("0", "50", "NULL", "'seven'"), "nvtx:prefill"),
            row2 + "column 'textId' holds text 'seven', expected an integer");
  EXPECT_EQ(ErrorWith(NvtxSql("0", "50", "NULL", "99"), "nvtx:prefill"),
            row2 + "column 'textId' is 99, which names no StringIds row");
  EXPECT_EQ(ErrorWith(NvtxSql("0", "50", "'prefill'", "NULL", "'push'"), "nvtx:prefill"),
            row2 + "column 'eventType' holds text 'push', expected an integer");
  // Rows of other event types (34: a mark) are not ranges and not read.
  EXPECT_EQ(ErrorWith(NvtxSql("'soon'", "NULL", "'mark'", "NULL", "34"), "nvtx:prefill"), "");
}

TEST_F(ExportChecksTest, KernelsEndingBeforeTheyStartAreSkippedAndCounted) {
  auto w = Writer("reversed.sqlite");
  w->AddNvtxRange(0, 1000, "prefill");
  w->AddKernel(0, 7, 0, 400, kGemm);
  w->AddKernel(0, 8, 500, 400, kAllReduce);  // row 2: reversed
  w->AddKernel(0, 8, 400, 1000, kAllReduce);
  w->AddKernel(0, 8, 900, 10, kAllReduce);  // row 4: reversed
  ASSERT_TRUE(w->Close().ok());
  const ProfileAnalysis a = Analyze("reversed.sqlite");
  const ExportAnalysis& e = a.exports.at(0);
  EXPECT_EQ(e.kernel_rows, 4);
  ASSERT_EQ(e.skipped.size(), 1u);
  EXPECT_EQ(e.skipped[0].rows, 2);
  EXPECT_THAT(e.notes, ElementsAre(Path("reversed.sqlite") +
                                   ": CUPTI_ACTIVITY_KIND_KERNEL: 2 rows skipped (end before "
                                   "start); the first is row 2 (start 500, end 400)"));
  // The two valid kernels alone: 60% exposed.
  EXPECT_DOUBLE_EQ(a.summary.exposed_share.median, 0.6);
  const auto j = AnalysisJson(a, {});
  EXPECT_EQ(j["sources"][0]["skipped_rows"][0]["rows"], 2);
  EXPECT_EQ(j["sources"][0]["skipped_rows"][0]["first_row_id"], 2);
  EXPECT_EQ(j["notes"][0], e.notes[0]);
  EXPECT_THAT(AnalysisTable(a), ::testing::HasSubstr("# note: " + e.notes[0]));
}

TEST_F(ExportChecksTest, NvtxRangesEndingBeforeTheyStartOrNeverAreSkippedAndCounted) {
  auto w = Writer("nvtx.sqlite");
  w->AddNvtxRange(0, 1000, "prefill");
  w->AddSql(NvtxSql("3000", "2000"));
  w->AddSql(NvtxSql("4000", "NULL"));
  w->AddSql(NvtxSql("5000", "NULL"));
  w->AddKernel(0, 7, 0, 1000, kGemm);
  ASSERT_TRUE(w->Close().ok());
  const ProfileAnalysis a = Analyze("nvtx.sqlite");
  EXPECT_EQ(a.summary.windows, 1);
  const std::string p = Path("nvtx.sqlite") + ": NVTX_EVENTS: ";
  EXPECT_THAT(a.exports.at(0).notes,
              ElementsAre(p + "1 row skipped (end before start); the first is row 2 (start "
                              "3000, end 2000)",
                          p + "2 rows skipped (no end: the range never ended); the first is "
                              "row 3 (start 4000)"));
}

TEST_F(ExportChecksTest, TheFileMustBeARegularExportOfSaneSize) {
  const std::string expected =
      " (expected an Nsight Systems SQLite export, from `nsys export --type sqlite`)";
  EXPECT_EQ(ErrorOf(dir_), dir_ + ": is a directory" + expected);
  const std::string fifo = Path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(ErrorOf(fifo),
            fifo + ": not a regular file (a FIFO, socket or device; " + expected.substr(2));
  const std::string empty = Path("empty.sqlite");
  ASSERT_TRUE(WriteFileAtomic(empty, "").ok());
  EXPECT_EQ(ErrorOf(empty), empty + ": empty file" + expected);
  // A sparse file: its size without its bytes.
  const std::string huge = Path("huge.sqlite");
  ASSERT_TRUE(WriteFileAtomic(huge, "x").ok());
  std::filesystem::resize_file(huge, (uintmax_t{65} << 30));
  EXPECT_EQ(ErrorOf(huge), huge +
                               ": 65.0 GiB, over the 64 GiB an export may have (shorten the "
                               "profile with `nsys profile --duration` or a capture range, or "
                               "export one node at a time)");
}

// A view (or virtual table) under a table's name runs its own query on each
// read; over an endless recursive CTE, `ppsearch nsys` never ended and
// SQLite's sorter filled the temporary directory. Every table read must be
// a plain table. The views here are finite, so that without the check the
// analysis succeeds (the test fails) rather than hangs.
TEST_F(ExportChecksTest, AViewOrVirtualTableUnderATablesNameIsRefused) {
  auto renamed_to_view = [&](const std::string& table, const std::string& file) {
    auto w = Writer(file);
    w->AddGpu(0, "NVIDIA H200");
    w->AddNvtxRange(0, 100, "prefill");
    w->AddKernel(0, 7, 0, 100, kGemm);
    w->AddSql("ALTER TABLE " + table + " RENAME TO real_rows");
    // Lower case: SQLite's names are case-insensitive, so this answers for the table.
    w->AddSql("CREATE VIEW " + Lower(table) + " AS SELECT * FROM real_rows");
    EXPECT_TRUE(w->Close().ok());
    return ErrorOf(Path(file), "nvtx:prefill");
  };
  for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "StringIds", "NVTX_EVENTS",
                            "TARGET_INFO_GPU", "META_DATA_EXPORT"}) {
    const std::string file = std::string(table) + ".sqlite";
    // ASSERT: without the check, the endless view below would never end.
    ASSERT_THAT(renamed_to_view(table, file),
                ::testing::StartsWith(Path(file) + ": " + table +
                                      " is a view, not a table: an Nsight Systems export holds "
                                      "its rows in plain tables"))
        << table;
  }
  // The hostile case itself, bounded by the check: an endless recursive view.
  auto w = Writer("endless.sqlite");
  w->AddSql("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL");
  w->AddSql(
      "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL "
      "SELECT n + 1 FROM r) SELECT n AS start, n + 1 AS end, 0 AS deviceId, 7 AS streamId, "
      "16777216 AS globalPid, 1 AS shortName, 1 AS demangledName FROM r");
  ASSERT_TRUE(w->Close().ok());
  EXPECT_THAT(ErrorOf(Path("endless.sqlite"), "forward"),
              ::testing::HasSubstr("CUPTI_ACTIVITY_KIND_KERNEL is a view, not a table"));
  EXPECT_FALSE(CheckExportHasKernels(Path("endless.sqlite")).ok());
}

}  // namespace
}  // namespace ppsearch::nsys
