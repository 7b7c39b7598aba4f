// Evidence that cannot be true, end to end: each damage makes its sample
// invalid with a named problem (verdict invalid_evidence), shows in every
// output with its reason, and never becomes a number in a table, a median
// or the decision. And a run directory that cannot be written is still
// reported.

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "evidence/evidence.h"
#include "evidence/validation.h"
#include "report/build_report.h"
#include "report/run_dir_testing.h"
#include "util/csv.h"
#include "util/files.h"

namespace ppsearch::report {
namespace {

namespace fs = std::filesystem;
using testing::kPp4;
using testing::kPp8;
using testing::Strings;

const evidence::SampleId kDamaged{kPp8, 8, 1};  // the sample each test damages

class EvidenceChecksTest : public testing::RunDirTest {
 protected:
  evidence::RunPaths paths() const { return evidence::RunPaths{dir_}; }

  // BuildReport on the healthy run after `damage`; the damaged sample's
  // summary.json entry.
  nlohmann::json Report() {
    Result<ReportOutcome> out = BuildReport(dir_);
    EXPECT_TRUE(out.ok()) << out.error().message;
    if (!out.ok()) return nlohmann::json::object();
    outcome_ = *out;
    for (const nlohmann::json& s : out->summary["checks"]["samples"])
      if (s["sample"] == kDamaged.str()) return s;
    ADD_FAILURE() << "no sample " << kDamaged.str();
    return nlohmann::json::object();
  }

  std::vector<std::string> Kinds(const nlohmann::json& sample) {
    std::vector<std::string> out;
    for (const nlohmann::json& p : sample["invalid_evidence"]) out.push_back(p["kind"]);
    return out;
  }

  // The damaged sample is invalid, measured nothing, and PP8 at C=8 is
  // the median of its other repeat alone; the layout is excluded by name.
  void ExpectInvalid(const nlohmann::json& sample, const std::string& problem_start) {
    EXPECT_EQ(sample["verdict"], "invalid_evidence");
    EXPECT_FALSE(sample["valid"].get<bool>());
    EXPECT_TRUE(sample["input_tps"].is_null());
    EXPECT_TRUE(sample["peak_gpu_mib"].is_null());
    bool named = false;
    for (const std::string& p : Strings(sample["problems"]))
      named |= p.rfind(problem_start, 0) == 0;
    EXPECT_TRUE(named) << sample["problems"].dump(1) << "\nexpected one starting " << problem_start;

    Result<CsvTable> results = ReadCsv(dir_ + "/results.csv");
    ASSERT_TRUE(results.ok());
    for (size_t r = 0; r < results->rows.size(); ++r) {
      if (results->rows[r][static_cast<size_t>(results->Column("sample"))] != kDamaged.str())
        continue;
      for (const char* col : {"requests_completed", "input_tps", "ttft_p50_s", "peak_gpu_mib"})
        EXPECT_EQ(results->rows[r][static_cast<size_t>(results->Column(col))], "") << col;
      EXPECT_EQ(results->rows[r][static_cast<size_t>(results->Column("verdict"))],
                "invalid_evidence");
    }
    for (const nlohmann::json& p : outcome_.summary["points"]) {
      if (p["layout"]["label"] != kPp8.Label()) continue;
      EXPECT_EQ(p["repeats"], 1);  // repeat 2 only: 8 x 16,000 tokens over 8.1 s
      EXPECT_NEAR(p["input_tps_median"].get<double>(), 8 * 16000 / 8.1, 1e-6);
      EXPECT_LT(p["peak_gpu_mib"].get<double>(), 85651);
    }
    for (const nlohmann::json& v : outcome_.summary["decision"]["verdicts"]) {
      if (v["layout"]["label"] != kPp8.Label()) continue;
      EXPECT_FALSE(v["qualifies"].get<bool>());
      bool excluded = false;
      for (const std::string& e : Strings(v["exclusions"]))
        excluded |= e.find(kDamaged.str() + ": " + problem_start) != std::string::npos;
      EXPECT_TRUE(excluded) << v["exclusions"].dump(1);
    }
    EXPECT_NE(
        outcome_.markdown.find("- Evidence problem in " + kDamaged.str() + ": " + problem_start),
        std::string::npos)
        << outcome_.markdown;
  }

  std::string Raw() {
    Result<std::string> raw = ReadFile(paths().raw(kDamaged));
    EXPECT_TRUE(raw.ok());
    return raw.ok() ? *raw : "";
  }

  // Rewrites the damaged sample's records with `edit` applied.
  template <typename Edit>
  void EditRecords(Edit edit) {
    Result<std::vector<workload::RequestRecord>> records =
        evidence::ReadRecords(paths().raw(kDamaged));
    ASSERT_TRUE(records.ok());
    edit(*records);
    ASSERT_TRUE(WriteFileAtomic(paths().raw(kDamaged), evidence::RecordsToJsonl(*records)).ok());
  }

  // Rewrites `path` with the first `what` replaced by `with`.
  void ReplaceFirst(const std::string& path, const std::string& what, const std::string& with) {
    Result<std::string> text = ReadFile(path);
    ASSERT_TRUE(text.ok());
    std::string edited = *text;
    const size_t at = edited.find(what);
    ASSERT_NE(at, std::string::npos) << what << " in " << path;
    ASSERT_TRUE(WriteFileAtomic(path, edited.replace(at, what.size(), with)).ok());
  }

  ReportOutcome outcome_;
};

TEST_F(EvidenceChecksTest, ARawFileAppendedToItselfIsNotDoubleTheThroughput) {
  WriteHealthyRun();
  const std::string raw = Raw();
  ASSERT_TRUE(WriteFileAtomic(paths().raw(kDamaged), raw + raw).ok());
  const nlohmann::json sample = Report();
  // Each request twice: twice the concurrency in flight at once.
  EXPECT_EQ(Kinds(sample), (std::vector<std::string>{evidence::kDuplicateRequestId,
                                                     evidence::kMoreRecordsThanRequests,
                                                     evidence::kMoreInFlightThanConcurrency}));
  ExpectInvalid(sample, "raw/pp8-tp4-ep4_c8_r1.jsonl: duplicate_request_id: 8 records repeat");
}

TEST_F(EvidenceChecksTest, TwoHundredThousandCopiesOfARecordAreMoreThanWereSent) {
  WriteHealthyRun();
  const std::string raw = Raw();
  const std::string line = raw.substr(0, raw.find('\n') + 1);
  std::string copies;
  copies.reserve(line.size() * 200000);
  for (int i = 0; i < 200000; ++i) copies += line;
  ASSERT_TRUE(WriteFileAtomic(paths().raw(kDamaged), copies).ok());
  const nlohmann::json sample = Report();
  ExpectInvalid(sample, "raw/pp8-tp4-ep4_c8_r1.jsonl: duplicate_request_id: 199999 records");
  ASSERT_EQ(sample["invalid_evidence"].size(), 3u);
  EXPECT_EQ(sample["invalid_evidence"][1]["detail"],
            "200000 records, but the sample sends 8 requests (workload.requests)");
  EXPECT_EQ(sample["invalid_evidence"][2]["kind"], evidence::kMoreInFlightThanConcurrency);
}

TEST_F(EvidenceChecksTest, ASendAfterItsEndIsNotANegativeLatency) {
  WriteHealthyRun();
  EditRecords([](std::vector<workload::RequestRecord>& records) {
    records[2].send_ns = records[2].end_ns + 1000;
  });
  const nlohmann::json sample = Report();
  EXPECT_EQ(Kinds(sample), (std::vector<std::string>{evidence::kEndBeforeSend,
                                                     evidence::kFirstTokenOutsideRequest}));
  ExpectInvalid(sample, "raw/pp8-tp4-ep4_c8_r1.jsonl: end_before_send: 1 requests");
}

TEST_F(EvidenceChecksTest, AFirstTokenAfterTheEndIsNamed) {
  WriteHealthyRun();
  EditRecords([](std::vector<workload::RequestRecord>& records) {
    records[4].first_token_ns = records[4].end_ns + 1;
  });
  ExpectInvalid(Report(), "raw/pp8-tp4-ep4_c8_r1.jsonl: first_token_outside_request: 1 requests");
}

TEST_F(EvidenceChecksTest, AChunkAfterTheEndIsNamed) {
  WriteHealthyRun();
  EditRecords([](std::vector<workload::RequestRecord>& records) {
    const int64_t streamed_us = (records[3].end_ns - records[3].first_token_ns) / 1000;
    records[3].chunk_gaps_us = {streamed_us / 2, streamed_us / 2 + 2};
  });
  ExpectInvalid(Report(), "raw/pp8-tp4-ep4_c8_r1.jsonl: chunks_outside_request: 1 requests");
}

// A sample that says it was simulated in a run whose run.json says it was
// measured (or the reverse) was edited on one side: it is neither.
TEST_F(EvidenceChecksTest, ASampleThatContradictsRunJsonOnSimulationIsNamed) {
  WriteHealthyRun();
  evidence::BenchSummary bench;
  bench.sample = kDamaged.str();
  bench.simulated = false;
  ASSERT_TRUE(evidence::WriteBenchSummary(paths(), kDamaged, bench).ok());
  ExpectInvalid(Report(),
                "bench/pp8-tp4-ep4_c8_r1.json: simulated_contradicts_run: the sample says it was "
                "not simulated, but metadata/run.json says the run was simulated");
}

TEST_F(EvidenceChecksTest, AnEndAtTheEndOfTimeIsOutsideTheWindow) {
  WriteHealthyRun();
  EditRecords([](std::vector<workload::RequestRecord>& records) {
    records[7].end_ns = std::numeric_limits<int64_t>::max();
    records[6].send_ns = -4;
  });
  const nlohmann::json sample = Report();
  EXPECT_EQ(Kinds(sample), std::vector<std::string>{evidence::kTimeOutsideWindow});
  ExpectInvalid(sample, "raw/pp8-tp4-ep4_c8_r1.jsonl: time_outside_window: 2 requests");
}

TEST_F(EvidenceChecksTest, ImpossibleGpuMemoryIsNotAPeak) {
  WriteHealthyRun();
  ReplaceFirst(paths().gpu(kDamaged, "602"), "80200", "1e308");  // GPU 0 (stage 2) used
  const nlohmann::json sample = Report();
  EXPECT_EQ(Kinds(sample), std::vector<std::string>{evidence::kGpuMemoryOutOfRange});
  ExpectInvalid(sample, "gpu/pp8-tp4-ep4_c8_r1/602.csv: gpu_memory_out_of_range: 1 readings");
  for (const nlohmann::json& m : outcome_.summary["memory"]) {
    if (m["layout"]["label"] == kPp8.Label()) {
      EXPECT_LT(m["peak_gpu_mib"].get<double>(), 85651);
    }
  }
}

// nvidia-smi readings that are no memory size, in either column: each is
// named for its column, and none is read as part of the GPU's name.
TEST_F(EvidenceChecksTest, EveryBadReadingIsOutOfRangeInItsOwnColumn) {
  WriteHealthyRun();
  const std::string csv = paths().gpu(kDamaged, "602");
  Result<std::string> healthy = ReadFile(csv);
  ASSERT_TRUE(healthy.ok());
  const std::vector<std::pair<std::string, std::string>> shown = {
      {"-5", "-5"},
      {"nan", "nan"},
      {"inf", "inf"},
      {"1e5000", "inf"},
      {"0x10", "'0x10' is not a number"}};
  for (const auto& [bad, as] : shown) {
    for (const std::string column : {"80200", "85651"}) {  // GPU 0's memory.used, memory.total
      std::string text = *healthy;
      text.replace(text.find(column), column.size(), bad);
      ASSERT_TRUE(WriteFileAtomic(csv, text).ok());
      const nlohmann::json sample = Report();
      ASSERT_EQ(Kinds(sample), std::vector<std::string>{evidence::kGpuMemoryOutOfRange})
          << bad << " in " << column;
      const std::string detail = sample["invalid_evidence"][0]["detail"];
      const std::string named = column == "80200" ? "memory.used " : "memory.total ";
      EXPECT_NE(detail.find(named + as), std::string::npos) << detail;
    }
  }
  std::string comma = *healthy;  // a decimal comma: which reading it split cannot be told
  comma.replace(comma.find("80200"), 5, "1,5");
  ASSERT_TRUE(WriteFileAtomic(csv, comma).ok());
  const nlohmann::json sample = Report();
  ASSERT_EQ(Kinds(sample), std::vector<std::string>{evidence::kGpuMemoryOutOfRange});
  EXPECT_NE(std::string(sample["invalid_evidence"][0]["detail"])
                .find("GPU 0: memory.used and memory.total '1,5,85651' are not two numbers"),
            std::string::npos);
}

TEST_F(EvidenceChecksTest, MoreMemoryUsedThanTheGpuHasIsNamed) {
  WriteHealthyRun();
  ReplaceFirst(paths().gpu(kDamaged, "604"), "80600", "90000");  // GPU 0 (stage 6) used
  ExpectInvalid(Report(), "gpu/pp8-tp4-ep4_c8_r1/604.csv: gpu_memory_above_total: 1 GPUs");
}

TEST_F(EvidenceChecksTest, ConflictingVerdictsInTheManifestAreAProblemNotTheLastWord) {
  WriteHealthyRun();
  ASSERT_TRUE(evidence::AppendManifest(paths(), kDamaged, evidence::SampleState::kCompleted,
                                       {{"verdict", "ok"}})
                  .ok());
  ASSERT_TRUE(evidence::AppendManifest(paths(), kDamaged, evidence::SampleState::kCompleted,
                                       {{"verdict", "engine_died"}, {"detail", "node 603 exited"}})
                  .ok());
  ExpectInvalid(Report(),
                "manifest.jsonl: conflicting_verdicts: manifest.jsonl:9 says completed/ok, line 10 "
                "says completed/engine_died");
}

TEST_F(EvidenceChecksTest, ALogThatIsADirectoryIsNotScanned) {
  WriteHealthyRun();
  const std::string log = paths().service(kDamaged, "603");
  fs::remove(log);
  fs::create_directory(log);
  ExpectInvalid(Report(),
                "service/pp8-tp4-ep4_c8_r1/603.log: not_a_regular_file: is a directory, expected "
                "a regular file");
  EXPECT_EQ(outcome_.markdown.find("every node's log scanned"), std::string::npos);
}

TEST_F(EvidenceChecksTest, ALogThatIsAFifoIsRefusedWithoutBlocking) {
  WriteHealthyRun();
  const std::string log = paths().service(kDamaged, "601");
  fs::remove(log);
  ASSERT_EQ(::mkfifo(log.c_str(), 0600), 0) << std::strerror(errno);
  ExpectInvalid(Report(),
                "service/pp8-tp4-ep4_c8_r1/601.log: not_a_regular_file: is a FIFO, expected a "
                "regular file");
}

TEST_F(EvidenceChecksTest, ALinkInTheRunIsRefusedNotFollowedAndNotQuoted) {
  WriteHealthyRun();
  const std::string outside = dir_ + "_outside.log";
  ASSERT_TRUE(WriteFileAtomic(outside, "Traceback (most recent call last)\nsecret=hunter2\n").ok());
  const std::string log = paths().service(kDamaged, "602");
  fs::remove(log);
  fs::create_symlink(outside, log);
  const nlohmann::json sample = Report();
  fs::remove(outside);
  ExpectInvalid(sample,
                "service/pp8-tp4-ep4_c8_r1/602.log: not_a_regular_file: is a symbolic link");
  EXPECT_EQ(sample["findings"], 0);
  EXPECT_EQ(outcome_.markdown.find("hunter2"), std::string::npos);
  EXPECT_EQ(outcome_.markdown.find("Traceback"), std::string::npos);
}

// A read does not follow a file's own link; a linked folder above it would
// be passed through, so it is refused before anything in it is read.
TEST_F(EvidenceChecksTest, ALinkedSampleFolderIsRefusedNotReadThrough) {
  WriteHealthyRun();
  const std::string folder = dir_ + "/service/" + kDamaged.str();
  const std::string outside = dir_ + "_outside";
  fs::rename(folder, outside);
  ASSERT_TRUE(WriteFileAtomic(outside + "/603.log", "Traceback (most recent call last)\n").ok());
  fs::create_directory_symlink(outside, folder);
  const nlohmann::json sample = Report();
  fs::remove_all(outside);
  ExpectInvalid(sample, "service/pp8-tp4-ep4_c8_r1/: not_a_regular_file: is a symbolic link");
  EXPECT_EQ(sample["findings"], 0);
}

TEST_F(EvidenceChecksTest, AMissingBenchSummaryIsNamed) {
  WriteHealthyRun();
  fs::remove(paths().bench(kDamaged));
  ExpectInvalid(Report(), "bench/pp8-tp4-ep4_c8_r1.json: bench_summary_missing: ");
}

TEST_F(EvidenceChecksTest, ACorruptBenchSummaryIsNamed) {
  WriteHealthyRun();
  ASSERT_TRUE(WriteFileAtomic(paths().bench(kDamaged), "{\"sample\": \"pp8-tp4").ok());
  ExpectInvalid(Report(), "bench/pp8-tp4-ep4_c8_r1.json: bench_summary_corrupt: not valid JSON");
}

// An archived run: the report is built and returned, nothing is written, and
// the outcome says why. As root, chmod does not stop writes, so the run
// directory is bind-mounted read-only in a mount namespace of this process.
TEST_F(EvidenceChecksTest, AReadOnlyRunIsReportedWithoutWriting) {
  WriteHealthyRun();
  const fs::perms kWrite =
      fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write;
  if (::geteuid() != 0) {
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      fs::permissions(e.path(), kWrite, fs::perm_options::remove);
    fs::permissions(dir_, kWrite, fs::perm_options::remove);
  } else if (::unshare(CLONE_NEWNS) != 0 ||
             ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
             ::mount(dir_.c_str(), dir_.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
             ::mount(nullptr, dir_.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) !=
                 0) {
    GTEST_SKIP() << "cannot make a read-only bind mount here (" << std::strerror(errno)
                 << "): no way to make a directory read-only for root";
  }
  Result<ReportOutcome> out = BuildReport(dir_);
  const bool wrote = fs::exists(dir_ + "/report.md");
  if (::geteuid() == 0) {
    ::umount2(dir_.c_str(), MNT_DETACH);
  } else {
    fs::permissions(dir_, fs::perms::owner_write, fs::perm_options::add);
    for (const auto& e : fs::recursive_directory_iterator(dir_))
      fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  }
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_FALSE(wrote);
  EXPECT_TRUE(out->written.empty());
  EXPECT_EQ(out->not_written, ::geteuid() == 0 ? "Read-only file system" : "Permission denied");
  EXPECT_EQ(out->exit_code, kReportOk);
  EXPECT_NE(out->markdown.find(kPp4.Label()), std::string::npos);
}

}  // namespace
}  // namespace ppsearch::report
